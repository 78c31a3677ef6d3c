// libFuzzer: any bytes as one Avro schema, or two separated by a newline. Parsing never crashes;
// a schema that parses prints its Parsing Canonical Form and its Java text, and two that parse
// are checked for compatibility both ways. (The Parsing Canonical Form does not always parse back
// to the same names: a type of the null namespace written inside a namespaced record takes the
// record's namespace when read again, a gap of the specification's form; so that round trip is
// not asserted.)
#include <cstdint>
#include <string_view>

#include "registry/avro/compatibility.h"
#include "registry/avro/schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oxbow::registry::avro;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto newline = input.find('\n');
  auto first = parse(input.substr(0, newline));
  if (first) {
    (void)fingerprint64(parsing_canonical_form(*first.schema));
    (void)canonical_string(*first.schema);
  }
  if (newline == std::string_view::npos || !first) return 0;
  auto second = parse(input.substr(newline + 1));
  if (!second) return 0;
  (void)reader_writer_problems(*first.schema, *second.schema);
  (void)reader_writer_problems(*second.schema, *first.schema);
  return 0;
}
