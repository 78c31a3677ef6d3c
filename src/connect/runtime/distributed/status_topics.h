#pragma once
// KIP-558's active topics in a distributed worker: kept in the status topic
// (status-topic-TOPIC:connector-NAME), so that every worker answers GET /connectors/NAME/topics
// for tasks that ran anywhere, and a reset on one worker is seen by all.
#include <atomic>
#include <string>
#include <vector>

#include "connect/runtime/active_topics.h"

namespace oxbow::connect::runtime::distributed {

class StatusBackingStore;

// The REST API's answer (409) until the worker has read its internal topics and joined its group.
inline constexpr const char* kStarting =
    "Cannot complete request momentarily: the worker is still starting (reading its internal "
    "topics and joining its group)";

class StatusTopics : public ActiveTopics {
 public:
  // Until then, reads and resets answer 409 (the worker is starting) and records are dropped.
  void attach(StatusBackingStore* store) { store_.store(store, std::memory_order_release); }

  void record(const std::string& connector, const std::string& topic, int task) override;
  std::vector<std::string> topics(const std::string& connector) const override;
  void reset(const std::string& connector) override;

 private:
  std::atomic<StatusBackingStore*> store_{nullptr};
};

}  // namespace oxbow::connect::runtime::distributed
