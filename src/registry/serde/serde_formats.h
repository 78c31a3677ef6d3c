#pragma once
// The three formats behind one interface, for serdes.cpp (internal to registry/serde/): a schema
// parsed with its references, which names its record, encodes a value and decodes a payload (the
// bytes after the 5-byte header). Each format lives in its own serdes_<format>.cpp.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oxbow/registry/client.h"
#include "oxbow/registry/serdes.h"

namespace oxbow::registry::serde_detail {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// References nest no deeper than this (as the registry resolves them).
inline constexpr int kMaxReferenceDepth = 32;

struct FormatSettings {
  bool validate = false;  // JSON: json.fail.invalid.schema
  std::string message;    // PROTOBUF: the message a serializer writes; empty: the first
};

class Codec {
 public:
  virtual ~Codec() = default;
  // The name the record strategies use; empty when the schema has none.
  virtual std::string record_name() const = 0;
  // Appends the payload. Throws SerdeError with what is wrong.
  virtual void encode(const Json& value, std::string& out) const = 0;
  // `reader`: a codec of the same format (the deserializer's reader schema) or nullptr.
  virtual Json decode(std::string_view payload, const Codec* reader) const = 0;
  virtual OJson decode_ordered(std::string_view payload, const Codec* reader) const = 0;
};

// "AVRO", "JSON", "PROTOBUF": the registry's schemaType.
const char* type_name(Format format);
// "Avro", "JSON", "Protobuf": for messages, as Confluent's serdes name them.
const char* display_name(Format format);

// A referenced schema under the name the referring schema gives it.
struct NamedInfo {
  std::string name;
  SchemaInfo info;
};
// Every schema `refs` reach, fetched by subject and version, each after those it references (the
// order the registry parses them in), and each reference name once. Throws SerdeError.
std::vector<NamedInfo> fetch_references(SchemaRegistryClient* client,
                                        const std::vector<SchemaReference>& refs);

// The schema parsed (its references fetched through `client`, which may be null without
// references). Throws SerdeError when it does not parse or is of another type.
std::shared_ptr<const Codec> make_avro_codec(SchemaRegistryClient* client, const SchemaInfo& info);
std::shared_ptr<const Codec> make_json_codec(SchemaRegistryClient* client, const SchemaInfo& info,
                                             const FormatSettings& settings);
std::shared_ptr<const Codec> make_protobuf_codec(SchemaRegistryClient* client,
                                                 const SchemaInfo& info,
                                                 const FormatSettings& settings);

// PROTOBUF: the imports of `text` that need a reference (not well-known files). Throws SerdeError
// when the text does not parse.
std::vector<std::string> protobuf_imports(const std::string& text);

}  // namespace oxbow::registry::serde_detail
