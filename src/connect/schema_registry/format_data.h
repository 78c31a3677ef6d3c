#pragma once
// The part of each registry converter that knows its format (Confluent's AvroData, ProtobufData,
// JsonSchemaData): a Connect schema to the registry's schema and Connect values to the JSON the
// registry's serdes take; a writer's schema to a Connect schema and the serdes' JSON back to
// Connect values. Internal to connect/schema_registry/.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oxbow/connect/schema.h"
#include "oxbow/connect/value.h"
#include "oxbow/registry/client.h"

namespace oxbow::connect::registry_detail {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// How values of one Connect schema are written.
class Writer {
 public:
  virtual ~Writer() = default;
  // The schema text to register, and for Protobuf the message written (empty: the first).
  std::string schemaText;
  std::string message;
  // The value as the serializer's JSON; DataException when it does not fit.
  virtual Json write(const Value& value) const = 0;
};

// How values written with one writer's schema are read.
class Reader {
 public:
  virtual ~Reader() = default;
  SchemaPtr schema;
  // Whether values are read from the payload (the bytes after the schema id) rather than from the
  // deserializer's JSON.
  bool readsPayload = false;
  virtual Value read(const Json& value) const = 0;
  virtual Value readPayload(std::string_view payload) const;
};

class FormatData {
 public:
  virtual ~FormatData() = default;
  // DataException for a schema the format cannot carry.
  virtual std::unique_ptr<Writer> writer(const SchemaPtr& schema) const = 0;
  // `indexes`: for Protobuf, the message indexes naming the record's message. `version`: the
  // writer schema's version under the record's subject, which names the top-level Connect
  // schema's version when the schema itself carries none (as Confluent's converters do).
  virtual std::unique_ptr<Reader> reader(const registry::SchemaInfo& writer,
                                         const std::vector<int>& indexes,
                                         std::optional<int> version) const = 0;
  // The name the record subject strategies use for a writer's schema.
  virtual std::string recordName(const registry::SchemaInfo& writer,
                                 const std::vector<int>& indexes) const = 0;
};

std::unique_ptr<FormatData> avroData();
std::unique_ptr<FormatData> jsonSchemaData();
std::unique_ptr<FormatData> protobufData();

bool hasName(const Schema& schema, std::string_view name);
// A map whose keys are required strings (written as a JSON object, other maps as entry lists).
bool stringKeyed(const Schema& map);

// How a format's JSON differs: its bytes, whether a null takes the schema's default, and the name
// of the struct that stands for a union (its one non-null field is written).
struct JsonStyle {
  std::string (*bytes)(std::string_view);
  bool nullTakesDefault = false;
  std::string_view unionName;
};
// A number, boolean or string (Date and Time as their int, Timestamp as its long); nullopt for
// other types.
std::optional<Json> primitiveJson(const SchemaPtr& schema, const Value& value);
// The value as JSON: primitives as above, bytes and a Decimal's unscaled bytes through the style,
// lists as arrays, maps with string keys as objects and others as [{"key","value"}], structs as
// objects. DataException for a null where the schema allows none.
Json valueJson(const SchemaPtr& schema, const Value& value, const JsonStyle& style);

// Bytes as Avro's JSON carries them (each byte a code point 0-255, UTF-8 encoded) and back.
std::string latin1ToUtf8(std::string_view bytes);
std::string utf8ToLatin1(std::string_view text);

}  // namespace oxbow::connect::registry_detail
