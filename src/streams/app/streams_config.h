#pragma once
// Kafka Streams' configuration names and defaults, and reading them into what tasks use.
#include <map>
#include <string>

#include "streams/runtime/task.h"

namespace oxbow::streams::detail {

inline constexpr const char* kApplicationId = "application.id";
inline constexpr const char* kCacheMaxBytes = "statestore.cache.max.bytes";
inline constexpr const char* kCacheMaxBytesOld = "cache.max.bytes.buffering";  // before KIP-770
inline constexpr const char* kDeserializationHandler = "default.deserialization.exception.handler";
inline constexpr const char* kProcessingHandler = "processing.exception.handler";  // KIP-1033
inline constexpr const char* kDefaultDslStore = "default.dsl.store";  // rocksDB | in_memory
// Oxbow's one budget for every RocksDB store of a KafkaStreams instance (block cache, index and
// filter blocks, memtables); Kafka Streams has no such setting.
inline constexpr const char* kRocksDbMemoryMaxBytes = "rocksdb.memory.max.bytes";
inline constexpr int64_t kRocksDbMemoryDefault = 256LL << 20;

// Throws std::invalid_argument naming the setting for a value it cannot use.
TaskConfig task_config_from(const std::map<std::string, std::string>& config);

}  // namespace oxbow::streams::detail
