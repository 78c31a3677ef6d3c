#pragma once
// The internal topic `__consumer_offsets` as the group coordinator's OffsetLog: created on first
// use with offsets.topic.num.partitions partitions, cleanup.policy=compact and no time retention.
#include <atomic>

#include "group/coordinator.h"

namespace oxbow::broker {

class TopicRegistry;

inline constexpr const char* kOffsetsTopic = "__consumer_offsets";

class OffsetsTopic : public group::OffsetLog {
 public:
  OffsetsTopic(TopicRegistry& topics, int32_t partitions) : topics_(topics), partitions_(partitions) {}

  int32_t partitions() const override { return partitions_; }
  bool append(int32_t partition,
              const std::vector<std::pair<std::string, std::optional<std::string>>>& records) override;
  void replay(const std::function<void(std::string_view, std::optional<std::string_view>)>& visit) override;

 private:
  bool ensure_topic();

  TopicRegistry& topics_;
  int32_t partitions_;
  std::atomic<bool> exists_{false};  // once created, never checked again on the commit path
};

}  // namespace oxbow::broker
