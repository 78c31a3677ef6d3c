#include "broker/topics/txn_partitions.h"

#include "broker/topics/internal_topic.h"
#include "broker/topics/topic_registry.h"
#include "common/clock.h"
#include "group/coordinator.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

using txn::ErrorCode;

bool TxnPartitions::exists(const txn::TopicPartition& tp) {
  // A transaction may commit offsets before any group has: the offsets topic comes into being.
  if (tp.first == kOffsetsTopic && !offsets_topic_.ensure_exists()) return false;
  return topics_.partition(tp.first, tp.second) != nullptr;
}

ErrorCode TxnPartitions::allow(const txn::TopicPartition& tp, int64_t producer_id, int16_t epoch) {
  auto log = topics_.partition(tp.first, tp.second);
  if (!log) return ErrorCode::kUnknownTopicOrPartition;
  return log->allow_transaction(producer_id, epoch);
}

ErrorCode TxnPartitions::write_marker(const txn::TopicPartition& tp, int64_t producer_id,
                                      int16_t epoch, bool commit, int32_t coordinator_epoch) {
  auto log = topics_.partition(tp.first, tp.second);
  if (!log) return ErrorCode::kUnknownTopicOrPartition;
  auto result = log->write_marker(producer_id, epoch, commit, coordinator_epoch, now_ms());
  if (result.error == ErrorCode::kNone && result.wait_for_flush && !log->flush())
    return ErrorCode::kKafkaStorageError;
  if (result.error == ErrorCode::kNone && tp.first == kOffsetsTopic)
    groups_.complete_transaction(producer_id, commit);
  return result.error;
}

}  // namespace oxbow::broker
