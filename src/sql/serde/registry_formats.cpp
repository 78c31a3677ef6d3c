// What the Schema Registry formats share (the registry of the thread's scope, DECIMAL's bytes)
// and JSON_SR: the JSON format's own text behind Confluent's 5-byte header.
#include <cctype>

#include "oxbow/registry/serdes.h"
#include "sql/binder/sql_error.h"
#include "sql/serde/formats.h"
#include "sql/serde/row_serde.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql::formats {

std::shared_ptr<registry::SchemaRegistryClient> registry_client_or_throw(
    const std::string& format) {
  const std::string& url = schema_registry_url();
  if (url.empty())
    throw SqlError("Cannot use format " + format +
                   " without configuring 'ksql.schema.registry.url'");
  return schema_registry_client(url);
}

registry::SchemaInfo pinned_schema(registry::SchemaRegistryClient& client, int32_t id,
                                   const std::string& format) {
  registry::SchemaInfo info;
  try {
    info = client.schema_by_id(id);
  } catch (const std::exception& e) {
    throw SqlError("Failed to fetch the schema of id " + std::to_string(id) +
                   " from the Schema Registry: " + e.what());
  }
  const std::string type = format == "JSON_SR" ? "JSON" : format;
  if (info.type != type)
    throw SqlError("Schema id " + std::to_string(id) + " is a " + info.type + " schema, not " +
                   type);
  if (!info.references.empty())
    throw SqlError("Schema id " + std::to_string(id) + " has references, which are not supported");
  return info;
}

void missing_in_pinned_schema(const std::string& field) {
  throw streams::SerializationException("Schema from Schema Registry misses field with name: " +
                                        field);
}

std::string decimal_bytes(__int128 unscaled) {
  // Java's BigInteger.toByteArray: the fewest big-endian bytes whose top bit is the sign.
  std::string out;
  auto bits = static_cast<unsigned __int128>(unscaled);
  for (int i = 15; i >= 0; --i) out += static_cast<char>(static_cast<uint8_t>(bits >> (8 * i)));
  size_t skip = 0;
  while (skip + 1 < out.size()) {
    const auto b = static_cast<uint8_t>(out[skip]), next = static_cast<uint8_t>(out[skip + 1]);
    if ((b == 0x00 && !(next & 0x80)) || (b == 0xFF && (next & 0x80)))
      ++skip;
    else
      break;
  }
  return out.substr(skip);
}

__int128 decimal_from_bytes(std::string_view bytes) {
  if (bytes.empty() || bytes.size() > 16) unreadable("Invalid decimal bytes");
  unsigned __int128 v =
      (static_cast<uint8_t>(bytes[0]) & 0x80) ? ~static_cast<unsigned __int128>(0) : 0;
  for (char c : bytes) v = (v << 8) | static_cast<uint8_t>(c);
  return static_cast<__int128>(v);
}

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// What a pinned JSON schema changes in a written object: the properties it has besides the
// columns, written as nulls (as ksqlDB's Connect struct of the pinned schema writes them), and
// the first column it lacks, which fails each record as ksqlDB's translator fails it.
struct PinnedJson {
  std::string extra;    // ,"name":null ...
  std::string missing;  // a column's name, or empty
};

PinnedJson pinned_json(const registry::SchemaInfo& info, const std::vector<Column>& columns) {
  PinnedJson out;
  const auto schema = nlohmann::json::parse(info.schema, nullptr, false);
  if (schema.is_discarded() || !schema.is_object() || !schema.contains("properties") ||
      !schema["properties"].is_object())
    return out;
  const auto& properties = schema["properties"];
  for (const auto& [name, property] : properties.items()) {
    bool known = false;
    for (const auto& c : columns) known = known || upper(c.name) == upper(name);
    if (!known) {
      out.extra += ",";
      append_json_string(name, out.extra);
      out.extra += ":null";
    }
  }
  for (const auto& c : columns) {
    bool found = false;
    for (const auto& [name, property] : properties.items())
      found = found || upper(c.name) == upper(name);
    if (!found && out.missing.empty()) out.missing = c.name;
  }
  return out;
}

}  // namespace

streams::Serde<Row> json_sr_serde(std::vector<Column> columns, bool key, bool wrapped,
                                  const RegistrySide& side) {
  auto client = registry_client_or_throw("JSON_SR");
  // A pinned schema's id heads the JSON of the columns.
  std::shared_ptr<registry::Serializer> serializer;
  PinnedJson pinned;
  if (side.schema_id) {
    const registry::SchemaInfo info = pinned_schema(*client, *side.schema_id, "JSON_SR");
    if (wrapped) pinned = pinned_json(info, columns);
  } else {
    const registry::SchemaInfo schema = derived_schema("JSON_SR", columns, wrapped, side);
    serializer = std::make_shared<registry::Serializer>(
        client, registry::SerdeConfig{}, registry::Format::kJson, schema.schema, key);
  }
  const std::optional<int32_t> pinned_id = side.schema_id;
  auto json = std::make_shared<streams::Serde<Row>>(json_serde(std::move(columns), wrapped));
  auto serialize = [serializer, json, pinned_id, pinned](std::string_view topic, const Row& row) {
    int32_t id = pinned_id.value_or(0);
    try {
      if (!pinned_id) id = serializer->schema_id(topic);
    } catch (const registry::SerdeError& e) {
      throw streams::SerializationException(e.what());
    }
    if (!pinned.missing.empty()) missing_in_pinned_schema(pinned.missing);
    std::string text = json->serialize(topic, row);
    if (!pinned.extra.empty() && text.size() >= 2 && text.back() == '}')
      text.insert(text.size() - 1, text == "{}" ? pinned.extra.substr(1) : pinned.extra);
    return registry::wire::header(id) + text;
  };
  auto deserialize = [json](std::string_view topic, std::string_view bytes) {
    std::string_view payload;
    try {
      payload = registry::wire::parse(bytes).payload;
    } catch (const registry::SerdeError& e) {
      unreadable(e.what());
    }
    return json->deserialize(topic, payload);
  };
  return streams::Serde<Row>(serialize, deserialize, "JSON_SR");
}

}  // namespace oxbow::sql::formats
