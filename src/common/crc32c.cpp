#include "common/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>

namespace oxbow {

// ISA-L picks the fastest kernel the CPU has at run time (carry-less multiply folding where it
// can, several times the speed of the crc32 instruction alone). It takes and returns the register
// without the final inversion that completes a CRC-32C, and lengths as int.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));  // not written: ISA-L's signature
  uint32_t reg = ~crc;
  while (size > 0) {
    auto chunk = static_cast<int>(std::min<size_t>(size, INT_MAX));
    reg = crc32_iscsi(p, chunk, reg);
    p += chunk;
    size -= static_cast<size_t>(chunk);
  }
  return ~reg;
}

}  // namespace oxbow
