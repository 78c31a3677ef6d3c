// libFuzzer: any bytes as an Avro schema. Parsing never crashes, and a schema that parses prints
// its Parsing Canonical Form. (That form does not always parse back to the same names: a type of
// the null namespace written inside a namespaced record takes the record's namespace when read
// again, a gap of the specification's form; so the round trip is not asserted.)
#include <cstdint>
#include <string_view>

#include "registry/avro/schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oxbow::registry::avro;
  auto result = parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (result) (void)fingerprint64(parsing_canonical_form(*result.schema));
  return 0;
}
