#pragma once
// Connect's records (ConnectRecord, SourceRecord, SinkRecord) and their headers: what a source
// task returns and a sink task is given, keys and values in Connect's data model.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oxbow/connect/schema.h"
#include "oxbow/connect/value.h"

namespace oxbow::connect {

struct Header {
  std::string key;
  SchemaPtr schema;
  Value value;
  bool operator==(const Header& other) const {
    return key == other.key && schemasEqual(schema, other.schema) && value == other.value;
  }
};

// A record's headers in order (ConnectHeaders); one key may appear more than once.
class Headers {
 public:
  Headers& add(std::string key, SchemaPtr schema, Value value);
  Headers& add(std::string key, const SchemaAndValue& schemaAndValue);
  // The last header of that key, or null.
  const Header* lastWithName(std::string_view key) const;
  std::vector<const Header*> allWithName(std::string_view key) const;
  Headers& remove(std::string_view key);
  Headers& clear() {
    headers_.clear();
    return *this;
  }
  size_t size() const { return headers_.size(); }
  bool empty() const { return headers_.empty(); }
  auto begin() const { return headers_.begin(); }
  auto end() const { return headers_.end(); }
  bool operator==(const Headers&) const = default;

 private:
  std::vector<Header> headers_;
};

// What every record has: the topic, perhaps a partition, key and value with their schemas, perhaps
// a timestamp, and headers.
class ConnectRecord {
 public:
  ConnectRecord(std::string topic, std::optional<int32_t> kafkaPartition, SchemaPtr keySchema,
                Value key, SchemaPtr valueSchema, Value value,
                std::optional<int64_t> timestamp = std::nullopt, Headers headers = {})
      : topic_(std::move(topic)),
        kafkaPartition_(kafkaPartition),
        keySchema_(std::move(keySchema)),
        key_(std::move(key)),
        valueSchema_(std::move(valueSchema)),
        value_(std::move(value)),
        timestamp_(timestamp),
        headers_(std::move(headers)) {}

  const std::string& topic() const { return topic_; }
  std::optional<int32_t> kafkaPartition() const { return kafkaPartition_; }
  const SchemaPtr& keySchema() const { return keySchema_; }
  const Value& key() const { return key_; }
  const SchemaPtr& valueSchema() const { return valueSchema_; }
  const Value& value() const { return value_; }
  std::optional<int64_t> timestamp() const { return timestamp_; }
  const Headers& headers() const { return headers_; }
  Headers& headers() { return headers_; }

  bool operator==(const ConnectRecord& other) const;
  std::string toString() const;

 private:
  std::string topic_;
  std::optional<int32_t> kafkaPartition_;
  SchemaPtr keySchema_;
  Value key_;
  SchemaPtr valueSchema_;
  Value value_;
  std::optional<int64_t> timestamp_;
  Headers headers_;
};

// A record a source task produced, with where it came from in the source system: its source
// partition and offset, maps the runtime stores in the offsets topic.
class SourceRecord : public ConnectRecord {
 public:
  SourceRecord(ValueMap sourcePartition, ValueMap sourceOffset, std::string topic,
               std::optional<int32_t> partition, SchemaPtr keySchema, Value key,
               SchemaPtr valueSchema, Value value, std::optional<int64_t> timestamp = std::nullopt,
               Headers headers = {})
      : ConnectRecord(std::move(topic), partition, std::move(keySchema), std::move(key),
                      std::move(valueSchema), std::move(value), timestamp, std::move(headers)),
        sourcePartition_(std::move(sourcePartition)),
        sourceOffset_(std::move(sourceOffset)) {}
  // The common case: no partition chosen, no key.
  SourceRecord(ValueMap sourcePartition, ValueMap sourceOffset, std::string topic,
               SchemaPtr valueSchema, Value value)
      : SourceRecord(std::move(sourcePartition), std::move(sourceOffset), std::move(topic),
                     std::nullopt, nullptr, Value(), std::move(valueSchema), std::move(value)) {}

  const ValueMap& sourcePartition() const { return sourcePartition_; }
  const ValueMap& sourceOffset() const { return sourceOffset_; }
  bool operator==(const SourceRecord& other) const;

 private:
  ValueMap sourcePartition_;
  ValueMap sourceOffset_;
};

// Kafka's TimestampType.
enum class TimestampType : int8_t { NO_TIMESTAMP_TYPE = -1, CREATE_TIME = 0, LOG_APPEND_TIME = 1 };

// A record a sink task is given: read from a topic partition at an offset.
class SinkRecord : public ConnectRecord {
 public:
  SinkRecord(std::string topic, int32_t partition, SchemaPtr keySchema, Value key,
             SchemaPtr valueSchema, Value value, int64_t kafkaOffset,
             std::optional<int64_t> timestamp = std::nullopt,
             TimestampType timestampType = TimestampType::NO_TIMESTAMP_TYPE, Headers headers = {})
      : ConnectRecord(std::move(topic), partition, std::move(keySchema), std::move(key),
                      std::move(valueSchema), std::move(value), timestamp, std::move(headers)),
        kafkaOffset_(kafkaOffset),
        timestampType_(timestampType) {}

  int64_t kafkaOffset() const { return kafkaOffset_; }
  TimestampType timestampType() const { return timestampType_; }
  bool operator==(const SinkRecord& other) const;

 private:
  int64_t kafkaOffset_;
  TimestampType timestampType_;
};

}  // namespace oxbow::connect
