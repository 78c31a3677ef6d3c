#pragma once
// KIP-558's active topics: the topics each connector's tasks used since the connector was created
// or its topics last reset (a source task's records the broker acknowledged, a sink task's
// records consumed), kept in memory as a standalone worker keeps statuses. Thread-safe.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace oxbow::connect::runtime {

class ActiveTopics {
 public:
  void record(const std::string& connector, const std::string& topic);
  // Sorted by name.
  std::vector<std::string> topics(const std::string& connector) const;
  void reset(const std::string& connector);
  // How many resets there have been: a task that caches what it recorded starts over when it
  // changes.
  uint64_t resets() const { return resets_.load(std::memory_order_acquire); }

 private:
  std::atomic<uint64_t> resets_{0};
  mutable std::mutex mutex_;
  std::map<std::string, std::set<std::string>, std::less<>> topics_;
};

}  // namespace oxbow::connect::runtime
