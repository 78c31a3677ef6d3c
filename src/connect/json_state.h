#pragma once
// JsonConverter's configuration and schema caches, shared by its writing (json_write.cpp) and
// reading (json_read.cpp) halves.
#include <cstddef>
#include <string>
#include <unordered_map>

#include "oxbow/connect/json_converter.h"
#include "oxbow/connect/schema.h"

namespace oxbow::connect {

// Keys schemas by content, as Connect's caches do: equal schemas share an entry. The hash looks
// at the top level only; equality is deep (and immediate for the same object).
struct SchemaContentHash {
  size_t operator()(const SchemaPtr& schema) const;
};
struct SchemaContentEqual {
  bool operator()(const SchemaPtr& a, const SchemaPtr& b) const { return schemasEqual(a, b); }
};

struct JsonConverter::State {
  bool schemasEnabled = true;
  size_t cacheSize = 1000;
  DecimalFormat decimalFormat = DecimalFormat::BASE64;
  bool replaceNullWithDefault = true;

  // A schema to the text of its JSON form.
  std::unordered_map<SchemaPtr, std::string, SchemaContentHash, SchemaContentEqual> jsonSchemas;
  // The compact text of a schema's JSON form to the schema.
  std::unordered_map<std::string, SchemaPtr> connectSchemas;
  // The envelope's schema text and a padded copy of the bytes read: buffers reused record after
  // record.
  std::string schemaText;
  std::string envelopeBuffer;

  // Connect data as JSON text appended to `out` (json_write.cpp).
  void writeValue(const SchemaPtr& schema, const Value& value, std::string& out);
  const std::string& jsonSchema(const SchemaPtr& schema);
};

// JSON text of a string, quoted and escaped, appended to `out`.
void appendJsonString(std::string_view text, std::string& out);

}  // namespace oxbow::connect
