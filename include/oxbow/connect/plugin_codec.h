#pragma once
// Connect's C++ objects to plugin_abi.h's C structs and back, the same code on both sides of the
// boundary: the worker's adapters and a plugin's exports (plugin_export.h) include it. Everything
// is in an unnamed namespace on purpose: each plugin (and the worker) must keep its own copy of
// the converters below, and vague-linkage statics would be merged across dlopen()ed objects
// (GCC's STB_GNU_UNIQUE), tying one plugin's state to another's.
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oxbow/connect/config_def.h"
#include "oxbow/connect/connector.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"
#include "oxbow/connect/plugin_abi.h"
#include "oxbow/connect/record.h"
#include "oxbow/connect/sink.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect::plugin_codec {
namespace {

inline std::string_view view(oxbow_connect_bytes bytes) {
  return bytes.size == 0 ? std::string_view() : std::string_view(bytes.data, bytes.size);
}
inline std::string text(oxbow_connect_bytes bytes) {
  return std::string(view(bytes));
}
// A view of a string that outlives the call it is passed to.
inline oxbow_connect_bytes bytesOf(std::string_view text) {
  return oxbow_connect_bytes{text.data(), text.size()};
}

// Owns what a C struct handed across points into, until cleared.
class Arena {
 public:
  oxbow_connect_bytes keep(std::string text) {
    return bytesOf(strings_.emplace_back(std::move(text)));
  }
  template <class T>
  const T* keep(std::vector<T> items) {
    auto owned = std::make_shared<std::vector<T>>(std::move(items));
    arrays_.push_back(owned);
    return owned->data();
  }
  void clear() {
    strings_.clear();
    arrays_.clear();
  }

 private:
  std::deque<std::string> strings_;
  std::vector<std::shared_ptr<void>> arrays_;
};

// The converters of the data form (plugin_abi.h): one pair per thread, as a converter is used by
// one thread at a time.
struct JsonForms {
  JsonConverter envelope;
  JsonConverter schemaless;
  JsonForms() {
    envelope.configure({{"schemas.enable", "true"},
                        {"decimal.format", "BASE64"},
                        {"replace.null.with.default", "false"}},
                       false);
    schemaless.configure({{"schemas.enable", "false"}, {"replace.null.with.default", "false"}},
                         false);
  }
  static JsonForms& get() {
    thread_local JsonForms forms;
    return forms;
  }
};

inline std::string encodeData(const SchemaPtr& schema, const Value& value) {
  std::string out;
  if (!JsonForms::get().envelope.fromConnectData("", schema, value, out)) out.clear();
  return out;
}
inline SchemaAndValue decodeData(oxbow_connect_bytes bytes) {
  if (bytes.size == 0) return SchemaAndValue{};
  return JsonForms::get().envelope.toConnectData("", view(bytes));
}
inline std::string encodeMap(const ValueMap& map) {
  std::string out;
  JsonForms::get().schemaless.fromConnectData("", nullptr, Value(map), out);
  return out;
}
inline ValueMap decodeMap(oxbow_connect_bytes bytes) {
  if (bytes.size == 0) return {};
  SchemaAndValue read = JsonForms::get().schemaless.toConnectData("", view(bytes));
  if (read.value.kind() != Value::Kind::Map) {
    throw DataException("A source partition or offset must be a JSON object: " + text(bytes));
  }
  return read.value.asMap();
}

// ---- props ----

inline oxbow_connect_props encodeProps(const Props& props, Arena& arena) {
  std::vector<oxbow_connect_prop> entries;
  entries.reserve(props.size());
  for (const auto& [key, value] : props) entries.push_back({bytesOf(key), bytesOf(value)});
  size_t count = entries.size();
  return oxbow_connect_props{arena.keep(std::move(entries)), count};
}
inline Props decodeProps(oxbow_connect_props props) {
  Props out;
  for (size_t i = 0; i < props.count; ++i) {
    out[text(props.entries[i].key)] = text(props.entries[i].value);
  }
  return out;
}

// ---- records ----

inline oxbow_connect_record encodeRecord(const ConnectRecord& record, Arena& arena) {
  oxbow_connect_record out{};
  out.topic = bytesOf(record.topic());
  out.has_partition = record.kafkaPartition().has_value();
  out.partition = record.kafkaPartition().value_or(-1);
  out.has_timestamp = record.timestamp().has_value();
  out.timestamp = record.timestamp().value_or(0);
  out.timestamp_type = -1;
  out.kafka_offset = -1;
  out.key = arena.keep(encodeData(record.keySchema(), record.key()));
  out.value = arena.keep(encodeData(record.valueSchema(), record.value()));
  std::vector<oxbow_connect_header> headers;
  for (const Header& header : record.headers()) {
    headers.push_back({bytesOf(header.key), arena.keep(encodeData(header.schema, header.value))});
  }
  out.header_count = headers.size();
  out.headers = arena.keep(std::move(headers));
  return out;
}
inline oxbow_connect_record encodeSourceRecord(const SourceRecord& record, Arena& arena) {
  oxbow_connect_record out = encodeRecord(record, arena);
  out.source_partition = arena.keep(encodeMap(record.sourcePartition()));
  out.source_offset = arena.keep(encodeMap(record.sourceOffset()));
  return out;
}
inline oxbow_connect_record encodeSinkRecord(const SinkRecord& record, Arena& arena) {
  oxbow_connect_record out = encodeRecord(record, arena);
  out.kafka_offset = record.kafkaOffset();
  out.timestamp_type = static_cast<int32_t>(record.timestampType());
  return out;
}

inline Headers decodeHeaders(const oxbow_connect_record& record) {
  Headers headers;
  for (size_t i = 0; i < record.header_count; ++i) {
    headers.add(text(record.headers[i].key), decodeData(record.headers[i].value));
  }
  return headers;
}
inline std::optional<int32_t> partitionOf(const oxbow_connect_record& record) {
  return record.has_partition ? std::optional<int32_t>(record.partition) : std::nullopt;
}
inline std::optional<int64_t> timestampOf(const oxbow_connect_record& record) {
  return record.has_timestamp ? std::optional<int64_t>(record.timestamp) : std::nullopt;
}
inline SourceRecord decodeSourceRecord(const oxbow_connect_record& record) {
  SchemaAndValue key = decodeData(record.key);
  SchemaAndValue value = decodeData(record.value);
  return SourceRecord(decodeMap(record.source_partition), decodeMap(record.source_offset),
                      text(record.topic), partitionOf(record), key.schema, key.value, value.schema,
                      value.value, timestampOf(record), decodeHeaders(record));
}
inline SinkRecord decodeSinkRecord(const oxbow_connect_record& record) {
  SchemaAndValue key = decodeData(record.key);
  SchemaAndValue value = decodeData(record.value);
  return SinkRecord(text(record.topic), record.partition, key.schema, key.value, value.schema,
                    value.value, record.kafka_offset, timestampOf(record),
                    static_cast<TimestampType>(record.timestamp_type), decodeHeaders(record));
}

template <class R, class Encode>
oxbow_connect_records encodeRecords(const std::vector<R>& records, Arena& arena, Encode encode) {
  std::vector<oxbow_connect_record> out;
  out.reserve(records.size());
  for (const R& record : records) out.push_back(encode(record, arena));
  size_t count = out.size();
  return oxbow_connect_records{arena.keep(std::move(out)), count};
}

// ---- topic partitions and offsets ----

inline oxbow_connect_partitions encodePartitions(const std::vector<TopicPartition>& partitions,
                                                 Arena& arena) {
  std::vector<oxbow_connect_topic_partition> out;
  for (const TopicPartition& tp : partitions) out.push_back({bytesOf(tp.topic), tp.partition});
  size_t count = out.size();
  return oxbow_connect_partitions{arena.keep(std::move(out)), count};
}
inline std::vector<TopicPartition> decodePartitions(oxbow_connect_partitions partitions) {
  std::vector<TopicPartition> out;
  for (size_t i = 0; i < partitions.count; ++i) {
    out.push_back({text(partitions.partitions[i].topic), partitions.partitions[i].partition});
  }
  return out;
}

inline oxbow_connect_sink_offsets encodeSinkOffsets(const SinkOffsets& offsets, Arena& arena) {
  std::vector<oxbow_connect_sink_offset> out;
  for (const auto& [tp, offset] : offsets) {
    out.push_back({{bytesOf(tp.topic), tp.partition},
                   1,
                   offset.leaderEpoch.value_or(-1),
                   offset.offset,
                   bytesOf(offset.metadata)});
  }
  size_t count = out.size();
  return oxbow_connect_sink_offsets{arena.keep(std::move(out)), count};
}
inline SinkOffsets decodeSinkOffsets(oxbow_connect_sink_offsets offsets) {
  SinkOffsets out;
  for (size_t i = 0; i < offsets.count; ++i) {
    const oxbow_connect_sink_offset& o = offsets.offsets[i];
    OffsetAndMetadata value{o.offset, text(o.metadata), std::nullopt};
    if (o.leader_epoch >= 0) value.leaderEpoch = o.leader_epoch;
    out[{text(o.partition.topic), o.partition.partition}] = value;
  }
  return out;
}

// ---- config definitions and validation results ----

inline oxbow_connect_strings encodeStrings(const std::vector<std::string>& items, Arena& arena) {
  std::vector<oxbow_connect_bytes> out;
  for (const std::string& item : items) out.push_back(arena.keep(item));
  size_t count = out.size();
  return oxbow_connect_strings{arena.keep(std::move(out)), count};
}
inline std::vector<std::string> decodeStrings(oxbow_connect_strings strings) {
  std::vector<std::string> out;
  for (size_t i = 0; i < strings.count; ++i) out.push_back(text(strings.items[i]));
  return out;
}

inline oxbow_connect_config_keys encodeConfigDef(const ConfigDef& definition, Arena& arena) {
  std::vector<oxbow_connect_config_key> out;
  for (const ConfigDef::ConfigKey& key : definition.configKeys()) {
    oxbow_connect_config_key c{};
    c.name = arena.keep(key.name);
    c.type = bytesOf(ConfigDef::typeName(key.type));
    c.has_default = key.hasDefault();
    std::optional<std::string> defaultText =
        key.hasDefault() ? convertToString(key.defaultValue.value()) : std::nullopt;
    c.default_is_null = key.hasDefault() && !defaultText;
    c.default_value = arena.keep(defaultText.value_or(""));
    c.importance = bytesOf(ConfigDef::importanceName(key.importance));
    c.documentation = arena.keep(key.documentation);
    c.has_group = key.group.has_value();
    c.group = arena.keep(key.group.value_or(""));
    c.order_in_group = key.orderInGroup;
    c.width = bytesOf(ConfigDef::widthName(key.width));
    c.display_name = arena.keep(key.displayName);
    c.dependents = encodeStrings(key.dependents, arena);
    c.internal_config = key.internalConfig;
    out.push_back(c);
  }
  size_t count = out.size();
  return oxbow_connect_config_keys{arena.keep(std::move(out)), count};
}

template <class E>
E enumNamed(std::string_view name, std::initializer_list<E> all, std::string_view (*nameOf)(E)) {
  for (E e : all) {
    if (nameOf(e) == name) return e;
  }
  throw ConnectException("Unknown config enum value " + std::string(name));
}

inline ConfigDef decodeConfigDef(oxbow_connect_config_keys keys) {
  using T = ConfigDef::Type;
  using I = ConfigDef::Importance;
  using W = ConfigDef::Width;
  ConfigDef definition;
  for (size_t i = 0; i < keys.count; ++i) {
    const oxbow_connect_config_key& c = keys.keys[i];
    ConfigDef::ConfigKey key;
    key.name = text(c.name);
    key.type = enumNamed<T>(view(c.type),
                            {T::BOOLEAN, T::STRING, T::INT, T::SHORT, T::LONG, T::DOUBLE, T::LIST,
                             T::CLASS, T::PASSWORD},
                            &ConfigDef::typeName);
    if (c.has_default) {
      key.defaultValue =
          c.default_is_null ? DefaultValue(nullptr) : DefaultValue(text(c.default_value));
    }
    key.importance =
        enumNamed<I>(view(c.importance), {I::HIGH, I::MEDIUM, I::LOW}, &ConfigDef::importanceName);
    key.documentation = text(c.documentation);
    if (c.has_group) key.group = text(c.group);
    key.orderInGroup = c.order_in_group;
    key.width =
        enumNamed<W>(view(c.width), {W::NONE, W::SHORT, W::MEDIUM, W::LONG}, &ConfigDef::widthName);
    key.displayName = text(c.display_name);
    key.dependents = decodeStrings(c.dependents);
    key.internalConfig = c.internal_config != 0;
    definition.define(std::move(key));
  }
  return definition;
}

inline oxbow_connect_config_values encodeConfigValues(const std::vector<ConfigValue>& values,
                                                      Arena& arena) {
  std::vector<oxbow_connect_config_value> out;
  for (const ConfigValue& value : values) {
    oxbow_connect_config_value c{};
    c.name = arena.keep(value.name);
    std::optional<std::string> textValue = convertToString(value.value);
    c.has_value = textValue.has_value();
    c.value = arena.keep(textValue.value_or(""));
    c.visible = value.visible;
    std::vector<std::string> recommended;
    for (const ParsedValue& r : value.recommendedValues) {
      recommended.push_back(convertToString(r).value_or(""));
    }
    c.recommended_values = encodeStrings(recommended, arena);
    c.error_messages = encodeStrings(value.errorMessages, arena);
    out.push_back(c);
  }
  size_t count = out.size();
  return oxbow_connect_config_values{arena.keep(std::move(out)), count};
}
// Values come back as text: what the REST API shows of them is their text anyway.
inline std::vector<ConfigValue> decodeConfigValues(oxbow_connect_config_values values) {
  std::vector<ConfigValue> out;
  for (size_t i = 0; i < values.count; ++i) {
    const oxbow_connect_config_value& c = values.values[i];
    ConfigValue value;
    value.name = text(c.name);
    if (c.has_value) value.value = text(c.value);
    value.visible = c.visible != 0;
    for (const std::string& r : decodeStrings(c.recommended_values)) {
      value.recommendedValues.emplace_back(r);
    }
    value.errorMessages = decodeStrings(c.error_messages);
    out.push_back(std::move(value));
  }
  return out;
}

// ---- errors ----

// The code and message of the exception being handled, for an error out parameter.
inline int32_t errorCode(std::exception_ptr error, std::string& message) {
  try {
    std::rethrow_exception(error);
  } catch (const RetriableException& e) {
    message = e.what();
    return OXBOW_CONNECT_RETRIABLE_ERROR;
  } catch (const DataException& e) {
    message = e.what();
    return OXBOW_CONNECT_DATA_ERROR;
  } catch (const ConnectException& e) {
    message = e.what();
    return OXBOW_CONNECT_ERROR;
  } catch (const ConfigException& e) {
    message = e.what();
    return OXBOW_CONNECT_CONFIG_ERROR;
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown exception (not a std::exception)";
  }
  return OXBOW_CONNECT_OTHER_ERROR;
}

// Runs body(scratch) with the scratch's arena cleared first (what the last call handed out is
// released): an exception becomes its error code, its message kept in scratch.error for *error.
template <class Scratch, class F>
int32_t guardedCall(Scratch& scratch, oxbow_connect_bytes* error, F&& body) {
  scratch.arena.clear();
  try {
    body(scratch);
    return OXBOW_CONNECT_OK;
  } catch (...) {
    int32_t code = errorCode(std::current_exception(), scratch.error);
    if (error != nullptr) *error = bytesOf(scratch.error);
    return code;
  }
}

// The exception an error code stands for, thrown with its message.
[[noreturn]] inline void throwError(int32_t code, const std::string& message) {
  switch (code) {
    case OXBOW_CONNECT_RETRIABLE_ERROR:
      throw RetriableException(message);
    case OXBOW_CONNECT_DATA_ERROR:
      throw DataException(message);
    case OXBOW_CONNECT_CONFIG_ERROR:
      throw ConfigException(message);
    default:
      throw ConnectException(message);
  }
}

}  // namespace
}  // namespace oxbow::connect::plugin_codec
