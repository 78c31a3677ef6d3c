// libFuzzer target: any bytes as a Protobuf schema (.proto text or base64 descriptor) must parse
// or be refused with an error, never crash; a parsed one must print, diff against itself and
// convert an empty message both ways.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "registry/protobuf/schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oxbow::registry::protobuf;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parse(text, {});
  if (!parsed) return 0;
  const Schema& s = *parsed.schema;
  (void)s.canonical();
  (void)reader_problems(s, s, "new", "old");
  // The canonical text must parse again: it is what the registry stores and serves.
  auto again = parse(s.canonical(), {});
  if (again) (void)differences(s, *again.schema);
  for (const std::string& name : s.message_names()) {
    auto indexes = message_indexes(s, name);
    if (indexes) (void)message_name(s, *indexes);
    auto bin = json_to_binary(s, name, "{}");
    if (bin) (void)binary_to_json(s, name, *bin.value);
  }
  size_t used = 0;
  (void)decode_message_indexes(text, &used);
  return 0;
}
