// Records and their headers.
#include "oxbow/connect/record.h"

#include <algorithm>

namespace oxbow::connect {

Headers& Headers::add(std::string key, SchemaPtr schema, Value value) {
  headers_.push_back(Header{std::move(key), std::move(schema), std::move(value)});
  return *this;
}

Headers& Headers::add(std::string key, const SchemaAndValue& schemaAndValue) {
  return add(std::move(key), schemaAndValue.schema, schemaAndValue.value);
}

const Header* Headers::lastWithName(std::string_view key) const {
  for (auto it = headers_.rbegin(); it != headers_.rend(); ++it)
    if (it->key == key) return &*it;
  return nullptr;
}

std::vector<const Header*> Headers::allWithName(std::string_view key) const {
  std::vector<const Header*> found;
  for (const Header& header : headers_)
    if (header.key == key) found.push_back(&header);
  return found;
}

Headers& Headers::remove(std::string_view key) {
  std::erase_if(headers_, [&](const Header& header) { return header.key == key; });
  return *this;
}

bool ConnectRecord::operator==(const ConnectRecord& other) const {
  return topic_ == other.topic_ && kafkaPartition_ == other.kafkaPartition_ &&
         schemasEqual(keySchema_, other.keySchema_) && key_ == other.key_ &&
         schemasEqual(valueSchema_, other.valueSchema_) && value_ == other.value_ &&
         timestamp_ == other.timestamp_ && headers_ == other.headers_;
}

std::string ConnectRecord::toString() const {
  return "ConnectRecord{topic='" + topic_ +
         "', kafkaPartition=" + (kafkaPartition_ ? std::to_string(*kafkaPartition_) : "null") +
         ", key=" + key_.toString() +
         ", keySchema=" + (keySchema_ ? keySchema_->toString() : "null") +
         ", value=" + value_.toString() +
         ", valueSchema=" + (valueSchema_ ? valueSchema_->toString() : "null") +
         ", timestamp=" + (timestamp_ ? std::to_string(*timestamp_) : "null") + "}";
}

bool SourceRecord::operator==(const SourceRecord& other) const {
  return ConnectRecord::operator==(other) &&
         Value(sourcePartition_) == Value(other.sourcePartition_) &&
         Value(sourceOffset_) == Value(other.sourceOffset_);
}

bool SinkRecord::operator==(const SinkRecord& other) const {
  return ConnectRecord::operator==(other) && kafkaOffset_ == other.kafkaOffset_ &&
         timestampType_ == other.timestampType_;
}

}  // namespace oxbow::connect
