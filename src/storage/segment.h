#pragma once
// One segment of a partition's log: Kafka's on-disk layout.
//
// A partition directory `<topic>-<partition>/` holds segments named by their base offset, the first
// offset they may contain, as 20 zero-padded digits:
//
//   00000000000000000000.log        record batches (v2), byte for byte as produced, with the
//                                    broker's base offset and leader epoch written in. Nothing
//                                    else: no framing of our own, so the file is what a fetch
//                                    sends.
//   00000000000000000000.index      sparse offset index: entries of 8 bytes, big-endian
//                                    (relative last offset of a batch: int32, file position of that
//                                    batch: int32), one at most every `index.interval.bytes` of
//                                    log, strictly increasing in both fields.
//   00000000000000000000.timeindex  sparse time index: entries of 12 bytes, big-endian
//                                    (largest timestamp so far: int64, relative last offset of the
//                                    batch that carried it: int32), appended when the largest
//                                    timestamp grows and an offset-index entry is written.
//
// The .log is the truth; both indexes are derived from it. The active (last) segment keeps its
// index entries in memory and writes the index files when it is sealed (rolled, or at a clean
// shutdown); after a crash recover() rebuilds them from the log. A sealed segment's indexes are
// read from their files on first use. The .log descriptor comes from the FileCache, so an idle
// segment holds no descriptor.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/record_batch.h"
#include "storage/file_cache.h"

namespace oxbow::storage {

struct OffsetIndexEntry {
  int32_t relative_offset;
  int32_t position;
};

struct TimeIndexEntry {
  int64_t timestamp;
  int32_t relative_offset;
};

class Segment {
 public:
  // Creates an empty segment (truncating any leftover file of that name).
  static std::shared_ptr<Segment> create(const std::string& dir, int64_t base_offset,
                                         int32_t index_interval_bytes, std::string& error);
  // A segment whose .log exists; `size` is the file's size. Nothing is opened yet.
  static std::shared_ptr<Segment> existing(const std::string& dir, int64_t base_offset,
                                           uint64_t size, int32_t index_interval_bytes);

  static std::string file_name(int64_t base_offset, const char* suffix);

  int64_t base_offset() const { return base_offset_; }
  int64_t next_offset() const { return next_offset_; }
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Largest timestamp in the segment (-1 when empty); loads the indexes of a sealed segment.
  int64_t max_timestamp();
  // The open .log (nullptr if it cannot be opened); holding it keeps the descriptor valid.
  std::shared_ptr<OpenFile> log_file();

  // Appends whole batches (already validated, offsets assigned) ending at `last_offset`.
  bool append(const uint8_t* data, size_t size, int64_t last_offset, int64_t max_timestamp);

  // File position of the first batch whose last offset is >= offset; size() when none.
  uint64_t position_of(int64_t offset);
  // The last batch boundary in [from, end], `from` being one: where a read of [from, end) must
  // stop to hold only whole batches. `from` itself when the first batch ends past `end`.
  uint64_t last_boundary_before(uint64_t from, uint64_t end);
  // The first record with timestamp >= ts, or nullopt when every record is older.
  std::optional<protocol::OffsetAndTimestamp> offset_for_timestamp(int64_t ts);
  // The first record carrying the segment's largest timestamp; nullopt when empty.
  std::optional<protocol::OffsetAndTimestamp> largest_timestamp_record();

  // Scans every batch (CRC included) from the start, truncates a torn or corrupt tail and rebuilds
  // both indexes in memory. Returns bytes truncated.
  uint64_t recover();
  // Finds the end offset and largest timestamp from the index files and the batches after their
  // last entry, without validating (clean shutdown path).
  void load_tail();

  // Calls `visit` with the header of every whole batch, in order (61 bytes read per batch).
  // Calls `visit` with the first bytes of each batch: its header and, when the batch holds them,
  // a few bytes more (enough for a control record's key).
  void for_each_batch(const std::function<void(const uint8_t* batch, size_t available)>& visit);

  // Calls `visit` with each whole batch in order, read in large chunks; stops when it returns
  // false.
  void read_batches(const std::function<bool(std::span<const uint8_t> batch)>& visit);

  bool flush();
  // Writes the index files from memory; the segment takes no more appends after a roll.
  void seal();
  // Removes the segment's files (a descriptor in use stays readable until released).
  void remove_files();

 private:
  Segment(std::string dir, int64_t base_offset, int32_t index_interval_bytes);
  std::string path(const char* suffix) const {
    return dir_ + "/" + file_name(base_offset_, suffix);
  }
  // Reads the index files; false when they are missing or malformed.
  bool read_index_files();
  void ensure_index_loaded();
  void add_index_entries(int64_t last_offset, int64_t max_timestamp, uint64_t position);
  void note_timestamp(int64_t batch_max_timestamp, int64_t batch_last_offset);
  std::optional<protocol::OffsetAndTimestamp> record_in_batch_at(uint64_t position, int64_t ts);
  int64_t read_at(void* data, size_t size, uint64_t offset);

  std::string dir_;
  int64_t base_offset_;
  int32_t index_interval_bytes_;
  CachedFile log_;
  uint64_t size_ = 0;
  int64_t next_offset_;
  int64_t max_timestamp_ = -1;
  int64_t max_timestamp_offset_ = -1;  // last offset of the batch carrying max_timestamp_
  uint64_t bytes_since_index_ = 0;
  bool index_loaded_ = false;
  std::vector<OffsetIndexEntry> index_;
  std::vector<TimeIndexEntry> time_index_;
};

}  // namespace oxbow::storage
