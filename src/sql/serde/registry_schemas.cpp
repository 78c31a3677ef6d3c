// The schemas ksqlDB registers for its columns, derived as Connect's AvroData, JsonSchemaData and
// ProtobufData print the Connect schema ksqlDB builds (every field optional; the root made
// required). docs/sql/engine.md (Formats) lists the details not confirmed against ksqlDB.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "sql/binder/sql_error.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {

namespace {

using OJson = nlohmann::ordered_json;

thread_local std::string current_url;

constexpr const char* kAvroDefaultName = "io.confluent.ksql.avro_schemas.KsqlDataSourceSchema";

// Avro names hold no dots: ksqlDB's avroCompatibleFieldName.
std::string avro_field_name(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (c == '.') c = '_';
  return out;
}

// Connect's logical types as AvroData prints them (its connect.* properties, then logicalType).
OJson avro_logical(const char* base, const char* connect_name, const char* logical) {
  return OJson{{"type", base},
               {"connect.version", 1},
               {"connect.name", std::string("org.apache.kafka.connect.data.") + connect_name},
               {"logicalType", logical}};
}

// AvroData's printing of ksqlDB's schema named `full_name` (namespace.Name): nested records are
// named <full name>_<FIELD> (ksqlDB's AvroSchemas) and, sharing the root's namespace, printed by
// their short names.
class AvroWriter {
 public:
  explicit AvroWriter(const std::string& full_name) {
    const size_t dot = full_name.rfind('.');
    if (dot != std::string::npos) ns_ = full_name.substr(0, dot);
    name_ = dot == std::string::npos ? full_name : full_name.substr(dot + 1);
  }

  // The root record carries the namespace; a single unwrapped column is its type at the root.
  std::string schema(const std::vector<Column>& columns, bool wrapped) {
    std::vector<SqlField> fields;
    if (wrapped) {
      for (const auto& c : columns) fields.push_back({c.name, c.type});
    } else if (columns.at(0).type->base() == SqlBaseType::kStruct) {
      fields = columns[0].type->fields();
    } else {
      return type(*columns[0].type, name_).dump();
    }
    OJson root{{"type", "record"}, {"name", name_}};
    if (!ns_.empty()) root["namespace"] = ns_;
    root["fields"] = OJson::array();
    for (const auto& f : fields) root["fields"].push_back(field(f.name, *f.type, name_));
    root["connect.name"] = full(name_);
    return root.dump();
  }

 private:
  std::string full(const std::string& name) const { return ns_.empty() ? name : ns_ + "." + name; }

  OJson optional(const SqlType& t, const std::string& name) {
    return OJson::array({"null", type(t, name)});
  }

  OJson field(const std::string& field, const SqlType& t, const std::string& context) {
    return OJson{{"name", avro_field_name(field)},
                 {"type", optional(t, context + "_" + field)},
                 {"default", nullptr}};
  }

  OJson record(const std::vector<SqlField>& fields, const std::string& name) {
    OJson out{{"type", "record"}, {"name", name}, {"fields", OJson::array()}};
    for (const auto& f : fields) out["fields"].push_back(field(f.name, *f.type, name));
    out["connect.name"] = full(name);
    return out;
  }

  OJson type(const SqlType& t, const std::string& name) {
    switch (t.base()) {
      case SqlBaseType::kBoolean:
        return "boolean";
      case SqlBaseType::kInteger:
        return "int";
      case SqlBaseType::kBigint:
        return "long";
      case SqlBaseType::kDouble:
        return "double";
      case SqlBaseType::kString:
        return "string";
      case SqlBaseType::kBytes:
        return "bytes";
      case SqlBaseType::kDecimal: {
        const std::string p = std::to_string(t.precision()), s = std::to_string(t.scale());
        return OJson{{"type", "bytes"},
                     {"scale", t.scale()},
                     {"precision", t.precision()},
                     {"connect.version", 1},
                     {"connect.parameters", {{"scale", s}, {"connect.decimal.precision", p}}},
                     {"connect.name", "org.apache.kafka.connect.data.Decimal"},
                     {"logicalType", "decimal"}};
      }
      case SqlBaseType::kDate:
        return avro_logical("int", "Date", "date");
      case SqlBaseType::kTime:
        return avro_logical("int", "Time", "time-millis");
      case SqlBaseType::kTimestamp:
        return avro_logical("long", "Timestamp", "timestamp-millis");
      case SqlBaseType::kArray:
        return OJson{{"type", "array"}, {"items", optional(*t.element(), name)}};
      case SqlBaseType::kMap: {
        // Connect's optional map keys make AvroData write an array of MapEntry records.
        OJson entry{{"type", "record"}, {"name", name}, {"fields", OJson::array()}};
        for (const auto& [field, part, suffix] :
             {std::tuple{"key", t.key().get(), "_MapKey"},
              std::tuple{"value", t.element().get(), "_MapValue"}})
          entry["fields"].push_back(OJson{
              {"name", field}, {"type", optional(*part, name + suffix)}, {"default", nullptr}});
        entry["connect.internal.type"] = "MapEntry";
        return OJson{{"type", "array"}, {"items", entry}, {"connect.name", full(name)}};
      }
      case SqlBaseType::kStruct:
        return record(t.fields(), name);
    }
    return "null";
  }

  std::string ns_, name_;
};

// JSON_SR: Connect's JsonSchemaData (connect.index orders the fields; optional is a oneOf).
OJson json_type(const SqlType& type);

OJson json_optional(const SqlType& type) {
  return OJson{{"oneOf", OJson::array({OJson{{"type", "null"}}, json_type(type)})}};
}

OJson json_logical(const char* base, const char* connect_name, const char* connect_type) {
  return OJson{{"type", base},
               {"title", std::string("org.apache.kafka.connect.data.") + connect_name},
               {"connect.version", 1},
               {"connect.type", connect_type}};
}

// Java's String.hashCode over the name's UTF-16 code units.
uint32_t java_string_hash(const std::string& utf8) {
  uint32_t h = 0;
  auto add = [&h](uint32_t unit) { h = 31 * h + unit; };
  for (size_t i = 0; i < utf8.size();) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    uint32_t cp = extra == 0 ? c : c & (0x3F >> extra);
    for (int k = 1; k <= extra && i + k < utf8.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
    i += 1 + extra;
    if (cp >= 0x10000) {
      add(0xD800 + ((cp - 0x10000) >> 10));
      add(0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      add(cp);
    }
  }
  return h;
}

// The order a java.util.HashMap filled one put at a time iterates its keys in: by bucket of the
// spread hash in a table of 16 doubled past 0.75 full, then in insertion order. The JSON schema
// library behind JsonSchemaData keeps an object's properties in one, so ksqlDB's registered
// schemas list them so (confirmed against its query-validation plans).
std::vector<size_t> java_hash_map_order(const std::vector<std::string>& keys) {
  size_t capacity = 16;
  while (static_cast<double>(keys.size()) > 0.75 * static_cast<double>(capacity)) capacity *= 2;
  std::vector<std::pair<size_t, size_t>> placed;  // bucket, insertion index
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint32_t h = java_string_hash(keys[i]);
    placed.emplace_back((h ^ (h >> 16)) & (capacity - 1), i);
  }
  std::stable_sort(placed.begin(), placed.end());
  std::vector<size_t> out;
  for (const auto& [bucket, i] : placed) out.push_back(i);
  return out;
}

OJson json_object(const std::vector<std::pair<std::string, const SqlType*>>& fields) {
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.first);
  OJson properties = OJson::object();
  for (size_t index : java_hash_map_order(names)) {
    OJson field{{"connect.index", index}};
    field.update(json_optional(*fields[index].second));
    properties[fields[index].first] = field;
  }
  return OJson{{"type", "object"}, {"properties", properties}};
}

OJson json_type(const SqlType& type) {
  switch (type.base()) {
    case SqlBaseType::kBoolean:
      return {{"type", "boolean"}};
    case SqlBaseType::kInteger:
      return {{"type", "integer"}, {"connect.type", "int32"}};
    case SqlBaseType::kBigint:
      return {{"type", "integer"}, {"connect.type", "int64"}};
    case SqlBaseType::kDouble:
      return {{"type", "number"}, {"connect.type", "float64"}};
    case SqlBaseType::kString:
      return {{"type", "string"}};
    case SqlBaseType::kBytes:
      return {{"type", "string"}, {"connect.type", "bytes"}};
    case SqlBaseType::kDecimal: {
      OJson out = json_logical("number", "Decimal", "bytes");
      out["connect.parameters"] = {{"scale", std::to_string(type.scale())},
                                   {"connect.decimal.precision", std::to_string(type.precision())}};
      return out;
    }
    case SqlBaseType::kDate:
      return json_logical("integer", "Date", "int32");
    case SqlBaseType::kTime:
      return json_logical("integer", "Time", "int32");
    case SqlBaseType::kTimestamp:
      return json_logical("integer", "Timestamp", "int64");
    case SqlBaseType::kArray:
      return {{"type", "array"}, {"items", json_optional(*type.element())}};
    case SqlBaseType::kMap:
      return {{"type", "object"},
              {"additionalProperties", json_optional(*type.element())},
              {"connect.type", "map"}};
    case SqlBaseType::kStruct: {
      std::vector<std::pair<std::string, const SqlType*>> fields;
      for (const auto& f : type.fields()) fields.emplace_back(f.name, f.type.get());
      return json_object(fields);
    }
  }
  return {};
}

std::string json_schema(const std::vector<Column>& columns, bool wrapped) {
  if (!wrapped) return json_type(*columns.at(0).type).dump();
  std::vector<std::pair<std::string, const SqlType*>> fields;
  for (const auto& c : columns) fields.emplace_back(c.name, c.type.get());
  return json_object(fields).dump();
}

// PROTOBUF: ProtobufData's text. Unnamed structs are messages ConnectDefault<n>, numbered as
// met depth first, each nested in the message that uses it; a named root (*_SCHEMA_FULL_NAME,
// package.Message) leaves the numbers to the nested ones. With a nullable representation, fields
// say presence: OPTIONAL as proto3 `optional`, WRAPPER as google.protobuf's wrapper messages.
class ProtoWriter {
 public:
  explicit ProtoWriter(const RegistrySide& side) : nullable_(side.protobuf_nullable) {
    // As ksqlDB, a ConnectDefault name is the default's, not a chosen one.
    if (!side.full_name.empty() && !side.full_name.starts_with("ConnectDefault")) {
      const size_t dot = side.full_name.rfind('.');
      if (dot != std::string::npos) package_ = side.full_name.substr(0, dot);
      root_name_ = side.full_name.substr(dot == std::string::npos ? 0 : dot + 1);
    }
  }

  std::string file(const std::vector<Column>& columns) {
    std::vector<std::pair<std::string, const SqlType*>> fields;
    for (const auto& c : columns) fields.emplace_back(c.name, c.type.get());
    const std::string body = message(fields, "", root_name_);
    std::string out = "syntax = \"proto3\";\n";
    if (!package_.empty()) out += "package " + package_ + ";\n";
    out += "\n";
    for (const auto& i : imports_) out += "import \"" + i + "\";\n";
    if (!imports_.empty()) out += "\n";
    return out + body;
  }

 private:
  std::string message(const std::vector<std::pair<std::string, const SqlType*>>& fields,
                      const std::string& indent, const std::string& given_name = "") {
    const std::string name =
        given_name.empty() ? "ConnectDefault" + std::to_string(++counter_) : given_name;
    std::string out = indent + "message " + name + " {\n", nested;
    int number = 0;
    for (const auto& [field, type] : fields) {
      std::string options;
      out += indent + "  " + field_type(*type, indent + "  ", nested, options) + " " + field +
             " = " + std::to_string(++number) + options + ";\n";
    }
    if (!nested.empty()) out += "\n" + nested;
    return out + indent + "}\n";
  }

  // A nullable scalar as WRAPPER writes it: google.protobuf's wrapper of the type.
  std::string wrapped(const std::string& scalar_type) {
    static const std::map<std::string, std::string> kWrappers = {
        {"bool", "BoolValue"},     {"int32", "Int32Value"},   {"int64", "Int64Value"},
        {"double", "DoubleValue"}, {"string", "StringValue"}, {"bytes", "BytesValue"}};
    const auto it = kWrappers.find(scalar_type);
    if (nullable_ != "WRAPPER" || it == kWrappers.end()) return scalar_type;
    use("google/protobuf/wrappers.proto");
    return "google.protobuf." + it->second;
  }

  std::string scalar(const SqlType& type, const std::string& indent, std::string& nested,
                     std::string& options) {
    switch (type.base()) {
      case SqlBaseType::kBoolean:
        return wrapped("bool");
      case SqlBaseType::kInteger:
        return wrapped("int32");
      case SqlBaseType::kBigint:
        return wrapped("int64");
      case SqlBaseType::kDouble:
        return wrapped("double");
      case SqlBaseType::kString:
        return wrapped("string");
      case SqlBaseType::kBytes:
        return wrapped("bytes");
      case SqlBaseType::kDecimal:
        // As Confluent's printer lays the option out (ksqlDB's plans): value before key, one
        // line each, and no import of confluent/meta.proto.
        use("confluent/type/decimal.proto");
        options = " [(confluent.field_meta) = {\n" + indent + "  params: [\n" +
                  decimal_param(indent, type.precision(), "precision") + ",\n" +
                  decimal_param(indent, type.scale(), "scale") + "\n" + indent + "  ]\n" + indent +
                  "}]";
        return "confluent.type.Decimal";
      case SqlBaseType::kDate:
        use("google/type/date.proto");
        return "google.type.Date";
      case SqlBaseType::kTime:
        use("google/type/timeofday.proto");
        return "google.type.TimeOfDay";
      case SqlBaseType::kTimestamp:
        use("google/protobuf/timestamp.proto");
        return "google.protobuf.Timestamp";
      case SqlBaseType::kStruct: {
        std::vector<std::pair<std::string, const SqlType*>> fields;
        for (const auto& f : type.fields()) fields.emplace_back(f.name, f.type.get());
        const int number = counter_ + 1;
        nested += message(fields, indent);
        return "ConnectDefault" + std::to_string(number);
      }
      default:
        throw SqlError("The 'PROTOBUF' format does not support type '" + type.to_string() +
                       "' inside an ARRAY or MAP");
    }
  }

  std::string field_type(const SqlType& type, const std::string& indent, std::string& nested,
                         std::string& options) {
    if (type.base() == SqlBaseType::kArray)
      return "repeated " + scalar(*type.element(), indent, nested, options);
    if (type.base() == SqlBaseType::kMap) {
      // ProtobufData writes a map as repeated entry messages ConnectDefault<n>Entry {key, value}
      // (not map<K, V>), numbered as a struct is, before the value's own structs.
      const std::string entry = "ConnectDefault" + std::to_string(++counter_) + "Entry";
      nested +=
          message({{"key", type.key().get()}, {"value", type.element().get()}}, indent, entry);
      return "repeated " + entry;
    }
    const std::string t = scalar(type, indent, nested, options);
    return nullable_ == "OPTIONAL" ? "optional " + t : t;
  }

  // Imports in the order their types are met, as ProtobufData adds its dependencies.
  void use(const std::string& file) {
    if (std::find(imports_.begin(), imports_.end(), file) == imports_.end())
      imports_.push_back(file);
  }

  static std::string decimal_param(const std::string& indent, int value, const char* key) {
    return indent + "    {\n" + indent + "      value: \"" + std::to_string(value) + "\",\n" +
           indent + "      key: \"" + key + "\"\n" + indent + "    }";
  }

  std::string nullable_, package_, root_name_;
  int counter_ = 0;
  std::vector<std::string> imports_;
};

std::string columns_text(const std::vector<Column>& columns) {
  std::string out;
  for (const auto& c : columns)
    out += (out.empty() ? "" : ", ") + ("`" + c.name + "` " + c.type->to_string()) +
           (c.ns == ColumnNamespace::kKey ? " KEY" : "");
  return "[" + out + "]";
}

// ksqlDB's DefaultSchemaInjector for a C*AS with *_SCHEMA_ID: each of the sink's columns must be
// the pinned schema's column at its place (name as written, type).
void check_pinned_columns(registry::SchemaRegistryClient& client, const RegistrySide& side,
                          const std::string& format, const std::vector<Column>& columns, bool key) {
  const int32_t id = *side.schema_id;
  registry::SchemaInfo info;
  try {
    info = client.schema_by_id(id);
  } catch (const std::exception& e) {
    throw SqlError("Schema for message " + std::string(key ? "keys" : "values") + " on schema id " +
                   std::to_string(id) + " does not exist in the Schema Registry: " + e.what());
  }
  const auto pinned = registry_columns(info, format, key, false, side.full_name, true);
  std::vector<Column> differing;
  for (size_t i = 0; i < columns.size(); ++i)
    if (i >= pinned.size() || pinned[i].name != columns[i].name ||
        !pinned[i].type->equals(*columns[i].type))
      differing.push_back(columns[i]);
  if (!differing.empty())
    throw SqlError("The following " + std::string(key ? "key " : "value ") +
                   "columns are changed, missing or reordered: " + columns_text(differing) +
                   ". Schema from schema registry is " + columns_text(pinned));
}

}  // namespace

bool is_schema_registry_format(const std::string& format) {
  return format == "AVRO" || format == "JSON_SR" || format == "PROTOBUF";
}

SchemaRegistryScope::SchemaRegistryScope(std::string url) : previous_(std::move(current_url)) {
  current_url = std::move(url);
}

SchemaRegistryScope::~SchemaRegistryScope() {
  current_url = std::move(previous_);
}

const std::string& schema_registry_url() {
  return current_url;
}

std::shared_ptr<registry::SchemaRegistryClient> schema_registry_client(const std::string& url) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<registry::SchemaRegistryClient>> clients;
  std::lock_guard lock(mutex);
  auto& client = clients[url];
  if (!client) {
    registry::ClientConfig config;
    config.urls = registry::ClientConfig::from_properties({{"schema.registry.url", url}}).urls;
    client = std::make_shared<registry::SchemaRegistryClient>(config);
  }
  return client;
}

bool registry_wrapped(const Formats& formats, size_t columns, bool key) {
  const std::string& format = key ? formats.key_format : formats.value_format;
  if (format == "PROTOBUF" || columns != 1) return true;
  return !key && formats.wrap_single_value.value_or(true);
}

void register_schemas(const DataSource& source, const std::string& url, bool always) {
  for (bool key : {true, false}) {
    const std::string& format = key ? source.formats.key_format : source.formats.value_format;
    if (!is_schema_registry_format(format)) continue;
    if (url.empty())
      throw SqlError("Cannot create topic '" + source.topic + "' with format " + format +
                     " without configuring 'ksql.schema.registry.url'");
    std::vector<Column> columns;
    for (const auto& c : source.columns)
      if (c.ns == (key ? ColumnNamespace::kKey : ColumnNamespace::kValue)) columns.push_back(c);
    if (columns.empty()) continue;
    const std::string subject = source.topic + (key ? "-key" : "-value");
    auto client = schema_registry_client(url);
    const RegistrySide side = registry_side(source.formats, key);
    if (side.schema_id) {
      // A pinned schema is registered already; a C*AS's columns must fit it.
      if (always) check_pinned_columns(*client, side, format, columns, key);
      continue;
    }
    try {
      if (!always) try {
          client->latest(subject);
          continue;  // the subject has a schema: a CREATE leaves it
        } catch (const registry::RegistryClientError& e) {
          if (e.http_status() != 404) throw;
        }
      client->register_schema(
          subject, derived_schema(format, columns,
                                  registry_wrapped(source.formats, columns.size(), key), side));
    } catch (const registry::RegistryClientError& e) {
      throw SqlError(std::string("Could not register schema for topic: ") + e.what());
    }
  }
}

RegistrySide registry_side(const Formats& formats, bool key) {
  return key ? RegistrySide{formats.key_schema_full_name, formats.key_protobuf_nullable,
                            formats.key_schema_id}
             : RegistrySide{formats.value_schema_full_name, formats.value_protobuf_nullable,
                            formats.value_schema_id};
}

registry::SchemaInfo derived_schema(const std::string& format, const std::vector<Column>& columns,
                                    bool wrapped, const RegistrySide& side) {
  if (format == "AVRO")
    return {AvroWriter(side.full_name.empty() ? kAvroDefaultName : side.full_name)
                .schema(columns, wrapped),
            "AVRO",
            {}};
  // JSON_SR takes a full name but, as ksqlDB's JsonSchemaTranslator, does not print it.
  if (format == "JSON_SR") return {json_schema(columns, wrapped), "JSON", {}};
  return {ProtoWriter(side).file(columns), "PROTOBUF", {}};
}

}  // namespace oxbow::sql
