#pragma once
// The broker's partitions as the transaction coordinator acts on them: allowing a producer's
// transactional writes and writing its commit or abort markers. A marker in `__consumer_offsets`
// also settles the offsets the transaction committed there.
#include "txn/transaction_coordinator.h"

namespace oxbow::group {
class GroupCoordinator;
}

namespace oxbow::broker {

class TopicRegistry;
class InternalTopic;

class TxnPartitions : public txn::PartitionWriter {
 public:
  TxnPartitions(TopicRegistry& topics, InternalTopic& offsets_topic,
                group::GroupCoordinator& groups)
      : topics_(topics), offsets_topic_(offsets_topic), groups_(groups) {}

  bool exists(const txn::TopicPartition& tp) override;
  txn::ErrorCode allow(const txn::TopicPartition& tp, int64_t producer_id, int16_t epoch) override;
  txn::ErrorCode write_marker(const txn::TopicPartition& tp, int64_t producer_id, int16_t epoch,
                              bool commit, int32_t coordinator_epoch) override;

 private:
  TopicRegistry& topics_;
  InternalTopic& offsets_topic_;
  group::GroupCoordinator& groups_;
};

}  // namespace oxbow::broker
