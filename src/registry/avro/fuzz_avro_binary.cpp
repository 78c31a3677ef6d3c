// libFuzzer: any bytes as an Avro datum of one of a few schemas that between them use every kind
// (picked by the first byte), decoded with that schema and resolved to a reader schema. Decoding
// never crashes, hangs or allocates without bound; what decodes encodes again and decodes to the
// same JSON (bytes are not compared: varints and blocks have more than one encoding).
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "registry/avro/binary.h"
#include "registry/avro/schema.h"

namespace {

using namespace oxbow::registry::avro;

const char* const kSchemas[] = {
    R"({"type":"record","name":"All","namespace":"f","fields":[
      {"name":"n","type":"null"},{"name":"b","type":"boolean"},{"name":"i","type":"int"},
      {"name":"l","type":"long"},{"name":"f","type":"float"},{"name":"d","type":"double"},
      {"name":"by","type":"bytes"},{"name":"s","type":"string"},
      {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"],"default":"A"}},
      {"name":"fx","type":{"type":"fixed","name":"F","size":3}},
      {"name":"a","type":{"type":"array","items":["null","int","string"]}},
      {"name":"m","type":{"type":"map","values":{"type":"array","items":"null"}}}]})",
    R"({"type":"record","name":"Node","fields":[{"name":"v","type":"int"},
      {"name":"kids","type":{"type":"array","items":"Node"}},
      {"name":"next","type":["null","Node"]}]})",
    R"({"type":"array","items":{"type":"record","name":"Empty","fields":[]}})",
    R"(["null","string","bytes",{"type":"map","values":"long"},"double"])",
};
// Each schema's reader: promotions, reordered and added fields, an enum default.
const char* const kReaders[] = {
    R"({"type":"record","name":"All","namespace":"g","fields":[
      {"name":"s","type":"bytes"},{"name":"i","type":"double"},{"name":"l","type":"float"},
      {"name":"x","type":"string","default":"x"},
      {"name":"e","type":{"type":"enum","name":"E","symbols":["B"],"default":"B"}},
      {"name":"a","type":{"type":"array","items":["null","long","bytes"]}}]})",
    R"({"type":"record","name":"Node","fields":[{"name":"v","type":"long"},
      {"name":"next","type":["null","Node"]}]})",
    R"(["null",{"type":"array","items":{"type":"record","name":"Empty","fields":[]}}])",
    R"(["null","bytes","string",{"type":"map","values":"double"},"double"])",
};
constexpr size_t kCount = sizeof(kSchemas) / sizeof(kSchemas[0]);

const std::vector<Schema>& parsed(const char* const* texts) {
  static std::vector<Schema>* cache[2] = {nullptr, nullptr};
  auto*& slot = cache[texts == kSchemas ? 0 : 1];
  if (!slot) {
    slot = new std::vector<Schema>();
    for (size_t i = 0; i < kCount; ++i) {
      auto result = parse(texts[i]);
      if (!result) std::abort();
      slot->push_back(std::move(*result.schema));
    }
  }
  return *slot;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& writers = parsed(kSchemas);
  const auto& readers = parsed(kReaders);
  const Schema& writer = writers[data[0] % kCount];
  const Schema& reader = readers[data[0] % kCount];
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  DecodeOptions options;
  options.max_empty_items = 10000;
  options.allow_trailing = (data[0] & 0x80) != 0;
  nlohmann::json value;
  try {
    value = decode(writer, bytes, options);
  } catch (const BinaryError&) {
    value = nlohmann::json::value_t::discarded;
  }
  if (!value.is_discarded()) {
    (void)value.dump();
    // Throws (and so fails the run) if what was decoded does not encode.
    if (decode(writer, encode(writer, value), options) != value) std::abort();
  }
  try {
    (void)decode(writer, reader, bytes, options).dump();
  } catch (const BinaryError&) {
  }
  return 0;
}
