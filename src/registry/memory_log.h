#pragma once
// A SchemaLog kept in memory: each append is applied at once. For tests, and for a registry that
// needs no durability; the server's log is the `_schemas` topic.
#include <optional>
#include <string>
#include <vector>

#include "registry/service.h"

namespace oxbow::registry {

class MemoryLog : public SchemaLog {
 public:
  std::optional<std::string> append(const std::vector<LogRecord>& records) override {
    if (fail_writes) return std::string("writes fail (MemoryLog::fail_writes)");
    for (const auto& [key, value] : records) {
      written_keys.push_back(store::encode_key(key));
      state_.apply(key, value);
    }
    return std::nullopt;
  }
  const store::SchemaState& state() const override { return state_; }

  bool fail_writes = false;               // every append fails, as a store that is away
  std::vector<std::string> written_keys;  // the keys appended, encoded, in order

 private:
  store::SchemaState state_;
};

}  // namespace oxbow::registry
