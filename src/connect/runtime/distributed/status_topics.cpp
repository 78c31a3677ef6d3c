#include "connect/runtime/distributed/status_topics.h"

#include "connect/runtime/distributed/status_backing_store.h"
#include "connect/runtime/herder.h"

namespace oxbow::connect::runtime::distributed {

void StatusTopics::record(const std::string& connector, const std::string& topic, int task) {
  if (store_ != nullptr) store_->putTopic(connector, topic, task);
}

std::vector<std::string> StatusTopics::topics(const std::string& connector) const {
  if (store_ == nullptr) throw ConflictException("The worker is starting");
  return store_->topics(connector);
}

void StatusTopics::reset(const std::string& connector) {
  if (store_ == nullptr) throw ConflictException("The worker is starting");
  store_->resetTopics(connector);
  countReset();
}

}  // namespace oxbow::connect::runtime::distributed
