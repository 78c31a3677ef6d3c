#pragma once
// A partition's log: its ordered segments, offsets, flushing and retention.
//
// Offsets: log_start_offset <= high_watermark <= log_end_offset. On one node every appended batch
// is fully replicated at once, so the high watermark equals the log end offset after each append;
// they are kept apart for replication. flushed_offset is the end of what fdatasync has made
// durable.
//
// Besides segments, the directory holds `leader-epoch-checkpoint` (Kafka's text format: version
// line "0", entry count, then "epoch start_offset" lines) so a follower can later truncate by
// epoch, and, once DeleteRecords moved it past the first segment's base, `log-start-offset` (the
// offset as decimal text).
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/errors.h"
#include "protocol/record_batch.h"
#include "protocol/wire.h"
#include "storage/log_config.h"
#include "storage/producer_state.h"

namespace oxbow::storage {

class Segment;

// Something waiting on a log (a long-polling fetch, a produce waiting for fsync). Logs hold waiters
// weakly, so one that gave up simply expires.
class Wakeable {
 public:
  virtual ~Wakeable() = default;
  virtual void wake() = 0;
};

// A record a produce was refused for, as Kafka's ProduceResponse reports it (v8+): its index among
// the appended records and why.
struct RecordError {
  int32_t index;
  std::string message;
};

struct AppendResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::vector<RecordError> record_errors;  // with kInvalidRecord: the records at fault
  std::string message;  // for the client, when the code alone does not say enough
  int64_t base_offset = -1;
  int64_t last_offset = -1;
  int64_t log_append_time_ms = -1;
  int64_t log_start_offset = 0;
  bool wait_for_flush =
      false;  // the flush policy wants this append durable before it is acknowledged
};

struct ReadResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  protocol::FileSlice slice;  // length 0 when there is nothing to send
  int64_t high_watermark = 0;
  int64_t last_stable_offset = 0;
  int64_t log_start_offset = 0;
  std::vector<AbortedTransaction>
      aborted;  // read_committed only: those the slice may hold records of
};

struct CleanResult {
  bool cleaned = false;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  int64_t records_removed = 0;
};

// Who is appending: a client's produce request, or the broker's own coordinators, whose
// transactional writes carry no sequence numbers.
enum class AppendOrigin { kClient, kCoordinator };

class PartitionLog {
 public:
  // Opens the directory, creating it when missing. With `clean` false (no clean-shutdown marker),
  // the active segment is validated and a torn tail truncated now; otherwise the segments are
  // listed on first use, so that idle partitions cost next to nothing.
  static std::unique_ptr<PartitionLog> open(const std::string& dir, const LogConfig& config,
                                            bool clean, std::string& error);
  ~PartitionLog();

  const std::string& dir() const { return dir_; }
  void set_config(const LogConfig& config);
  LogConfig config() const;

  // Validates, assigns offsets (rewriting `records` in place) and appends.
  AppendResult append(std::span<uint8_t> records, int64_t now_ms,
                      AppendOrigin origin = AppendOrigin::kClient);
  // Up to `max_bytes` of whole or partial batches from the batch containing `offset`, capped at
  // the high watermark, or with `committed_only` at the last stable offset. With
  // `min_one_batch`, a first batch larger than max_bytes is sent whole.
  ReadResult read(int64_t offset, int32_t max_bytes, bool min_one_batch,
                  bool committed_only = false);

  // Transactions. The coordinator allows the producer's transactional writes here
  // (AddPartitionsToTxn), then ends its transaction with a commit or abort marker.
  protocol::ErrorCode allow_transaction(int64_t producer_id, int16_t epoch);
  AppendResult write_marker(int64_t producer_id, int16_t epoch, bool commit,
                            int32_t coordinator_epoch, int64_t now_ms);
  int64_t last_stable_offset() const;
  std::optional<protocol::OffsetAndTimestamp> offset_for_timestamp(int64_t ts);
  // ListOffsets' MAX_TIMESTAMP: the first record with the partition's largest timestamp.
  std::optional<protocol::OffsetAndTimestamp> largest_timestamp_record();

  int64_t log_start_offset() const;
  int64_t log_end_offset() const;
  int64_t high_watermark() const;
  int64_t flushed_offset() const;
  uint64_t size_bytes() const;
  int32_t leader_epoch() const;
  // The idempotent producers this partition knows (DescribeProducers).
  ProducerState producer_state() const;
  // The end offset of `epoch` (OffsetForLeaderEpoch); -1 when unknown.
  std::pair<int32_t, int64_t> end_offset_for_epoch(int32_t epoch) const;

  // Makes everything appended so far durable and wakes flush waiters. Thread-safe; meant for the
  // flusher thread.
  bool flush();
  bool needs_flush(int64_t now_ms) const;
  void wait_flushed(int64_t offset, const std::shared_ptr<Wakeable>& waiter);
  // Calls `waiter` once at the next append (fetch long polling).
  void wait_for_data(const std::shared_ptr<Wakeable>& waiter);

  // DeleteRecords: makes `offset` (-1: the high watermark) the log start offset, durably, and
  // drops the segments wholly below it. kOffsetOutOfRange past the high watermark.
  protocol::ErrorCode delete_records_before(int64_t offset, int64_t& new_log_start);

  // Compaction (cleanup.policy=compact, partition_log_cleaner.cpp). The cleanable part of the log
  // is its sealed segments below the last stable offset whose records are older than
  // min.compaction.lag.ms; of it, what lies past the last pass's end is dirty.
  // The dirty share of the cleanable bytes (0 when nothing is cleanable).
  double dirty_ratio(int64_t now_ms);
  // Rewrites the cleanable segments keeping the latest record of each key, when the dirty share
  // reaches min.cleanable.dirty.ratio, the oldest dirty records passed max.compaction.lag.ms, or
  // `force`. Tombstones and transaction markers go once older than delete.retention.ms (markers
  // only once no record of their transaction is left), aborted transactions' records at once.
  // Crash-safe: see finish_interrupted_cleaning(). The key map of a pass takes about
  // `key_map_bytes` (log.cleaner.dedupe.buffer.size): when the dirty records hold more keys, the
  // pass stops after the batch that filled it and the next pass goes on from there.
  CleanResult clean(int64_t now_ms, bool force = false, size_t key_map_bytes = kDefaultKeyMapBytes);
  static constexpr size_t kDefaultKeyMapBytes = 128 << 20;

  // Deletes whole segments past retention.ms / retention.bytes, never the active one.
  int apply_retention(int64_t now_ms);
  // Rolls the active segment when segment.ms has passed (called periodically).
  void maybe_roll(int64_t now_ms);
  // Flushes and closes; the directory stays.
  void close();
  // Removes the whole directory (topic deletion).
  void destroy();

 private:
  static constexpr const char* kLogStartFile = "log-start-offset";

  PartitionLog(std::string dir, const LogConfig& config);
  bool load(bool clean, std::string& error);
  // Loads a lazily opened log; false (with the error logged) when its directory is unusable.
  bool ensure_loaded_locked() const;
  bool roll_locked(int64_t now_ms, std::string& error);
  void write_leader_epoch_checkpoint(bool durable);
  void load_producer_state();
  void write_producer_snapshot();
  // Idempotence: refuses a bad sequence or epoch, or finds the batch this one retries.
  struct CleanPlan;
  std::optional<CleanPlan> plan_cleaning(int64_t now_ms);
  // Replaces `sources` (still the log's segments, checked) with the cleaned segment of `base`
  // waiting in the cleaning directory; false if the log changed meanwhile.
  bool swap_cleaned(const std::vector<std::shared_ptr<Segment>>& sources, int64_t end,
                    int64_t base);
  bool check_producer_locked(std::span<uint8_t> records, int batch_count, AppendOrigin origin,
                             AppendResult& result);
  // Rolls if due, assigns offsets and writes validated batches; collects the fetches to wake.
  bool append_locked(std::span<uint8_t> records, const protocol::BatchesSummary& summary,
                     int64_t now_ms, AppendResult& result,
                     std::vector<std::shared_ptr<Wakeable>>& to_wake);

  std::string dir_;
  mutable std::mutex mutex_;
  mutable bool loaded_ = false;
  LogConfig config_;
  std::map<int64_t, std::shared_ptr<Segment>> segments_;
  std::shared_ptr<Segment> active_;
  // Where the active segment's age for segment.ms starts: its first append, as in Kafka (a segment
  // created empty is not rolled right after its first batch however long it sat idle), or when a
  // non-empty one was loaded.
  int64_t active_since_ms_ = 0;
  int64_t log_start_offset_ = 0;
  int64_t log_end_offset_ = 0;
  int64_t high_watermark_ = 0;
  int64_t flushed_offset_ = 0;
  int64_t unflushed_messages_ = 0;
  int64_t last_flush_ms_ = 0;
  int32_t leader_epoch_ = 0;
  std::vector<std::pair<int32_t, int64_t>> epochs_;  // (epoch, start offset)
  ProducerState producers_;
  std::vector<std::weak_ptr<Wakeable>> data_waiters_;
  size_t data_waiters_pruned_size_ = 0;
  std::multimap<int64_t, std::weak_ptr<Wakeable>> flush_waiters_;
  std::mutex flush_mutex_;  // one fdatasync at a time per log
  std::vector<std::shared_ptr<Segment>> unflushed_rolled_;
  int64_t cleaned_up_to_ =
      -1;  // end of the last compaction pass (`cleaner-offset-checkpoint`); -1: unread
  std::mutex clean_mutex_;  // one compaction pass at a time
};

// Finishes or rolls back a compaction pass a crash interrupted in `dir` (called before its
// segments are listed). A pass writes the cleaned segment into `dir/cleaning/`, then the file
// `cleaning/swap` ("<base> <end>": it replaces the segments with base offsets in [base, end)),
// then deletes those segments and moves the cleaned files in. With `swap` present the move is
// redone; without it the half-written cleaned segment is discarded.
void finish_interrupted_cleaning(const std::string& dir);

}  // namespace oxbow::storage
