#include "streams/app/streams_config.h"

#include <stdexcept>

#include "common/properties.h"

namespace oxbow::streams::detail {

namespace {

const std::string* find(const std::map<std::string, std::string>& config, const char* key) {
  auto it = config.find(key);
  return it == config.end() ? nullptr : &it->second;
}

// Kafka's class names are accepted with or without their package.
bool ends_with(const std::string& value, const std::string& suffix) {
  return value.size() >= suffix.size() &&
         value.compare(value.size() - suffix.size(), suffix.size(), suffix) == 0;
}

DeserializationPolicy deserialization_policy(const std::string& value) {
  auto ends_with = [&](const char* suffix) { return detail::ends_with(value, suffix); };
  if (ends_with("LogAndContinueExceptionHandler")) return DeserializationPolicy::kLogAndContinue;
  if (ends_with("LogAndFailExceptionHandler")) return DeserializationPolicy::kLogAndFail;
  throw std::invalid_argument(std::string(kDeserializationHandler) + ": unknown handler '" + value +
                              "' (LogAndContinueExceptionHandler or LogAndFailExceptionHandler)");
}

ProcessingExceptionHandler processing_handler(const std::string& value) {
  if (ends_with(value, "LogAndContinueProcessingExceptionHandler"))
    return LogAndContinueProcessingExceptionHandler;
  if (ends_with(value, "LogAndFailProcessingExceptionHandler"))
    return LogAndFailProcessingExceptionHandler;
  throw std::invalid_argument(std::string(kProcessingHandler) + ": unknown handler '" + value +
                              "' (LogAndFailProcessingExceptionHandler or "
                              "LogAndContinueProcessingExceptionHandler)");
}

}  // namespace

TaskConfig task_config_from(const std::map<std::string, std::string>& config) {
  TaskConfig out;
  if (auto* id = find(config, kApplicationId)) out.application_id = *id;
  if (out.application_id.empty()) out.application_id = "test-application";
  const std::string* cache = find(config, kCacheMaxBytes);
  if (!cache) cache = find(config, kCacheMaxBytesOld);
  if (cache) {
    auto n = parse_int64(*cache);
    if (!n || *n < 0)
      throw std::invalid_argument(std::string(kCacheMaxBytes) + ": '" + *cache +
                                  "' is not a number of bytes");
    out.cache_max_bytes = *n;
  }
  if (auto* store = find(config, kDefaultDslStore)) {
    if (*store == "rocksDB")
      out.default_store = StoreType::kRocksDb;
    else if (*store == "in_memory")
      out.default_store = StoreType::kInMemory;
    else
      throw std::invalid_argument(std::string(kDefaultDslStore) + ": '" + *store +
                                  "' is not one of rocksDB, in_memory");
  }
  if (auto* handler = find(config, kDeserializationHandler))
    out.on_deserialization_error = deserialization_policy(*handler);
  if (auto* handler = find(config, kProcessingHandler))
    out.on_processing_error = processing_handler(*handler);
  return out;
}

}  // namespace oxbow::streams::detail
