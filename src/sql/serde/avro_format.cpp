// AVRO rows: written through the registry library's serializer (which registers ksqlDB's derived
// schema under <topic>-key / <topic>-value on the first record), read with the writer's schema
// that each record's id names, its datum matched to the columns by name as ksqlDB's Connect
// translation matches them (case-insensitively; fields the columns lack are ignored, columns the
// datum lacks are NULL).
#include <map>
#include <mutex>
#include <span>

#include "oxbow/registry/serdes.h"
#include "registry/avro/binary.h"
#include "registry/avro/schema.h"
#include "sql/binder/sql_error.h"
#include "sql/serde/formats.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql::formats {

namespace {

using Json = nlohmann::json;
using Kind = Value::Kind;
namespace avro = registry::avro;

// Avro's JSON encoding holds bytes as a string whose code points are the bytes.
std::string code_points(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::string from_code_points(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if ((c & 0xE0) == 0xC0 && i + 1 < text.size()) {
      out += static_cast<char>(((c & 0x1F) << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F));
    } else {
      unreadable("Invalid Avro bytes: a code point above 255");
    }
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Json to_avro(const Value& v, const SqlType& type);

Json struct_to_avro(const Value& v, const SqlType& type) {
  Json out = Json::object();
  for (size_t i = 0; i < type.fields().size(); ++i) {
    std::string name = type.fields()[i].name;
    for (char& c : name)
      if (c == '.') c = '_';
    out[name] = to_avro(v.items().at(i), *type.fields()[i].type);
  }
  return out;
}

// Unions stay unwrapped: the serializer picks the one branch besides null that fits.
Json to_avro(const Value& v, const SqlType& type) {
  if (v.is_null()) return nullptr;
  switch (type.base()) {
    case SqlBaseType::kBoolean:
      return v.boolean();
    case SqlBaseType::kInteger:
      return v.integer();
    case SqlBaseType::kBigint:
    case SqlBaseType::kDate:
    case SqlBaseType::kTime:
    case SqlBaseType::kTimestamp:
      return v.bigint();
    case SqlBaseType::kDouble:
      return v.dbl();
    case SqlBaseType::kString:
      return v.text();
    case SqlBaseType::kBytes:
      return code_points(v.text());
    case SqlBaseType::kDecimal:
      return code_points(decimal_bytes(v.unscaled()));
    case SqlBaseType::kArray: {
      Json out = Json::array();
      for (const auto& e : v.items()) out.push_back(to_avro(e, *type.element()));
      return out;
    }
    case SqlBaseType::kMap: {
      Json out = Json::array();
      for (size_t i = 0; i + 1 < v.items().size(); i += 2)
        out.push_back({{"key", to_avro(v.items()[i], *type.key())},
                       {"value", to_avro(v.items()[i + 1], *type.element())}});
      return out;
    }
    case SqlBaseType::kStruct:
      return struct_to_avro(v, type);
  }
  return nullptr;
}

void from_avro(const avro::Node& node, const Json& datum, const SqlType& type, Value& out);

[[noreturn]] void mismatch(const avro::Node& node, const SqlType& type) {
  unreadable(std::string("Cannot read Avro ") + avro::kind_name(node.kind) + " as " +
             type.to_string());
}

// A record's fields into the struct's (or the row's) fields, by name ignoring case: `out` holds
// one value per field.
void record_fields(const avro::Node& node, const Json& datum, const std::vector<SqlField>& fields,
                   std::span<Value> out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string wanted = upper(fields[i].name);
    for (const auto& f : node.fields)
      if (upper(f.name) == wanted && datum.contains(f.name)) {
        from_avro(*f.type, datum[f.name], *fields[i].type, out[i]);
        break;
      }
  }
}

void map_from_avro(const avro::Node& node, const Json& datum, const SqlType& type, Value& out) {
  auto items = std::make_shared<std::vector<Value>>();
  SqlType string_type = *SqlType::string();
  if (node.kind == avro::Kind::kMap) {
    for (const auto& [k, e] : datum.items()) {
      items->emplace_back().set_string(k);
      from_avro(*node.values, e, *type.element(), items->emplace_back());
    }
  } else if (node.kind == avro::Kind::kArray && node.items->kind == avro::Kind::kRecord) {
    // Connect's MapEntry records: {key, value}.
    const avro::Node& entry = *node.items;
    if (entry.fields.size() != 2) mismatch(node, type);
    for (const auto& e : datum) {
      from_avro(*entry.fields[0].type, e.at(entry.fields[0].name), *type.key(),
                items->emplace_back());
      from_avro(*entry.fields[1].type, e.at(entry.fields[1].name), *type.element(),
                items->emplace_back());
    }
  } else {
    mismatch(node, type);
  }
  out.set_items(Kind::kMap, std::move(items));
}

void container_from_avro(const avro::Node& node, const Json& datum, const SqlType& type,
                         Value& out) {
  auto items = std::make_shared<std::vector<Value>>();
  if (type.base() == SqlBaseType::kArray) {
    if (node.kind != avro::Kind::kArray) mismatch(node, type);
    for (const auto& e : datum) from_avro(*node.items, e, *type.element(), items->emplace_back());
    return out.set_items(Kind::kArray, std::move(items));
  }
  if (type.base() == SqlBaseType::kMap) return map_from_avro(node, datum, type, out);
  if (node.kind != avro::Kind::kRecord) mismatch(node, type);
  items->resize(type.fields().size());
  record_fields(node, datum, type.fields(), *items);
  out.set_items(Kind::kStruct, std::move(items));
}

void decimal_from_avro(const avro::Node& node, const Json& datum, const SqlType& type, Value& out) {
  if (node.logical_type != "decimal") mismatch(node, type);
  __int128 v = decimal_from_bytes(from_code_points(datum.get<std::string>()));
  for (int s = node.scale; s < type.scale(); ++s) v *= 10;
  for (int s = node.scale; s > type.scale(); --s) v /= 10;
  out.set_decimal(v, type.scale());
}

void from_avro(const avro::Node& node, const Json& datum, const SqlType& type, Value& out) {
  if (datum.is_null()) return out.set_null();
  if (node.kind == avro::Kind::kUnion) {
    // Avro's JSON encoding wraps a union's value as {"<branch>": value}.
    if (!datum.is_object() || datum.size() != 1) unreadable("Invalid Avro union value");
    const auto wrapped = datum.begin();
    for (const avro::Node* b : node.branches)
      if (avro::branch_name(*b) == wrapped.key()) return from_avro(*b, wrapped.value(), type, out);
    unreadable("Invalid Avro union branch " + wrapped.key());
  }
  switch (type.base()) {
    case SqlBaseType::kBoolean:
      if (!datum.is_boolean()) mismatch(node, type);
      return out.set_boolean(datum.get<bool>());
    case SqlBaseType::kInteger:
      if (!datum.is_number()) mismatch(node, type);
      return out.set_integer(datum.get<int32_t>());
    case SqlBaseType::kBigint:
      if (!datum.is_number()) mismatch(node, type);
      return out.set_bigint(datum.get<int64_t>());
    case SqlBaseType::kDate:
    case SqlBaseType::kTime:
    case SqlBaseType::kTimestamp:
      if (!datum.is_number_integer()) mismatch(node, type);
      return out.set_time(type.base() == SqlBaseType::kDate   ? Kind::kDate
                          : type.base() == SqlBaseType::kTime ? Kind::kTime
                                                              : Kind::kTimestamp,
                          datum.get<int64_t>());
    case SqlBaseType::kDouble:
      if (!datum.is_number()) mismatch(node, type);
      return out.set_double(datum.get<double>());
    case SqlBaseType::kString:
      if (datum.is_string()) return out.set_string(datum.get<std::string>());
      return out.set_string(datum.dump());
    case SqlBaseType::kBytes: {
      if (!datum.is_string()) mismatch(node, type);
      std::string bytes = from_code_points(datum.get<std::string>());
      return out.set_text(Kind::kBytes, bytes.data(), bytes.size());
    }
    case SqlBaseType::kDecimal:
      if (!datum.is_string()) mismatch(node, type);
      return decimal_from_avro(node, datum, type, out);
    default:
      return container_from_avro(node, datum, type, out);
  }
}

// The writers' schemas by id, parsed once.
class AvroReader {
 public:
  explicit AvroReader(std::shared_ptr<registry::SchemaRegistryClient> client)
      : client_(std::move(client)) {}

  std::shared_ptr<const avro::Schema> writer(int32_t id) {
    std::lock_guard lock(mutex_);
    if (auto it = by_id_.find(id); it != by_id_.end()) return it->second;
    registry::SchemaInfo info;
    try {
      info = client_->schema_by_id(id);
    } catch (const std::exception& e) {
      unreadable("Error retrieving Avro schema for id " + std::to_string(id) + ": " + e.what());
    }
    if (info.type != "AVRO" || !info.references.empty())
      unreadable("Schema id " + std::to_string(id) + " is not an Avro schema ksqlDB can read");
    avro::ParseOptions options;
    options.validate_defaults = false;
    auto parsed = avro::parse(info.schema, options);
    if (!parsed) unreadable("Invalid Avro schema for id " + std::to_string(id));
    auto schema = std::make_shared<const avro::Schema>(std::move(*parsed.schema));
    return by_id_.emplace(id, schema).first->second;
  }

 private:
  std::shared_ptr<registry::SchemaRegistryClient> client_;
  std::mutex mutex_;
  std::map<int32_t, std::shared_ptr<const avro::Schema>> by_id_;
};

Row read_avro(AvroReader& reader, const std::vector<Column>& columns, bool wrapped,
              std::string_view bytes) {
  Row row(columns.size());
  try {
    const auto framed = registry::wire::parse(bytes);
    const auto schema = reader.writer(framed.schema_id);
    const Json datum = avro::decode(*schema, framed.payload);
    const avro::Node& root = schema->root();
    if (!wrapped) {
      if (!row.empty()) from_avro(root, datum, *columns[0].type, row[0]);
      return row;
    }
    if (root.kind != avro::Kind::kRecord) unreadable("Expected an Avro record");
    std::vector<SqlField> fields;
    for (const auto& c : columns) fields.push_back({c.name, c.type});
    row.resize(fields.size());
    record_fields(root, datum, fields, row);
  } catch (const registry::SerdeError& e) {
    unreadable(e.what());
  } catch (const avro::BinaryError& e) {
    unreadable(std::string("Error deserializing Avro message: ") + e.what());
  } catch (const Json::exception& e) {
    unreadable(std::string("Error deserializing Avro message: ") + e.what());
  }
  return row;
}

// A datum's record fields renamed to those of a pinned schema, matched ignoring case (columns
// may be upper-cased names of the schema's fields); a field the schema lacks is refused as ksqlDB
// refuses it. Fields the schema has besides take their defaults when encoded.
void conform(const avro::Node& node, Json& datum) {
  const avro::Node* n = &node;
  if (n->kind == avro::Kind::kUnion)
    for (const avro::Node* b : node.branches)
      if ((b->kind == avro::Kind::kRecord && datum.is_object()) ||
          (b->kind == avro::Kind::kArray && datum.is_array()))
        n = b;
  if (n->kind == avro::Kind::kRecord && datum.is_object()) {
    Json out = Json::object();
    for (auto& [name, value] : datum.items()) {
      const avro::Field* field = nullptr;
      for (const auto& f : n->fields)
        if (upper(f.name) == upper(name)) field = &f;
      if (!field) missing_in_pinned_schema(name);
      conform(*field->type, value);
      out[field->name] = std::move(value);
    }
    datum = std::move(out);
  } else if (n->kind == avro::Kind::kArray && datum.is_array()) {
    for (auto& item : datum) conform(*n->items, item);
  }
}

// Rows written with a pinned schema (*_SCHEMA_ID) under its id, as ksqlDB's use.schema.id.
class PinnedAvroWriter {
 public:
  PinnedAvroWriter(registry::SchemaRegistryClient& client, int32_t id) : id_(id) {
    avro::ParseOptions options;
    options.validate_defaults = false;
    auto parsed = avro::parse(pinned_schema(client, id, "AVRO").schema, options);
    if (!parsed) throw SqlError("The Avro schema of id " + std::to_string(id) + " does not parse");
    schema_ = std::make_shared<const avro::Schema>(std::move(*parsed.schema));
  }

  std::string write(Json datum) const {
    conform(schema_->root(), datum);
    try {
      return registry::wire::header(id_) + avro::encode(*schema_, datum);
    } catch (const avro::BinaryError& e) {
      throw streams::SerializationException(std::string("Unable to serialize record: ") + e.what());
    }
  }

 private:
  int32_t id_;
  std::shared_ptr<const avro::Schema> schema_;
};

}  // namespace

streams::Serde<Row> avro_serde(std::vector<Column> columns, bool key, bool wrapped,
                               const RegistrySide& side) {
  auto client = registry_client_or_throw("AVRO");
  std::shared_ptr<registry::Serializer> serializer;
  std::shared_ptr<const PinnedAvroWriter> pinned;
  if (side.schema_id) {
    pinned = std::make_shared<const PinnedAvroWriter>(*client, *side.schema_id);
  } else {
    const registry::SchemaInfo schema = derived_schema("AVRO", columns, wrapped, side);
    try {
      serializer = std::make_shared<registry::Serializer>(
          client, registry::SerdeConfig{}, registry::Format::kAvro, schema.schema, key);
    } catch (const registry::SerdeError& e) {
      // A column name Avro does not take (ksqlDB's message; the reason is our parser's).
      throw SqlError(std::string("Schema is not compatible with Avro: ") + e.what());
    }
  }
  auto reader = std::make_shared<AvroReader>(client);
  auto shared = std::make_shared<const std::vector<Column>>(std::move(columns));
  auto serialize = [serializer, pinned, shared, wrapped](std::string_view topic, const Row& row) {
    Json datum;
    if (!wrapped) {
      datum = row.empty() ? Json() : to_avro(row[0], *(*shared)[0].type);
    } else {
      datum = Json::object();
      for (size_t i = 0; i < shared->size() && i < row.size(); ++i) {
        std::string name = (*shared)[i].name;
        for (char& c : name)
          if (c == '.') c = '_';
        datum[name] = to_avro(row[i], *(*shared)[i].type);
      }
    }
    if (pinned) return pinned->write(std::move(datum));
    try {
      return serializer->serialize(topic, datum);
    } catch (const registry::SerdeError& e) {
      throw streams::SerializationException(e.what());
    }
  };
  auto deserialize = [reader, shared, wrapped](std::string_view, std::string_view bytes) {
    return read_avro(*reader, *shared, wrapped, bytes);
  };
  return streams::Serde<Row>(serialize, deserialize, "AVRO");
}

}  // namespace oxbow::sql::formats
