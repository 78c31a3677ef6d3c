#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "protocol/batch_builder.h"
#include "protocol/record_batch.h"
#include "storage/file.h"
#include "storage/partition_log.h"
#include "storage/test_dir.h"

namespace oxbow::storage {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

struct Record {
  int64_t offset;
  std::string key;
  std::optional<std::string> value;
  int64_t timestamp = -1;
};

// Calls visit(header, batch) for each whole batch a consumer fetching from `from` on reads, up to
// `until` (exclusive) or the high watermark; returns where its next fetch would start.
template <typename Visit>
int64_t fetch_batches(PartitionLog& log, int64_t from, int64_t until, Visit visit) {
  int64_t offset = from;
  while (offset < std::min(until, log.high_watermark())) {
    auto read = log.read(offset, 1 << 20, true);
    if (read.slice.length == 0) break;
    std::vector<uint8_t> bytes(read.slice.length);
    EXPECT_EQ(
        ::pread(read.slice.fd, bytes.data(), bytes.size(), static_cast<off_t>(read.slice.offset)),
        static_cast<ssize_t>(bytes.size()));
    size_t pos = 0;
    int64_t next = offset;
    while (pos + pr::kBatchHeaderSize <= bytes.size() && next < until) {
      auto h = pr::read_batch_header(bytes.data() + pos);
      if (pos + h.total_size() > bytes.size()) break;
      visit(h, std::span(bytes.data() + pos, h.total_size()));
      next = h.last_offset() + 1;
      pos += h.total_size();
    }
    if (next == offset) break;
    offset = next;
  }
  return offset;
}

// The data records a consumer fetching from `from` reads, up to the batch holding `until`.
std::vector<Record> read_from(PartitionLog& log, int64_t from, int64_t until, int64_t* next) {
  std::vector<Record> out;
  int64_t end = fetch_batches(log, from, until, [&](const pr::BatchHeader& h, auto batch) {
    std::string scratch;
    std::vector<pr::RawRecord> records;
    EXPECT_TRUE(pr::parse_raw_records(batch, scratch, records));
    for (const auto& r : records) {
      if (r.view.offset < from || h.is_control()) continue;
      out.push_back({r.view.offset, std::string(r.view.key.value_or("")),
                     r.view.value ? std::optional<std::string>(*r.view.value) : std::nullopt,
                     r.view.timestamp});
    }
  });
  if (next) *next = end;
  return out;
}

std::vector<Record> read_all(PartitionLog& log) {
  return read_from(log, log.log_start_offset(), INT64_MAX, nullptr);
}

std::vector<pr::BatchHeader> read_headers(PartitionLog& log) {
  std::vector<pr::BatchHeader> out;
  fetch_batches(log, log.log_start_offset(), INT64_MAX,
                [&](const pr::BatchHeader& h, auto) { out.push_back(h); });
  return out;
}

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

LogConfig compacted() {
  LogConfig config;
  config.compact = true;
  config.delete_policy = false;
  config.segment_bytes = 2000;
  config.min_cleanable_dirty_ratio = 0.01;
  config.delete_retention_ms = 1000;
  return config;
}

}  // namespace

TEST(PartitionLogCompaction, KeepsTheLatestRecordOfEachKeyAtItsOffset) {
  testing::TempDir dir;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/c-0", compacted(), true, error);
  std::map<std::string, std::pair<int64_t, std::optional<std::string>>> model;
  // Segments roll by wall-clock age, so the test's clock starts from the real one.
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  for (int i = 0; i < 200; ++i) {
    std::string key = "k" + std::to_string(i % 7);
    std::optional<std::string> value =
        i % 10 == 9 ? std::nullopt : std::optional<std::string>("v" + std::to_string(i));
    auto batch = pr::build_batch({{key, value}}, now);
    auto appended = log->append(batch, now);
    ASSERT_EQ(appended.error, ErrorCode::kNone);
    model[key] = {appended.base_offset, value};
  }
  auto unkeyed = pr::build_batch({{std::nullopt, "x"}}, now);
  EXPECT_EQ(log->append(unkeyed, now).error, ErrorCode::kInvalidRecord);
  log->maybe_roll(now + 10LL * 24 * 3600 * 1000);  // seal everything
  EXPECT_GT(log->dirty_ratio(now), 0.99);
  auto result = log->clean(now);  // tombstones are younger than delete.retention.ms: kept
  ASSERT_TRUE(result.cleaned);
  EXPECT_GT(result.records_removed, 150);
  EXPECT_EQ(log->dirty_ratio(now), 0);
  auto records = read_all(*log);
  ASSERT_EQ(records.size(), model.size());
  for (const auto& r : records) {
    EXPECT_EQ(model[r.key].first, r.offset) << r.key;
    EXPECT_EQ(model[r.key].second, r.value) << r.key;
  }
  // Later, once the tombstones are old, a pass over new dirty data drops them.
  auto more = pr::build_batch({{"other", "x"}}, now + 5000);
  log->append(more, now + 5000);
  log->maybe_roll(now + 20LL * 24 * 3600 * 1000);
  ASSERT_TRUE(log->clean(now + 5000).cleaned);
  for (const auto& r : read_all(*log)) EXPECT_TRUE(r.value.has_value()) << r.key;
  EXPECT_EQ(log->high_watermark(), 201);  // offsets are untouched
  log->close();
}

// A consumer reading from the start while a pass goes by must end with each key's final state,
// provided it reaches the end within delete.retention.ms (Kafka's guarantee): so the pass that
// removes a key's older values keeps its tombstone, however old, and only a pass once
// delete.retention.ms has gone by since then may drop it. Here the consumer reads a key's old
// value, then the pass runs, then the consumer reads on.
TEST(PartitionLogCompaction, ATombstoneOutlivesThePassThatRemovesTheValuesItDeletes) {
  testing::TempDir dir;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/c-0", compacted(), true, error);
  int64_t t0 = wall_clock_ms();
  constexpr int64_t kDay = 24LL * 3600 * 1000;
  int64_t seal_at = t0;
  auto append_sealed = [&](const std::string& key, std::optional<std::string> value) {
    auto batch = pr::build_batch({{key, value}}, t0);
    auto appended = log->append(batch, seal_at);
    EXPECT_EQ(appended.error, ErrorCode::kNone);
    seal_at += 10 * kDay;  // past segment.ms: the next pass may clean it
    log->maybe_roll(seal_at);
    return appended.base_offset;
  };
  append_sealed("k", "old");
  append_sealed("other", "x");
  ASSERT_TRUE(log->clean(t0).cleaned);
  int64_t tombstone = append_sealed("k", std::nullopt);

  int64_t next = 0;
  auto before_pass = read_from(*log, 0, tombstone, &next);
  ASSERT_EQ(before_pass.size(), 2u);
  EXPECT_EQ(before_pass[0].value, "old");
  // The pass comes long after the tombstone was written (delete.retention.ms is 1 s).
  int64_t pass_at = t0 + 5000;
  ASSERT_TRUE(log->clean(pass_at).cleaned);
  auto after_pass = read_from(*log, next, INT64_MAX, nullptr);
  ASSERT_EQ(after_pass.size(), 1u) << "the tombstone went with the value it deletes";
  EXPECT_EQ(after_pass[0].offset, tombstone);
  EXPECT_EQ(after_pass[0].value, std::nullopt);
  EXPECT_EQ(after_pass[0].timestamp, t0) << "the record keeps its timestamp";
  auto records = read_all(*log);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].key, "other");
  EXPECT_EQ(records[1].offset, tombstone);
  // The horizon is stamped in the tombstone's batch: the pass's time plus delete.retention.ms.
  auto headers = read_headers(*log);
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_FALSE(headers[0].has_delete_horizon());
  EXPECT_TRUE(headers[1].has_delete_horizon());
  EXPECT_EQ(headers[1].base_timestamp, pass_at + 1000);

  // Passes before the horizon keep it; the first one at the horizon drops it.
  append_sealed("more", "y");
  ASSERT_TRUE(log->clean(pass_at + 999).cleaned);
  EXPECT_EQ(read_all(*log).size(), 3u);
  append_sealed("more", "z");
  ASSERT_TRUE(log->clean(pass_at + 1000).cleaned);
  records = read_all(*log);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].key, "other");
  EXPECT_EQ(records[1].value, "z");
  log->close();
}

// The same rule for the marker of a transaction whose records are all gone: a read_committed
// consumer that read an aborted record before the pass needs the marker to know where the
// transaction ends.
TEST(PartitionLogCompaction, AnAbortMarkerOutlivesThePassThatRemovesItsRecords) {
  testing::TempDir dir;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/c-0", compacted(), true, error);
  int64_t t0 = wall_clock_ms();
  pr::ProducerFields txn{77, 0, 0, true};
  ASSERT_EQ(log->allow_transaction(77, 0), ErrorCode::kNone);
  auto aborted = pr::build_batch({{"k", "aborted"}}, t0, 0, txn);
  ASSERT_EQ(log->append(aborted, t0).error, ErrorCode::kNone);
  auto marker = log->write_marker(77, 0, false, 0, t0);
  ASSERT_EQ(marker.error, ErrorCode::kNone);
  auto plain = pr::build_batch({{"other", "x"}}, t0);
  ASSERT_EQ(log->append(plain, t0).error, ErrorCode::kNone);
  int64_t seal_at = t0 + 10LL * 24 * 3600 * 1000;
  log->maybe_roll(seal_at);
  auto control_batches = [&] {
    std::vector<std::pair<pr::BatchHeader, pr::ControlType>> out;
    fetch_batches(*log, 0, INT64_MAX, [&](const pr::BatchHeader& h, auto batch) {
      if (h.is_control()) out.emplace_back(h, pr::control_type(batch.data(), batch.size()));
    });
    return out;
  };

  int64_t pass_at = t0 + 5000;
  ASSERT_TRUE(log->clean(pass_at).cleaned);
  auto records = read_all(*log);
  ASSERT_EQ(records.size(), 1u) << "the aborted record goes at once";
  EXPECT_EQ(records[0].key, "other");
  auto markers = control_batches();
  ASSERT_EQ(markers.size(), 1u) << "the marker went with its transaction's records";
  auto& [header, type] = markers[0];
  EXPECT_EQ(header.base_offset, marker.base_offset);
  EXPECT_EQ(type, pr::ControlType::kAbort);
  EXPECT_TRUE(header.has_delete_horizon());
  EXPECT_EQ(header.base_timestamp, pass_at + 1000);

  auto more = pr::build_batch({{"more", "y"}}, t0);
  ASSERT_EQ(log->append(more, seal_at).error, ErrorCode::kNone);
  log->maybe_roll(seal_at + 10LL * 24 * 3600 * 1000);
  ASSERT_TRUE(log->clean(pass_at + 1000).cleaned);
  EXPECT_TRUE(control_batches().empty());
  EXPECT_EQ(read_all(*log).size(), 2u);
  log->close();
}

TEST(PartitionLogCompaction, AFullKeyMapEndsThePassAndTheNextGoesOn) {
  testing::TempDir dir;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/c-0", compacted(), true, error);
  std::map<std::string, std::pair<int64_t, std::string>> model;
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  for (int i = 0; i < 300; ++i) {
    std::string key = "k" + std::to_string(i % 40);
    std::string value = "v" + std::to_string(i);
    auto batch = pr::build_batch({{key, value}}, now);
    auto appended = log->append(batch, now);
    ASSERT_EQ(appended.error, ErrorCode::kNone);
    model[key] = {appended.base_offset, value};
  }
  log->maybe_roll(now + 10LL * 24 * 3600 * 1000);
  // A key map of about ten entries: each pass maps a few batches, stops mid-segment, and the next
  // goes on from there.
  int passes = 0;
  while (log->dirty_ratio(now) > 0 && passes < 200) {
    ASSERT_TRUE(log->clean(now, true, 700).cleaned);
    ++passes;
  }
  EXPECT_GT(passes, 10) << "the map bound did not split the work";
  EXPECT_LT(passes, 200);
  auto records = read_all(*log);
  ASSERT_EQ(records.size(), model.size());
  for (const auto& r : records) {
    EXPECT_EQ(model[r.key].first, r.offset) << r.key;
    EXPECT_EQ(model[r.key].second, r.value) << r.key;
  }
  log->close();
}

TEST(PartitionLogCompaction, AnInterruptedSwapIsFinishedOrDiscardedAtLoad) {
  testing::TempDir dir;
  std::string error;
  std::string path = dir.path() + "/c-0";
  int64_t end;
  {
    auto log = PartitionLog::open(path, compacted(), true, error);
    for (int i = 0; i < 60; ++i) {
      auto batch = pr::build_batch({{"k", "v" + std::to_string(i)}}, 1000);
      log->append(batch, 1000);
    }
    end = log->log_end_offset();
    log->close();
  }
  namespace fs = std::filesystem;
  // A pass that died before its swap file: the half-written segment goes, the log stays.
  fs::create_directories(path + "/cleaning");
  std::string garbage = "not a segment";
  ASSERT_TRUE(write_file_atomically(path + "/cleaning/00000000000000000000.log", garbage, error));
  {
    auto log = PartitionLog::open(path, compacted(), false, error);
    EXPECT_EQ(read_all(*log).size(), 60u);
    EXPECT_FALSE(fs::exists(path + "/cleaning"));
    log->close();
  }
  // A pass that died after its swap file: the cleaned segment replaces every segment it covers.
  auto cleaned = pr::build_batch({{"k", "v59"}}, 1000, end - 1);
  fs::create_directories(path + "/cleaning");
  ASSERT_TRUE(write_file_atomically(path + "/cleaning/00000000000000000000.log",
                                    std::string(cleaned.begin(), cleaned.end()), error));
  ASSERT_TRUE(
      write_file_atomically(path + "/cleaning/swap", "0 " + std::to_string(end) + "\n", error));
  auto log = PartitionLog::open(path, compacted(), false, error);
  auto records = read_all(*log);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].offset, end - 1);
  EXPECT_EQ(records[0].value, "v59");
  EXPECT_EQ(log->log_end_offset(), end);
  EXPECT_FALSE(fs::exists(path + "/cleaning"));
}

}  // namespace oxbow::storage
