#pragma once
// Builds uncompressed v2 record batches: for the broker's own internal topics (committed offsets)
// and for tests. Clients' batches are never rebuilt.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow::protocol {

struct OutgoingRecord {
  std::optional<std::string> key;
  std::optional<std::string> value;  // nullopt: a tombstone
  int64_t timestamp_delta = 0;
};

// Who wrote a batch, for idempotent and transactional producers.
struct ProducerFields {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  bool transactional = false;
};

std::vector<uint8_t> build_batch(const std::vector<OutgoingRecord>& records, int64_t base_timestamp = 1000,
                                 int64_t base_offset = 0, const ProducerFields& producer = {});

// A record of an uncompressed batch, viewed in place.
struct RecordView {
  int64_t offset;
  int64_t timestamp;
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
};

// Appends the records of an uncompressed, whole batch to `out`; false if the batch is compressed
// or malformed.
bool parse_records(const uint8_t* batch, size_t size, std::vector<RecordView>& out);

}  // namespace oxbow::protocol
