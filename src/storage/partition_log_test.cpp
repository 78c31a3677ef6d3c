#include "storage/partition_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>

#include "protocol/batch_builder.h"
#include "protocol/record_batch.h"
#include "storage/file.h"
#include "storage/test_dir.h"

namespace oxbow::storage {

namespace pr = oxbow::protocol;
using pr::build_batch;
using pr::ErrorCode;

namespace {

std::vector<uint8_t> read_slice(const pr::FileSlice& slice) {
  std::vector<uint8_t> out(slice.length);
  EXPECT_EQ(::pread(slice.fd, out.data(), out.size(), static_cast<off_t>(slice.offset)),
            static_cast<ssize_t>(out.size()));
  return out;
}

int count_segments(const std::string& path) {
  int logs = 0;
  for (auto& e : std::filesystem::directory_iterator(path)) logs += e.path().extension() == ".log";
  return logs;
}

class CountingWaiter : public Wakeable {
 public:
  void wake() override { ++woken; }
  int woken = 0;
};

}  // namespace

TEST(PartitionLog, AppendAssignsOffsetsAndReadReturnsThem) {
  testing::TempDir dir;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/t-0", LogConfig{}, true, error);
  ASSERT_TRUE(log) << error;
  for (int i = 0; i < 5; ++i) {
    auto batch = build_batch({{"a", "1"}, {"b", "2"}, {"c", "3"}});
    auto r = log->append(batch, 5000);
    ASSERT_EQ(r.error, ErrorCode::kNone);
    EXPECT_EQ(r.base_offset, i * 3);
  }
  EXPECT_EQ(log->log_end_offset(), 15);
  EXPECT_EQ(log->high_watermark(), 15);
  auto read = log->read(7, 1 << 20, true);
  ASSERT_EQ(read.error, ErrorCode::kNone);
  auto bytes = read_slice(read.slice);
  auto h = pr::read_batch_header(bytes.data());
  EXPECT_EQ(h.base_offset, 6);  // the batch containing offset 7
  pr::BatchesSummary s;
  EXPECT_EQ(pr::validate_batches(bytes, s), ErrorCode::kNone);
  EXPECT_EQ(s.record_count, 9);
  EXPECT_EQ(log->read(15, 100, true).slice.length, 0u);
  EXPECT_EQ(log->read(16, 100, true).error, ErrorCode::kOffsetOutOfRange);
}

TEST(PartitionLog, CorruptBatchIsRefusedAndNothingWritten) {
  testing::TempDir dir;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/t-0", LogConfig{}, true, error);
  auto batch = build_batch({{"a", "1"}});
  batch[batch.size() - 1] ^= 0xff;
  EXPECT_EQ(log->append(batch, 0).error, ErrorCode::kCorruptMessage);
  EXPECT_EQ(log->log_end_offset(), 0);
  EXPECT_EQ(log->size_bytes(), 0u);
}

TEST(PartitionLog, CreateTimeFarFromTheClockIsRefusedPerRecord) {
  testing::TempDir dir;
  LogConfig config;
  config.timestamp_difference_max_ms = 1000;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/t-0", config, true, error);
  const int64_t now = 1'700'000'000'000;
  // Records 1 and 3 lie 1001 ms away, before and after the clock; the rest within 1000 ms.
  auto batch = build_batch(
      {{"a", "1", 0}, {"b", "2", -2001}, {"c", "3", 0}, {"d", "4", 1}, {"e", "5", -1}}, now + 1000);
  auto refused = log->append(batch, now);
  EXPECT_EQ(refused.error, ErrorCode::kInvalidTimestamp);
  ASSERT_EQ(refused.record_errors.size(), 2u);
  EXPECT_EQ(refused.record_errors[0].index, 1);
  EXPECT_EQ(refused.record_errors[1].index, 3);
  EXPECT_EQ(log->log_end_offset(), 0);
  auto within = build_batch({{"a", "1", 0}, {"b", "2", -2000}}, now + 1000);
  EXPECT_EQ(log->append(within, now).error, ErrorCode::kNone);
  // No timestamp (-1), and the extremes of int64, which must not overflow the check.
  auto none = build_batch({{"a", "1"}}, -1);
  EXPECT_EQ(log->append(none, now).error, ErrorCode::kNone);
  for (int64_t extreme :
       {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    auto far = build_batch({{"a", "1"}}, extreme);
    EXPECT_EQ(log->append(far, now).error, ErrorCode::kInvalidTimestamp);
  }
  // Under LogAppendTime the producer's timestamps are not kept, so not checked.
  config.log_append_time = true;
  log->set_config(config);
  auto stale = build_batch({{"a", "1"}}, 5);
  EXPECT_EQ(log->append(stale, now).error, ErrorCode::kNone);
  EXPECT_EQ(log->log_end_offset(), 4);
}

TEST(PartitionLog, MaxBytesCutsButFirstBatchAlwaysFits) {
  testing::TempDir dir;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/t-0", LogConfig{}, true, error);
  auto batch = build_batch({{"k", std::string(500, 'x')}});
  size_t batch_size = batch.size();
  log->append(batch, 0);
  auto second = build_batch({{"k", std::string(500, 'y')}});
  log->append(second, 0);
  EXPECT_EQ(log->read(0, 10, true).slice.length, batch_size);
  EXPECT_EQ(log->read(0, 10, false).slice.length, 10u);
  EXPECT_EQ(log->read(0, 1 << 20, true).slice.length, 2 * batch_size);
}

TEST(PartitionLog, RollsSegmentsAndReadsAcrossThem) {
  testing::TempDir dir;
  std::string error;
  LogConfig config;
  config.segment_bytes = 1000;
  auto log = PartitionLog::open(dir.path() + "/t-0", config, true, error);
  for (int i = 0; i < 20; ++i) {
    auto batch = build_batch({{"k", std::string(300, 'a')}});
    ASSERT_EQ(log->append(batch, 0).error, ErrorCode::kNone);
  }
  EXPECT_GE(count_segments(dir.path() + "/t-0"), 6);
  for (int64_t offset = 0; offset < 20; ++offset) {
    auto r = log->read(offset, 1 << 20, true);
    ASSERT_GT(r.slice.length, 0u);
    EXPECT_EQ(pr::read_batch_header(read_slice(r.slice).data()).base_offset, offset);
  }
}

TEST(PartitionLog, AnAppendLargerThanASegmentIsRefusedAndWritesNothing) {
  testing::TempDir dir;
  std::string error;
  LogConfig config;
  config.segment_bytes = 1000;
  auto log = PartitionLog::open(dir.path() + "/t-0", config, true, error);
  ASSERT_TRUE(log) << error;
  auto fits = build_batch({{"k", std::string(300, 'a')}});
  ASSERT_EQ(log->append(fits, 0).error, ErrorCode::kNone);
  auto too_big = build_batch({{"k", std::string(1000, 'b')}});
  auto refused = log->append(too_big, 0);
  EXPECT_EQ(refused.error, ErrorCode::kRecordListTooLarge);
  EXPECT_NE(refused.message.find("segment.bytes (1000)"), std::string::npos) << refused.message;
  EXPECT_EQ(log->log_end_offset(), 1);
  EXPECT_EQ(count_segments(dir.path() + "/t-0"), 1);
  config.segment_bytes = static_cast<int64_t>(too_big.size());  // exactly one segment's worth fits
  log->set_config(config);
  EXPECT_EQ(log->append(too_big, 0).error, ErrorCode::kNone);
  EXPECT_EQ(log->log_end_offset(), 2);
}

TEST(PartitionLog, RetentionBytesDeletesOldSegmentsAndMovesStart) {
  testing::TempDir dir;
  std::string error;
  LogConfig config;
  config.segment_bytes = 1000;
  config.retention_bytes = 2000;
  auto log = PartitionLog::open(dir.path() + "/t-0", config, true, error);
  for (int i = 0; i < 20; ++i) {
    auto batch = build_batch({{"k", std::string(300, 'a')}});
    log->append(batch, 0);
  }
  EXPECT_GT(log->apply_retention(0), 0);
  EXPECT_GT(log->log_start_offset(), 0);
  EXPECT_LE(log->size_bytes(), 2000u + 1000u);
  EXPECT_EQ(log->read(0, 100, true).error, ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(log->read(log->log_start_offset(), 100, true).error, ErrorCode::kNone);
}

TEST(PartitionLog, RetentionMsUsesLargestTimestamp) {
  testing::TempDir dir;
  std::string error;
  LogConfig config;
  config.segment_bytes = 500;
  config.retention_ms = 1000;
  auto log = PartitionLog::open(dir.path() + "/t-0", config, true, error);
  for (int i = 0; i < 6; ++i) {
    auto batch = build_batch({{"k", std::string(300, 'a')}}, 10'000 + i);
    log->append(batch, 0);
  }
  EXPECT_EQ(log->apply_retention(10'500), 0);
  config.delete_policy = false;  // cleanup.policy=compact: retention leaves the history alone
  log->set_config(config);
  EXPECT_EQ(log->apply_retention(20'000), 0);
  config.delete_policy = true;
  log->set_config(config);
  EXPECT_EQ(log->apply_retention(20'000), 5);  // all but the active segment
  EXPECT_EQ(log->log_start_offset(), 5);
}

// segment.ms counts from a segment's first append, not from when it was created: a topic idle for
// longer than segment.ms does not roll right after its first batch.
TEST(PartitionLog, SegmentAgeStartsAtItsFirstAppend) {
  testing::TempDir dir;
  std::string error;
  LogConfig config;
  config.segment_ms = 1000;
  std::string path = dir.path() + "/t-0";
  auto log = PartitionLog::open(path, config, true, error);
  ASSERT_TRUE(log) << error;
  auto first = build_batch({{"k", "1"}});
  ASSERT_EQ(log->append(first, 100'000).error, ErrorCode::kNone);
  auto second = build_batch({{"k", "2"}});
  ASSERT_EQ(log->append(second, 100'900).error, ErrorCode::kNone);
  log->maybe_roll(100'999);
  EXPECT_EQ(count_segments(path), 1);
  log->maybe_roll(101'000);
  EXPECT_EQ(count_segments(path), 2);
  // The new segment's age starts with its own first batch, however late that comes.
  auto third = build_batch({{"k", "3"}});
  ASSERT_EQ(log->append(third, 500'000).error, ErrorCode::kNone);
  auto fourth = build_batch({{"k", "4"}});
  ASSERT_EQ(log->append(fourth, 500'999).error, ErrorCode::kNone);
  EXPECT_EQ(count_segments(path), 2);
  auto fifth = build_batch({{"k", "5"}});
  ASSERT_EQ(log->append(fifth, 501'000).base_offset, 4);
  EXPECT_EQ(count_segments(path), 3);
}

TEST(PartitionLog, CrashRecoveryTruncatesTornWriteAndKeepsOffsets) {
  testing::TempDir dir;
  std::string error;
  std::string path = dir.path() + "/t-0";
  {
    auto log = PartitionLog::open(path, LogConfig{}, true, error);
    for (int i = 0; i < 10; ++i) {
      auto batch = build_batch({{"k", "v"}, {"k", "w"}});
      log->append(batch, 0);
    }
  }
  auto torn = build_batch({{"k", "torn"}});
  {
    File f = File::open(path + "/00000000000000000000.log", false, error);
    f.write_at(torn.data(), 30, static_cast<uint64_t>(f.size()));
  }
  auto log = PartitionLog::open(path, LogConfig{}, /*clean=*/false, error);
  ASSERT_TRUE(log);
  EXPECT_EQ(log->log_end_offset(), 20);
  auto next = build_batch({{"k", "after"}});
  EXPECT_EQ(log->append(next, 0).base_offset, 20);
}

TEST(PartitionLog, FlushWakesWaitersAndPolicyAsksForIt) {
  testing::TempDir dir;
  std::string error;
  LogConfig config;
  config.flush_messages = 1;
  auto log = PartitionLog::open(dir.path() + "/t-0", config, true, error);
  auto batch = build_batch({{"k", "v"}});
  auto r = log->append(batch, 0);
  EXPECT_TRUE(r.wait_for_flush);
  auto waiter = std::make_shared<CountingWaiter>();
  log->wait_flushed(r.last_offset, waiter);
  EXPECT_EQ(waiter->woken, 0);
  EXPECT_TRUE(log->needs_flush(0));
  ASSERT_TRUE(log->flush());
  EXPECT_EQ(waiter->woken, 1);
  EXPECT_EQ(log->flushed_offset(), 1);
  auto late = std::make_shared<CountingWaiter>();
  log->wait_flushed(r.last_offset, late);  // already durable: woken at once
  EXPECT_EQ(late->woken, 1);
}

TEST(PartitionLog, DataWaitersWakeOnAppendAndExpireQuietly) {
  testing::TempDir dir;
  std::string error;
  auto log = PartitionLog::open(dir.path() + "/t-0", LogConfig{}, true, error);
  auto waiter = std::make_shared<CountingWaiter>();
  log->wait_for_data(waiter);
  {
    auto gone = std::make_shared<CountingWaiter>();
    log->wait_for_data(gone);
  }
  auto batch = build_batch({{"k", "v"}});
  log->append(batch, 0);
  EXPECT_EQ(waiter->woken, 1);
  auto again = build_batch({{"k", "v"}});
  log->append(again, 0);
  EXPECT_EQ(waiter->woken, 1);  // one-shot
}

TEST(PartitionLog, LogAppendTimeStampsBatches) {
  testing::TempDir dir;
  std::string error;
  LogConfig config;
  config.log_append_time = true;
  auto log = PartitionLog::open(dir.path() + "/t-0", config, true, error);
  auto batch = build_batch({{"k", "v"}}, 5);
  auto r = log->append(batch, 777);
  EXPECT_EQ(r.log_append_time_ms, 777);
  auto bytes = read_slice(log->read(0, 1000, true).slice);
  EXPECT_EQ(pr::read_batch_header(bytes.data()).max_timestamp, 777);
}

}  // namespace oxbow::storage

namespace oxbow::storage {

TEST(PartitionLog, DeleteRecordsMovesStartDurablyAndDropsWholeSegments) {
  testing::TempDir dir;
  std::string error;
  std::string path = dir.path() + "/t-0";
  LogConfig config;
  config.segment_bytes = 1000;
  {
    auto log = PartitionLog::open(path, config, true, error);
    for (int i = 0; i < 20; ++i) {
      auto batch = protocol::build_batch({{"k", std::string(300, 'a')}});
      log->append(batch, 0);
    }
    int64_t start = -1;
    EXPECT_EQ(log->delete_records_before(21, start), protocol::ErrorCode::kOffsetOutOfRange);
    EXPECT_EQ(log->delete_records_before(7, start), protocol::ErrorCode::kNone);
    EXPECT_EQ(start, 7);
    EXPECT_EQ(log->read(6, 100, true).error, protocol::ErrorCode::kOffsetOutOfRange);
    EXPECT_EQ(log->read(7, 100, true).error, protocol::ErrorCode::kNone);
    EXPECT_EQ(log->delete_records_before(3, start), protocol::ErrorCode::kNone);  // never backwards
    EXPECT_EQ(start, 7);
    log->close();
  }
  EXPECT_LT(count_segments(path), 18);  // segments wholly below offset 7 are gone
  auto log = PartitionLog::open(path, config, true, error);
  EXPECT_EQ(log->log_start_offset(), 7);
  int64_t start = -1;
  EXPECT_EQ(log->delete_records_before(-1, start),
            protocol::ErrorCode::kNone);  // -1: the high watermark
  EXPECT_EQ(start, 20);
}

}  // namespace oxbow::storage
