#pragma once
// An internal topic (`__consumer_offsets`, `__transaction_state`) as a coordinator's KeyedLog:
// created on first use with its configured partition count, cleanup.policy=compact and no time
// retention.
#include <atomic>
#include <string>

#include "common/keyed_log.h"

namespace oxbow::broker {

class TopicRegistry;

inline constexpr const char* kOffsetsTopic = "__consumer_offsets";
inline constexpr const char* kTransactionStateTopic = "__transaction_state";

class InternalTopic : public KeyedLog {
 public:
  InternalTopic(TopicRegistry& topics, std::string name, int32_t partitions)
      : topics_(topics), name_(std::move(name)), partitions_(partitions) {}

  int32_t partitions() const override { return partitions_; }
  bool append(int32_t partition, const KeyedRecords& records) override;
  int16_t append_transactional(int32_t partition, const KeyedRecords& records, int64_t producer_id,
                               int16_t producer_epoch) override;
  void replay(const RecordVisitor& on_record, const MarkerVisitor& on_marker) override;
  // Creates the topic if it does not exist yet; false if that failed.
  bool ensure_exists();

 private:
  int16_t append_batch(int32_t partition, const KeyedRecords& records, int64_t producer_id,
                       int16_t producer_epoch);

  TopicRegistry& topics_;
  std::string name_;
  int32_t partitions_;
  std::atomic<bool> exists_{false};  // once created, never checked again on the commit path
};

}  // namespace oxbow::broker
