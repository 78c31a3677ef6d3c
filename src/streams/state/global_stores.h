#pragma once
// The stores of GlobalKTables: one per instance, holding every partition of its topic, written by
// the instance's global updater (runtime/global_thread.h) and read by all stream threads' tasks.
// Kept in memory and rebuilt from the topic at every start (the topic is the changelog); reads
// and writes take a reader/writer lock, as two threads share them.
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "streams/state/key_value_store.h"

namespace oxbow::streams::detail {

class GlobalStores {
 public:
  // `name` made on first use.
  KeyValueStore& store(const std::string& name);
  KeyValueStore* find(const std::string& name);

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<KeyValueStore>> stores_;
};

}  // namespace oxbow::streams::detail
