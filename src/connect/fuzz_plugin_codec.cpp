// libFuzzer target: arbitrary bytes as the data a plugin hands the worker across the C ABI
// (plugin_codec.h): a key, value or header in the envelope form, a source partition or offset in
// the schemaless one. Unreadable bytes must be a DataException, and so must a value read that
// cannot be written; what is written must read back to the same schema and value and encode to
// the same bytes again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugin_codec.h"

namespace {

using namespace oxbow::connect;
namespace codec = plugin_codec;

void check(bool ok) {
  if (!ok) std::abort();
}

void data(oxbow_connect_bytes bytes) {
  SchemaAndValue read;
  try {
    read = codec::decodeData(bytes);
  } catch (const DataException&) {
    return;
  }
  std::string written;
  try {
    written = codec::encodeData(read.schema, read.value);
  } catch (const DataException&) {
    return;  // read but not writable, as in Kafka: e.g. a Decimal schema without its scale
  }
  SchemaAndValue again = codec::decodeData(codec::bytesOf(written));
  check(again == read);
  check(codec::encodeData(again.schema, again.value) == written);
}

void map(oxbow_connect_bytes bytes) {
  ValueMap read;
  try {
    read = codec::decodeMap(bytes);
  } catch (const DataException&) {
    return;
  }
  std::string written = codec::encodeMap(read);
  check(codec::decodeMap(codec::bytesOf(written)) == read);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oxbow_connect_bytes bytes{reinterpret_cast<const char*>(data), size};
  ::data(bytes);
  map(bytes);
  return 0;
}
