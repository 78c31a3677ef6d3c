#include "connect/runtime/active_topics.h"

#include "connect/runtime/task_runner.h"

namespace oxbow::connect::runtime {

void ActiveTopics::record(const std::string& connector, const std::string& topic, int /*task*/) {
  std::lock_guard lock(mutex_);
  topics_[connector].insert(topic);
}

std::vector<std::string> ActiveTopics::topics(const std::string& connector) const {
  std::lock_guard lock(mutex_);
  auto found = topics_.find(connector);
  if (found == topics_.end()) return {};
  return std::vector<std::string>(found->second.begin(), found->second.end());
}

void ActiveTopics::reset(const std::string& connector) {
  std::lock_guard lock(mutex_);
  topics_.erase(connector);
  countReset();
}

void TaskRunner::recordActiveTopic(std::string_view topic) {
  if (activeTopics_ == nullptr) return;
  // As Kafka's WorkerTask, a task reports a topic once (until a reset), so that the worker-wide
  // set and its lock are not on every record's path.
  std::lock_guard lock(seenTopicsMutex_);
  const uint64_t resets = activeTopics_->resets();
  if (resets != seenTopicsResets_) {
    seenTopics_.clear();
    seenTopicsResets_ = resets;
  }
  if (seenTopics_.find(topic) != seenTopics_.end()) return;
  seenTopics_.emplace(topic);
  activeTopics_->record(connector_.name, std::string(topic), taskId_);
}

}  // namespace oxbow::connect::runtime
