#pragma once
// Builds uncompressed v2 record batches for tests (the broker never builds batches itself).
#include <cstdint>
#include <string>
#include <vector>

namespace oxbow::protocol::testing {

struct TestRecord {
  std::string key;
  std::string value;
  int64_t timestamp_delta = 0;
};

std::vector<uint8_t> build_batch(const std::vector<TestRecord>& records, int64_t base_timestamp = 1000,
                                 int64_t base_offset = 0);

}  // namespace oxbow::protocol::testing
