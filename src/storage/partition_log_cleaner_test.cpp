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
};

std::vector<Record> read_all(PartitionLog& log) {
  std::vector<Record> out;
  int64_t offset = log.log_start_offset();
  while (offset < log.high_watermark()) {
    auto read = log.read(offset, 1 << 20, true);
    if (read.slice.length == 0) break;
    std::vector<uint8_t> bytes(read.slice.length);
    EXPECT_EQ(
        ::pread(read.slice.fd, bytes.data(), bytes.size(), static_cast<off_t>(read.slice.offset)),
        static_cast<ssize_t>(bytes.size()));
    size_t pos = 0;
    int64_t next = offset;
    while (pos + pr::kBatchHeaderSize <= bytes.size()) {
      auto h = pr::read_batch_header(bytes.data() + pos);
      if (pos + h.total_size() > bytes.size()) break;
      std::string scratch;
      std::vector<pr::RawRecord> records;
      EXPECT_TRUE(
          pr::parse_raw_records(std::span(bytes.data() + pos, h.total_size()), scratch, records));
      for (const auto& r : records) {
        if (r.view.offset < offset || h.is_control()) continue;
        out.push_back({r.view.offset, std::string(r.view.key.value_or("")),
                       r.view.value ? std::optional<std::string>(*r.view.value) : std::nullopt});
      }
      next = h.last_offset() + 1;
      pos += h.total_size();
    }
    if (next == offset) break;
    offset = next;
  }
  return out;
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
