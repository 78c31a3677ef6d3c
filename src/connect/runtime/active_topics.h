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
  virtual ~ActiveTopics() = default;
  // `task` is the reporting task's id (-1 when unknown), as a distributed worker's status topic
  // records it.
  virtual void record(const std::string& connector, const std::string& topic, int task = -1);
  // Sorted by name.
  virtual std::vector<std::string> topics(const std::string& connector) const;
  virtual void reset(const std::string& connector);
  // How many resets there have been: a task that caches what it recorded starts over when it
  // changes.
  uint64_t resets() const { return resets_.load(std::memory_order_acquire); }

 protected:
  void countReset() { resets_.fetch_add(1, std::memory_order_release); }

 private:
  std::atomic<uint64_t> resets_{0};
  mutable std::mutex mutex_;
  std::map<std::string, std::set<std::string>, std::less<>> topics_;
};

}  // namespace oxbow::connect::runtime
