#pragma once
// Avro's binary encoding of one datum (specification 1.11, "Binary Encoding"), against a parsed
// Schema, with the datum held as JSON in Avro's JSON encoding, which is what Confluent's console
// tools print and read:
// - null, booleans, numbers and strings as themselves; enums as their symbol; records as objects
//   (fields in schema order), arrays as arrays, maps as objects;
// - bytes and fixed as strings whose code points 0-255 are the bytes;
// - a union's non-null value wrapped as {"<branch name>": value}: the full name of a named type,
//   else the type's name ("int", "array", "map"); null as null;
// - logical types as their underlying type (a timestamp-millis is its long), as Confluent's tools
//   print them without logical type converters.
//
// Encoding is more lenient than decoding produces: a union's value may also come unwrapped when
// exactly one branch fits it, a wrapper may use a named type's short name, a record field that is
// absent takes its default, and a float or double may be "NaN", "Infinity" or "-Infinity".
//
// Decoding reads bytes from the network: every length is checked against what is left, a datum
// nests at most DecodeOptions::max_depth deep, and items that take no bytes (an array of nulls)
// are bounded in number, so that no input crashes, hangs or exhausts memory. Strings that are not
// valid UTF-8 get U+FFFD for each bad byte, as Java's decoding does.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "registry/avro/schema.h"

namespace oxbow::registry::avro {

// Bytes that do not decode, or a datum that does not fit its schema; what() names where (a JSON
// path such as "$.items[2].price") and why.
class BinaryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DecodeOptions {
  int max_depth = 100;
  // Items that take no bytes (nulls, empty records) across one datum.
  size_t max_empty_items = 1 << 20;
  // Bytes left over after the datum are an error unless allowed (Java's readers ignore them).
  bool allow_trailing = false;
};

// Appends the encoding of `datum` to `out`.
void encode(const Node& schema, const nlohmann::json& datum, std::string& out);
std::string encode(const Schema& schema, const nlohmann::json& datum);

// Decodes with the schema it was written with.
nlohmann::json decode(const Schema& writer, std::string_view bytes,
                      const DecodeOptions& options = {});
// The same with the fields of records kept in schema order.
nlohmann::ordered_json decode_ordered(const Schema& writer, std::string_view bytes,
                                      const DecodeOptions& options = {});

// Decodes bytes written with `writer` as a datum of `reader` (the specification's "Schema
// Resolution"): promotions (int to long, float or double; long to float or double; float to
// double; string and bytes either way), record fields matched by name or the reader's aliases
// and reordered, written fields the reader lacks skipped, reader fields the writer lacks taken
// from their defaults, an unknown enum symbol taken as the reader's enum default, and unions
// resolved on either side. Schemas that do not resolve give a BinaryError.
nlohmann::json decode(const Schema& writer, const Schema& reader, std::string_view bytes,
                      const DecodeOptions& options = {});
nlohmann::ordered_json decode_ordered(const Schema& writer, const Schema& reader,
                                      std::string_view bytes, const DecodeOptions& options = {});

// The name a union branch is wrapped under in the JSON encoding.
std::string branch_name(const Node& node);

}  // namespace oxbow::registry::avro
