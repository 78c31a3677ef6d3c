#pragma once
// Protobuf schemas as Confluent's registry handles them (its "protobuf provider"): a .proto text or
// a base64 FileDescriptorProto, resolved against its references and the well-known files Confluent
// bundles; the text Confluent prints for it (canonical and normalized); its compatibility
// differences; and what the serdes need (message indexes, JSON <-> binary). libprotobuf stays
// behind this header so that its users do not compile its headers.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow::registry::protobuf {

struct SchemaData;  // the parsed file, its descriptor pool and printed forms (schema_data.h)

class Schema {
 public:
  explicit Schema(std::shared_ptr<const SchemaData> data) : data_(std::move(data)) {}
  // Confluent's canonical text (its own printer): what the registry stores and compares.
  const std::string& canonical() const;
  // The text after Confluent's normalize (sorted, resolved names, no synthetic map entries).
  const std::string& normalized() const;
  // Confluent's ParsedSchema.name(): `package.` plus the first message (or first enum).
  const std::string& name() const;
  // The full names of every message, nested ones included, in file order.
  std::vector<std::string> message_names() const;
  // Confluent's format=serialized: the file's FileDescriptorProto, base64.
  std::string serialized() const;
  const std::shared_ptr<const SchemaData>& data() const { return data_; }

 private:
  std::shared_ptr<const SchemaData> data_;
};

// A referenced schema under the import path that names it.
struct Reference {
  std::string name;
  const Schema* schema = nullptr;
};

struct ParseResult {
  std::optional<Schema> schema;
  std::string error;  // set when there is no schema
  explicit operator bool() const { return schema.has_value(); }
};

// Inputs larger or deeper than these are refused before libprotobuf sees them.
inline constexpr size_t kMaxSchemaBytes = 4 << 20;
inline constexpr int kMaxNesting = 64;

ParseResult parse(std::string_view text, const std::vector<Reference>& references);

// The imports of a .proto text (or base64 FileDescriptorProto) that are not well-known files, so
// need a reference, in the order written; nullopt when the text does not parse. (The serdes look
// them up as Confluent's default reference subject name strategy names them.)
std::optional<std::vector<std::string>> unresolved_imports(std::string_view text);

// ---- Compatibility (Confluent's protobuf diff) ----

enum class DifferenceType {
  kPackageChanged,
  kMessageAdded,
  kMessageRemoved,
  kMessageMoved,
  kEnumAdded,
  kEnumRemoved,
  kEnumConstAdded,
  kEnumConstChanged,
  kEnumConstRemoved,
  kFieldAdded,
  kFieldRemoved,
  kFieldNameChanged,
  kFieldKindChanged,
  kFieldScalarKindChanged,
  kFieldNamedTypeChanged,
  kFieldNumericLabelChanged,
  kFieldStringOrBytesLabelChanged,
  kRequiredFieldAdded,
  kRequiredFieldRemoved,
  kOneofAdded,
  kOneofRemoved,
  kOneofFieldAdded,
  kOneofFieldRemoved,
  kOneofFieldMovedToTopLevel,
  kMultipleFieldsMovedToOneof,
  kFieldMovedToExistingOneof,
};

struct Difference {
  DifferenceType type;
  std::string path;  // "#/Msg/3"
};

const char* type_name(DifferenceType type);
// In Confluent's COMPATIBLE_CHANGES.
bool compatible(DifferenceType type);
// Every difference from `original` to `update`, in Confluent's order.
std::vector<Difference> differences(const Schema& original, const Schema& update);
// Confluent's `{errorType:"...", description:"..."}` item; `first`/`second` fill the template's
// two %s (reader, writer).
std::string message(const Difference& d, const std::string& first, const std::string& second);
// What `reader` cannot read of data written with `writer`: Confluent's items for each incompatible
// difference from writer to reader.
std::vector<std::string> reader_problems(const Schema& reader, const Schema& writer,
                                         const std::string& reader_label,
                                         const std::string& writer_label);

// ---- Serde support ----

// The message indexes of the wire format: zig-zag varints, count first; [0] is the single byte 0.
std::string encode_message_indexes(const std::vector<int32_t>& indexes);
// Reads indexes from the front of `bytes`; `consumed` gets the bytes used. nullopt when truncated,
// malformed or implausibly long.
std::optional<std::vector<int32_t>> decode_message_indexes(std::string_view bytes,
                                                           size_t* consumed);
// The full name of the message at `indexes` (positions among messages only, as registered).
std::optional<std::string> message_name(const Schema& schema, const std::vector<int32_t>& indexes);
// The indexes of the message with that full name (a leading dot is ignored).
std::optional<std::vector<int32_t>> message_indexes(const Schema& schema,
                                                    std::string_view full_name);

struct JsonOptions {
  bool preserve_field_names = false;  // proto names instead of lowerCamel json names
  bool include_defaults = false;      // print fields at their default value too
};

struct Converted {
  std::optional<std::string> value;
  std::string error;
  explicit operator bool() const { return value.has_value(); }
};

// The binary encoding of the JSON value as message `message` (full name) of the schema.
Converted json_to_binary(const Schema& schema, std::string_view message, std::string_view json);
// The JSON of a binary encoded message.
Converted binary_to_json(const Schema& schema, std::string_view message, std::string_view binary,
                         const JsonOptions& options = {});

}  // namespace oxbow::registry::protobuf
