#include "sql/execution/processing_log.h"

#include <nlohmann/json.hpp>

namespace oxbow::sql {

std::string processing_log_json(const ProcessingLogEntry& e) {
  using nlohmann::json;
  using nlohmann::ordered_json;
  bool deserialization = e.type == ProcessingLogEntry::Type::kDeserializationError;
  ordered_json message;
  message["TYPE"] = static_cast<int>(e.type);
  message["DESERIALIZATIONERROR"] = deserialization ? ordered_json{{"TARGET", e.target},
                                                                   {"ERRORMESSAGE", e.message},
                                                                   {"RECORDB64", nullptr},
                                                                   {"CAUSE", json::array()},
                                                                   {"topic", e.topic}}
                                                    : ordered_json();
  message["RECORDPROCESSINGERROR"] = deserialization ? ordered_json()
                                                     : ordered_json{{"ERRORMESSAGE", e.message},
                                                                    {"RECORD", nullptr},
                                                                    {"CAUSE", json::array()}};
  for (const char* other : {"PRODUCTIONERROR", "SERIALIZATIONERROR", "KAFKASTREAMSTHREADERROR"})
    message[other] = nullptr;
  ordered_json entry;
  entry["LOGGER"] = e.logger;
  entry["LEVEL"] = "ERROR";
  entry["TIME"] = e.time_ms;
  entry["MESSAGE"] = std::move(message);
  return entry.dump();
}

void MemoryProcessingLog::log(const ProcessingLogEntry& entry) {
  std::lock_guard lock(mutex_);
  entries_.push_back(entry);
  if (entries_.size() > capacity_) entries_.pop_front();
}

std::vector<ProcessingLogEntry> MemoryProcessingLog::entries() const {
  std::lock_guard lock(mutex_);
  return {entries_.begin(), entries_.end()};
}

}  // namespace oxbow::sql
