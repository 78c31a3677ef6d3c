#include "storage/producer_state.h"

#include <gtest/gtest.h>

#include "protocol/batch_builder.h"
#include "storage/partition_log.h"
#include "storage/test_dir.h"

namespace oxbow::storage {

using protocol::ErrorCode;

TEST(ProducerState, SequencesMustFollowAndRetriesAreRecognised) {
  ProducerState state;
  EXPECT_EQ(state.check(7, 0, 0, 5).error, ErrorCode::kNone);
  state.update(7, 0, 0, 5, 100, 104, 1);
  EXPECT_EQ(state.check(7, 0, 5, 3).error, ErrorCode::kNone);
  EXPECT_EQ(state.check(7, 0, 6, 3).error, ErrorCode::kOutOfOrderSequenceNumber);
  auto retry = state.check(7, 0, 0, 5);
  ASSERT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.duplicate->first_offset, 100);
  EXPECT_EQ(state.check(7, -1, 5, 1).error, ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(state.check(7, 1, 3, 1).error, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(state.check(7, 1, 0, 1).error, ErrorCode::kNone);
}

TEST(ProducerState, OnlyTheLastFiveBatchesAreKept) {
  ProducerState state;
  for (int i = 0; i < 7; ++i) state.update(1, 0, i * 10, 10, i * 10, i * 10 + 9, 0);
  EXPECT_FALSE(state.check(1, 0, 0, 10).duplicate);   // evicted
  EXPECT_TRUE(state.check(1, 0, 20, 10).duplicate);   // 3rd of 7: still cached
}

TEST(ProducerState, SequenceWrapsAround) {
  ProducerState state;
  state.update(1, 0, INT32_MAX - 1, 2, 0, 1, 0);
  EXPECT_EQ(state.check(1, 0, 0, 1).error, ErrorCode::kNone);
}

TEST(ProducerState, SerializesAndParses) {
  ProducerState state;
  state.update(3, 2, 0, 4, 10, 13, 99);
  ProducerState back;
  ASSERT_TRUE(back.parse(state.serialize()));
  ASSERT_TRUE(back.check(3, 2, 0, 4).duplicate);
  EXPECT_EQ(back.check(3, 2, 5, 1).error, ErrorCode::kOutOfOrderSequenceNumber);
}

TEST(PartitionLogIdempotence, RetryGetsOriginalOffsetAndStateSurvivesRestart) {
  testing::TempDir dir;
  std::string error;
  std::string path = dir.path() + "/t-0";
  protocol::ProducerFields producer{42, 0, 0, false};
  {
    auto log = PartitionLog::open(path, LogConfig{}, true, error);
    auto other = protocol::build_batch({{"k", "x"}});
    log->append(other, 0);
    auto batch = protocol::build_batch({{"k", "a"}, {"k", "b"}}, 1000, 0, producer);
    auto first = log->append(batch, 0);
    ASSERT_EQ(first.error, ErrorCode::kNone);
    EXPECT_EQ(first.base_offset, 1);
    auto retry_bytes = protocol::build_batch({{"k", "a"}, {"k", "b"}}, 1000, 0, producer);
    auto retry = log->append(retry_bytes, 0);
    EXPECT_EQ(retry.error, ErrorCode::kNone);
    EXPECT_EQ(retry.base_offset, 1);
    EXPECT_EQ(log->log_end_offset(), 3);
    auto gap = protocol::build_batch({{"k", "c"}}, 1000, 0, {42, 0, 5, false});
    EXPECT_EQ(log->append(gap, 0).error, ErrorCode::kOutOfOrderSequenceNumber);
    log->close();
  }
  for (bool clean : {true, false}) {
    // Clean: from the snapshot. Crash: rebuilt from the batch headers.
    if (!clean) std::filesystem::remove(path + "/00000000000000000003.snapshot");
    auto log = PartitionLog::open(path, LogConfig{}, clean, error);
    auto retry_bytes = protocol::build_batch({{"k", "a"}, {"k", "b"}}, 1000, 0, producer);
    auto retry = log->append(retry_bytes, 0);
    EXPECT_EQ(retry.base_offset, 1) << "clean=" << clean;
    EXPECT_EQ(log->log_end_offset(), 3);
    log->close();
  }
}

}  // namespace oxbow::storage
