// libFuzzer target: arbitrary bytes through JsonConverter.toConnectData, with and without schemas.
// Anything unreadable must be a DataException; whatever reads must write back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oxbow::connect;
  static JsonConverter* withSchemas = [] {
    auto* c = new JsonConverter();
    c->configure({}, false);
    return c;
  }();
  static JsonConverter* plain = [] {
    auto* c = new JsonConverter();
    c->configure({{"schemas.enable", "false"}, {"decimal.format", "NUMERIC"}}, false);
    return c;
  }();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (JsonConverter* converter : {withSchemas, plain}) {
    try {
      SchemaAndValue read = converter->toConnectData("fuzz", bytes);
      converter->fromConnectData("fuzz", read.schema, read.value);
    } catch (const DataException&) {
    }
  }
  return 0;
}
