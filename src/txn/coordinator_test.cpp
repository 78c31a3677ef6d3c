#include "txn/transaction_coordinator.h"

#include <gtest/gtest.h>

namespace oxbow::txn {

namespace {

class MemoryLog : public KeyedLog {
 public:
  int32_t partitions() const override { return 4; }
  bool append(int32_t, const KeyedRecords& records) override {
    for (const auto& r : records) entries.push_back(r);
    return true;
  }
  int16_t append_transactional(int32_t, const KeyedRecords&, int64_t, int16_t) override {
    return 0;
  }
  void replay(const RecordVisitor& on_record, const MarkerVisitor&) override {
    for (const auto& [key, value] : entries) {
      on_record(key, value ? std::optional<std::string_view>(*value) : std::nullopt, -1);
    }
  }
  KeyedRecords entries;
};

struct Marker {
  TopicPartition tp;
  int64_t producer_id;
  int16_t epoch;
  bool commit;
};

class FakePartitions : public PartitionWriter {
 public:
  bool exists(const TopicPartition& tp) override { return tp.first != "missing"; }
  ErrorCode allow(const TopicPartition& tp, int64_t, int16_t epoch) override {
    allowed.emplace_back(tp, epoch);
    return ErrorCode::kNone;
  }
  ErrorCode write_marker(const TopicPartition& tp, int64_t producer_id, int16_t epoch, bool commit,
                         int32_t) override {
    if (fail_markers) return ErrorCode::kKafkaStorageError;
    markers.push_back({tp, producer_id, epoch, commit});
    return ErrorCode::kNone;
  }
  std::vector<std::pair<TopicPartition, int16_t>> allowed;
  std::vector<Marker> markers;
  bool fail_markers = false;
};

struct Fixture {
  MemoryLog log;
  FakePartitions partitions;
  int64_t next_id = 1000;
  TxnOptions options;
  std::unique_ptr<TransactionCoordinator> make() {
    options.abort_check_interval_ms = 3600 * 1000;  // ticks are driven by the test
    auto c = std::make_unique<TransactionCoordinator>(options, log, partitions,
                                                      [this] { return next_id++; });
    c->start();
    return c;
  }
};

}  // namespace

TEST(TxnRecords, ValueRoundTrip) {
  TxnMetadata m;
  m.producer_id = 5;
  m.producer_epoch = 3;
  m.timeout_ms = 1234;
  m.state = TxnState::kOngoing;
  m.partitions = {{"a", 0}, {"a", 2}, {"b", 1}};
  m.last_update_ms = 10;
  m.start_ms = 9;
  auto back = decode_txn_value(encode_txn_value(m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->producer_id, 5);
  EXPECT_EQ(back->producer_epoch, 3);
  EXPECT_EQ(back->state, TxnState::kOngoing);
  EXPECT_EQ(back->partitions, m.partitions);
  EXPECT_EQ(back->start_ms, 9);
  EXPECT_EQ(decode_txn_key(encode_txn_key("tid")), "tid");
  EXPECT_FALSE(decode_txn_value("\x00"));
  EXPECT_EQ(state_from_name("CompleteAbort"), TxnState::kCompleteAbort);
}

TEST(TransactionCoordinator, CommitWritesMarkersToEveryPartition) {
  Fixture f;
  auto c = f.make();
  auto init = c->init_producer("t", 60000, -1, -1);
  ASSERT_EQ(init.error, ErrorCode::kNone);
  EXPECT_EQ(init.producer_epoch, 0);
  auto errors = c->add_partitions("t", init.producer_id, 0, {{"a", 0}, {"b", 1}});
  EXPECT_EQ(errors, std::vector<ErrorCode>(2, ErrorCode::kNone));
  EXPECT_EQ(f.partitions.allowed.size(), 2u);
  EXPECT_EQ(c->describe("t")->state, TxnState::kOngoing);
  EXPECT_EQ(c->end_transaction("t", init.producer_id, 0, true), ErrorCode::kNone);
  ASSERT_EQ(f.partitions.markers.size(), 2u);
  EXPECT_TRUE(f.partitions.markers[0].commit);
  EXPECT_EQ(c->describe("t")->state, TxnState::kCompleteCommit);
  // A retried EndTxn is answered the same; the opposite outcome is refused.
  EXPECT_EQ(c->end_transaction("t", init.producer_id, 0, true), ErrorCode::kNone);
  EXPECT_EQ(c->end_transaction("t", init.producer_id, 0, false), ErrorCode::kInvalidTxnState);
}

TEST(TransactionCoordinator, ErrorsForUnknownIdsEpochsAndPartitions) {
  Fixture f;
  auto c = f.make();
  EXPECT_EQ(c->end_transaction("nope", 1, 0, true), ErrorCode::kInvalidProducerIdMapping);
  EXPECT_EQ(c->init_producer("t", 0, -1, -1).error, ErrorCode::kInvalidTransactionTimeout);
  EXPECT_EQ(c->init_producer("t", 900001, -1, -1).error, ErrorCode::kInvalidTransactionTimeout);
  auto init = c->init_producer("t", 1000, -1, -1);
  EXPECT_EQ(c->add_partitions("t", init.producer_id, 1, {{"a", 0}})[0], ErrorCode::kProducerFenced);
  EXPECT_EQ(c->add_partitions("t", init.producer_id + 1, 0, {{"a", 0}})[0],
            ErrorCode::kInvalidProducerIdMapping);
  auto errors = c->add_partitions("t", init.producer_id, 0, {{"a", 0}, {"missing", 0}});
  EXPECT_EQ(errors[0], ErrorCode::kOperationNotAttempted);
  EXPECT_EQ(errors[1], ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(c->end_transaction("t", init.producer_id, 0, true),
            ErrorCode::kInvalidTxnState);  // nothing added
}

TEST(TransactionCoordinator, ReinitialisingFencesTheOngoingTransaction) {
  Fixture f;
  auto c = f.make();
  auto first = c->init_producer("t", 60000, -1, -1);
  c->add_partitions("t", first.producer_id, 0, {{"a", 0}});
  auto second = c->init_producer("t", 60000, -1, -1);
  ASSERT_EQ(second.error, ErrorCode::kNone);
  EXPECT_EQ(second.producer_id, first.producer_id);
  EXPECT_EQ(second.producer_epoch, 2);
  ASSERT_EQ(f.partitions.markers.size(), 1u);
  EXPECT_FALSE(f.partitions.markers[0].commit);
  EXPECT_EQ(f.partitions.markers[0].epoch, 1);  // newer than the zombie's
  EXPECT_EQ(c->end_transaction("t", first.producer_id, 0, true), ErrorCode::kProducerFenced);
  EXPECT_EQ(c->init_producer("t", 60000, first.producer_id, 0).error, ErrorCode::kProducerFenced);
}

TEST(TransactionCoordinator, TimeoutAbortsAndFences) {
  Fixture f;
  auto c = f.make();
  auto init = c->init_producer("t", 1000, -1, -1);
  c->add_partitions("t", init.producer_id, 0, {{"a", 0}});
  int64_t start = c->describe("t")->start_ms;
  c->tick(start + 500);
  EXPECT_TRUE(f.partitions.markers.empty());
  c->tick(start + 1001);
  ASSERT_EQ(f.partitions.markers.size(), 1u);
  EXPECT_FALSE(f.partitions.markers[0].commit);
  EXPECT_EQ(c->describe("t")->state, TxnState::kCompleteAbort);
  EXPECT_EQ(c->end_transaction("t", init.producer_id, 0, false), ErrorCode::kProducerFenced);
}

TEST(TransactionCoordinator, RestartResumesOngoingAndFinishesPrepared) {
  Fixture f;
  int64_t pid;
  {
    auto c = f.make();
    auto a = c->init_producer("ongoing", 60000, -1, -1);
    pid = a.producer_id;
    c->add_partitions("ongoing", pid, 0, {{"a", 0}});
    auto b = c->init_producer("prepared", 60000, -1, -1);
    c->add_partitions("prepared", b.producer_id, 0, {{"b", 0}});
    f.partitions.fail_markers = true;  // the crash comes between prepare and the markers
    EXPECT_EQ(c->end_transaction("prepared", b.producer_id, 0, true), ErrorCode::kNone);
    EXPECT_EQ(c->describe("prepared")->state, TxnState::kPrepareCommit);
    EXPECT_EQ(c->add_partitions("prepared", b.producer_id, 0, {{"b", 0}})[0],
              ErrorCode::kConcurrentTransactions);
    c->stop();
  }
  f.partitions.fail_markers = false;
  f.partitions.allowed.clear();
  auto c = f.make();
  EXPECT_EQ(c->describe("prepared")->state, TxnState::kCompleteCommit);
  ASSERT_EQ(f.partitions.markers.size(), 1u);
  EXPECT_TRUE(f.partitions.markers[0].commit);
  EXPECT_EQ(c->describe("ongoing")->state, TxnState::kOngoing);
  ASSERT_EQ(f.partitions.allowed.size(), 1u);  // the ongoing one's partition is allowed again
  EXPECT_EQ(c->end_transaction("ongoing", pid, 0, false), ErrorCode::kNone);
  EXPECT_EQ(c->list({"CompleteAbort"}, {}).size(), 1u);
  EXPECT_EQ(c->list({}, {}).size(), 2u);
}

TEST(TransactionCoordinator, IdleIdsExpire) {
  Fixture f;
  f.options.id_expiration_ms = 1000;
  auto c = f.make();
  c->init_producer("t", 60000, -1, -1);
  int64_t updated = c->describe("t")->last_update_ms;
  c->tick(updated + 1001);
  EXPECT_FALSE(c->describe("t"));
  EXPECT_FALSE(f.log.entries.back().second);  // a tombstone
}

}  // namespace oxbow::txn
