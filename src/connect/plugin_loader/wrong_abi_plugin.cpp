// A plugin from a future worker's ABI (plugin_loader_test): the loader must skip it by its
// version without reading anything past the version and size.
#include <cstdint>

#include "oxbow/connect/plugin_abi.h"

extern "C" __attribute__((visibility("default"))) const oxbow_connect_plugin*
oxbow_connect_plugin_entry(uint32_t /*host_abi_version*/) {
  static const oxbow_connect_plugin future{
      99, sizeof(oxbow_connect_plugin), "future", "9.9", nullptr, 0, nullptr, 0};
  return &future;
}
