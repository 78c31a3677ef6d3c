#pragma once
// Builds uncompressed v2 record batches: for the broker's own internal topics (committed offsets)
// and for tests. Clients' batches are never rebuilt.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/compression.h"

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

std::vector<uint8_t> build_batch(const std::vector<OutgoingRecord>& records,
                                 int64_t base_timestamp = 1000, int64_t base_offset = 0,
                                 const ProducerFields& producer = {});

// Transaction markers: control batches of one record whose key is (version int16 = 0, type int16)
// and whose value is (version int16 = 0, coordinator_epoch int32).
enum class ControlType : int16_t { kAbort = 0, kCommit = 1, kUnknown = -1 };

std::vector<uint8_t> build_control_batch(const ProducerFields& producer, ControlType type,
                                         int32_t coordinator_epoch, int64_t timestamp);
// The marker type of a control batch from its first bytes (header and first record); kUnknown
// when `available` is too short or the batch is not a marker.
ControlType control_type(const uint8_t* batch, size_t available);

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

// A record of any batch (decompressed if need be) with its encoded bytes, for copying it as is.
struct RawRecord {
  RecordView view;
  std::span<const uint8_t> bytes;  // length varint included
};

// Appends every record of a whole batch to `out`, decompressing into `scratch` (which the views
// point into); false if the batch is malformed.
bool parse_raw_records(std::span<const uint8_t> batch, std::string& scratch,
                       std::vector<RawRecord>& out);

// A batch with the header fields of `original` (base offset and timestamp, last offset delta,
// producer, attributes) holding only `records`, compressed again with the original's codec (left
// uncompressed only if that fails), with its CRC recomputed. Record offsets and timestamps are
// deltas from the unchanged base, so kept records are copied as they are and the offsets of the
// removed ones simply go missing. `level`: the codec's compression level (compression.h).
std::vector<uint8_t> rebuild_batch(std::span<const uint8_t> original,
                                   const std::vector<RawRecord>& records,
                                   int level = kDefaultCompressionLevel);

// rebuild_batch's batch stamped with a delete horizon (record_batch.h): attribute bit 6 set and
// base_timestamp = `delete_horizon_ms`, each record's timestamp delta re-encoded from that base so
// that its timestamp reads as before.
std::vector<uint8_t> rebuild_batch_with_delete_horizon(std::span<const uint8_t> original,
                                                       const std::vector<RawRecord>& records,
                                                       int64_t delete_horizon_ms,
                                                       int level = kDefaultCompressionLevel);

// Whether some batch of `batches` is not in `codec` (0: uncompressed).
bool needs_recompression(std::span<const uint8_t> batches, int codec);

// `batches` with each batch that is not in `codec` compressed again in it (0: uncompressed),
// header fields kept, as Kafka's broker stores batches under a topic's compression.type; false if
// a batch does not parse. `level`: the codec's compression level (compression.h).
bool recompress_batches(std::span<const uint8_t> batches, int codec, std::vector<uint8_t>& out,
                        int level = kDefaultCompressionLevel);

}  // namespace oxbow::protocol
