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
  EXPECT_FALSE(state.check(1, 0, 0, 10).duplicate);  // evicted
  EXPECT_TRUE(state.check(1, 0, 20, 10).duplicate);  // 3rd of 7: still cached
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

TEST(ProducerState, TransactionsOpenCloseAndTrackTheStableOffset) {
  ProducerState state;
  EXPECT_EQ(state.check_transactional(9, 0), ErrorCode::kInvalidTxnState);
  EXPECT_EQ(state.allow_transaction(9, 0), ErrorCode::kNone);
  EXPECT_EQ(state.check_transactional(9, 0), ErrorCode::kNone);
  EXPECT_EQ(state.check_transactional(9, 1), ErrorCode::kInvalidTxnState);
  state.update(9, 0, 0, 3, 10, 12, 1, true);
  EXPECT_EQ(state.last_stable_offset(20), 10);
  state.complete_transaction(9, 0, false, 0, 13);
  EXPECT_EQ(state.last_stable_offset(20), 20);
  // Once the marker is written, a late retry cannot reopen the transaction.
  EXPECT_EQ(state.check_transactional(9, 0), ErrorCode::kInvalidTxnState);
  auto aborted = state.aborted_between(0, 20);
  ASSERT_EQ(aborted.size(), 1u);
  EXPECT_EQ(aborted[0].first_offset, 10);
  EXPECT_EQ(aborted[0].last_offset, 13);
  EXPECT_TRUE(state.aborted_between(14, 20).empty());
  EXPECT_TRUE(state.aborted_between(0, 10).empty());

  ProducerState back;
  ASSERT_TRUE(back.parse(state.serialize()));
  EXPECT_EQ(back.aborted_between(0, 20).size(), 1u);
  back.trim_before(14);
  EXPECT_TRUE(back.aborted_between(0, 20).empty());
  // A marker of an older epoch is stale; an epoch bump (fencing) resets the sequences.
  state.complete_transaction(9, 2, false, 0, 30);
  EXPECT_FALSE(state.check_marker(9, 1));
  EXPECT_EQ(state.check(9, 3, 5, 1).error, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_FALSE(ProducerState().parse("7 0 0\n"));  // an old-format snapshot is rebuilt from the log
}

TEST(PartitionLogTransactions, MarkersMoveTheStableOffsetAndSurviveRestart) {
  testing::TempDir dir;
  std::string error;
  std::string path = dir.path() + "/t-0";
  protocol::ProducerFields txn{77, 0, 0, true};
  {
    auto log = PartitionLog::open(path, LogConfig{}, true, error);
    auto plain = protocol::build_batch({{"k", "plain"}});
    ASSERT_EQ(log->append(plain, 0).error, ErrorCode::kNone);
    auto unverified = protocol::build_batch({{"k", "a"}}, 1000, 0, txn);
    EXPECT_EQ(log->append(unverified, 0).error, ErrorCode::kInvalidTxnState);
    EXPECT_EQ(log->log_end_offset(), 1);
    ASSERT_EQ(log->allow_transaction(77, 0), ErrorCode::kNone);
    auto batch = protocol::build_batch({{"k", "a"}, {"k", "b"}}, 1000, 0, txn);
    ASSERT_EQ(log->append(batch, 0).error, ErrorCode::kNone);
    EXPECT_EQ(log->last_stable_offset(), 1);
    EXPECT_EQ(log->high_watermark(), 3);
    auto committed = log->read(0, 1 << 20, true, true);
    auto all = log->read(0, 1 << 20, true, false);
    EXPECT_LT(committed.slice.length, all.slice.length);
    EXPECT_EQ(log->read(1, 1 << 20, true, true).slice.length, 0u);
    auto client_marker = protocol::build_control_batch(txn, protocol::ControlType::kCommit, 0, 0);
    EXPECT_EQ(log->append(client_marker, 0).error, ErrorCode::kInvalidRecord);
    auto marker = log->write_marker(77, 0, false, 0, 0);
    ASSERT_EQ(marker.error, ErrorCode::kNone);
    EXPECT_EQ(marker.base_offset, 3);
    EXPECT_EQ(log->last_stable_offset(), 4);
    auto read = log->read(1, 1 << 20, true, true);
    ASSERT_EQ(read.aborted.size(), 1u);
    EXPECT_EQ(read.aborted[0].first_offset, 1);
    // A second transaction stays open across the restarts below.
    ASSERT_EQ(log->allow_transaction(77, 0), ErrorCode::kNone);
    auto second = protocol::build_batch({{"k", "c"}}, 1000, 0, {77, 0, 2, true});
    ASSERT_EQ(log->append(second, 0).error, ErrorCode::kNone);
    EXPECT_EQ(log->last_stable_offset(), 4);
    log->close();
  }
  for (bool clean : {true, false}) {
    if (!clean) std::filesystem::remove(path + "/00000000000000000005.snapshot");
    auto log = PartitionLog::open(path, LogConfig{}, clean, error);
    EXPECT_EQ(log->last_stable_offset(), 4) << "clean=" << clean;
    EXPECT_EQ(log->read(0, 1 << 20, true, true).aborted.size(), 1u) << "clean=" << clean;
    log->close();
  }
}

}  // namespace oxbow::storage
