#include "connect/runtime/distributed/status_topics.h"

#include "connect/runtime/distributed/status_backing_store.h"
#include "connect/runtime/herder.h"

namespace oxbow::connect::runtime::distributed {

void StatusTopics::record(const std::string& connector, const std::string& topic, int task) {
  if (StatusBackingStore* store = store_.load(std::memory_order_acquire)) {
    store->putTopic(connector, topic, task);
  }
}

std::vector<std::string> StatusTopics::topics(const std::string& connector) const {
  StatusBackingStore* store = store_.load(std::memory_order_acquire);
  if (store == nullptr) throw ConflictException(kStarting);
  return store->topics(connector);
}

void StatusTopics::reset(const std::string& connector) {
  StatusBackingStore* store = store_.load(std::memory_order_acquire);
  if (store == nullptr) throw ConflictException(kStarting);
  store->resetTopics(connector);
  countReset();
}

}  // namespace oxbow::connect::runtime::distributed
