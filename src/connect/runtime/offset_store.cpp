// The offsets file: {"offsets":[{"key":["name",{...}],"value":{...}},...]}.
#include "connect/runtime/offset_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"

namespace oxbow::connect::runtime {

namespace {

// One converter per call: converters are single-threaded and this path is not hot.
std::unique_ptr<JsonConverter> schemaless() {
  auto converter = std::make_unique<JsonConverter>();
  converter->configure({{"schemas.enable", "false"}}, true);
  return converter;
}

std::string keyBytes(JsonConverter& json, const std::string& connector, const ValueMap& partition) {
  ValueList key{Value(connector), Value(partition)};
  return json.fromConnectData("", nullptr, Value(std::move(key))).value_or("null");
}

// The bytes our converter writes for the same data, whatever spacing the file had.
std::string canonical(JsonConverter& json, const std::string& text) {
  SchemaAndValue data = json.toConnectData("", text);
  return json.fromConnectData("", data.schema, data.value).value_or("null");
}

void writeAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ConnectException("Could not write " + path + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

FileOffsetStore::FileOffsetStore(std::string path) : path_(std::move(path)) {
  load();
}

void FileOffsetStore::load() {
  std::ifstream in(path_);
  if (!in) return;  // no offsets yet
  std::stringstream text;
  text << in.rdbuf();
  try {
    nlohmann::json document = nlohmann::json::parse(text.str());
    auto json = schemaless();
    for (const nlohmann::json& entry : document.at("offsets")) {
      entries_[canonical(*json, entry.at("key").dump())] =
          canonical(*json, entry.at("value").dump());
    }
  } catch (const std::exception& e) {
    throw ConnectException("Could not read offsets file " + path_ + ": " + e.what());
  }
}

void FileOffsetStore::save() const {
  nlohmann::json offsets = nlohmann::json::array();
  for (const auto& [key, value] : entries_) {
    offsets.push_back(
        {{"key", nlohmann::json::parse(key)}, {"value", nlohmann::json::parse(value)}});
  }
  std::string text = nlohmann::json{{"offsets", offsets}}.dump(2) + "\n";
  std::string temporary = path_ + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw ConnectException("Could not write " + temporary + ": " + std::strerror(errno));
  try {
    writeAll(fd, text, temporary);
    if (::fsync(fd) != 0) throw ConnectException("Could not sync " + temporary);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path_.c_str()) != 0) {
    throw ConnectException("Could not replace " + path_ + ": " + std::strerror(errno));
  }
}

std::optional<ValueMap> FileOffsetStore::offset(const std::string& connector,
                                                const ValueMap& partition) const {
  auto json = schemaless();
  std::string key = keyBytes(*json, connector, partition);
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  SchemaAndValue data = json->toConnectData("", it->second);
  if (data.value.kind() != Value::Kind::Map) return std::nullopt;
  return data.value.asMap();
}

void FileOffsetStore::commit(const std::string& connector,
                             const std::vector<std::pair<ValueMap, ValueMap>>& offsets) {
  auto json = schemaless();
  std::lock_guard lock(mutex_);
  for (const auto& [partition, offset] : offsets) {
    entries_[keyBytes(*json, connector, partition)] =
        json->fromConnectData("", nullptr, Value(offset)).value_or("null");
  }
  save();
}

std::vector<std::pair<ValueMap, ValueMap>> FileOffsetStore::connectorOffsets(
    const std::string& connector) const {
  auto json = schemaless();
  std::vector<std::pair<ValueMap, ValueMap>> out;
  std::lock_guard lock(mutex_);
  for (const auto& [keyText, valueText] : entries_) {
    Value key = json->toConnectData("", keyText).value;
    Value value = json->toConnectData("", valueText).value;
    // Keys are ["CONNECTOR", {partition}]; anything else in the file is not a connector's.
    if (key.kind() != Value::Kind::Array || key.asList().size() != 2 ||
        key.asList()[0].kind() != Value::Kind::String || key.asList()[0].asString() != connector ||
        key.asList()[1].kind() != Value::Kind::Map || value.kind() != Value::Kind::Map) {
      continue;
    }
    out.emplace_back(key.asList()[1].asMap(), value.asMap());
  }
  return out;
}

void FileOffsetStore::alter(const std::string& connector, const SourceOffsets& offsets) {
  auto json = schemaless();
  std::lock_guard lock(mutex_);
  for (const auto& [partition, offset] : offsets) {
    std::string key = keyBytes(*json, connector, partition);
    if (offset) {
      entries_[key] = json->fromConnectData("", nullptr, Value(*offset)).value_or("null");
    } else {
      entries_.erase(key);
    }
  }
  save();
}

size_t FileOffsetStore::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace oxbow::connect::runtime
