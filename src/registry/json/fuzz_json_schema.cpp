// libFuzzer: any bytes as one JSON schema, or two separated by a newline. Parsing never crashes;
// a schema that parses is normalized again and checked against itself as a document, and two
// that parse are compared both ways.
#include <cstdint>
#include <string_view>

#include "registry/json/diff.h"
#include "registry/json/schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oxbow::registry::json;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto newline = input.find('\n');
  auto first = parse(input.substr(0, newline));
  if (first) {
    // The normalized text is JSON that parses to the same normalized text.
    auto again = parse(first.schema->normalized());
    if (again && again.schema->normalized() != first.schema->normalized()) __builtin_trap();
    auto doc = nlohmann::json::parse(first.schema->canonical(), nullptr, false);
    if (!doc.is_discarded()) (void)first.schema->validate(doc);
  }
  if (newline == std::string_view::npos || !first) return 0;
  auto second = parse(input.substr(newline + 1));
  if (!second) return 0;
  (void)incompatibilities(*first.schema, *second.schema, "new", "old");
  (void)incompatibilities(*second.schema, *first.schema, "old", "new");
  return 0;
}
