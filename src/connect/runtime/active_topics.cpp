#include "connect/runtime/active_topics.h"

#include "connect/runtime/task_runner.h"

namespace oxbow::connect::runtime {

void ActiveTopics::record(const std::string& connector, const std::string& topic) {
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
}

void TaskRunner::recordActiveTopic(const std::string& topic) {
  if (activeTopics_ != nullptr) activeTopics_->record(connector_.name, topic);
}

}  // namespace oxbow::connect::runtime
