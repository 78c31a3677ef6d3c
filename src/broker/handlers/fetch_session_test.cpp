#include "broker/handlers/fetch_session.h"

#include <gtest/gtest.h>

namespace oxbow::broker {
namespace {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

constexpr int16_t kVersion = 12;  // topics by name

pr::FetchRequest request(int32_t session_id, int32_t epoch,
                         std::vector<std::pair<int32_t, int64_t>> partitions = {},
                         std::vector<int32_t> forgotten = {}) {
  pr::FetchRequest r;
  r.session_id = session_id;
  r.session_epoch = epoch;
  if (!partitions.empty()) {
    auto& topic = r.topics.emplace_back();
    topic.topic = "t";
    for (auto [partition, offset] : partitions) {
      pr::FetchRequest::FetchPartition p;
      p.partition = partition;
      p.fetch_offset = offset;
      p.partition_max_bytes = 1024;
      topic.partitions.push_back(p);
    }
  }
  if (!forgotten.empty()) r.forgotten_topics_data.push_back({"t", {}, forgotten});
  return r;
}

// The response a read of `r` gives: every partition at high watermark `hw`, records where named.
pr::FetchResponse answer(const pr::FetchRequest& r, int64_t hw,
                         std::set<int32_t> with_records = {}) {
  pr::FetchResponse response;
  for (const auto& topic : r.topics) {
    auto& out = response.responses.emplace_back();
    out.topic = topic.topic;
    for (const auto& p : topic.partitions) {
      auto& part = out.partitions.emplace_back();
      part.partition_index = p.partition;
      part.high_watermark = hw;
      part.log_start_offset = 0;
      if (with_records.contains(p.partition)) part.records.slices.push_back({-1, 0, 10, nullptr});
    }
  }
  return response;
}

std::vector<int32_t> partitions_of(const pr::FetchRequest& r) {
  std::vector<int32_t> out;
  for (const auto& t : r.topics) {
    for (const auto& p : t.partitions) out.push_back(p.partition);
  }
  return out;
}

std::vector<int32_t> partitions_of(const pr::FetchResponse& r) {
  std::vector<int32_t> out;
  for (const auto& t : r.responses) {
    for (const auto& p : t.partitions) out.push_back(p.partition_index);
  }
  return out;
}

// One round trip: begin, read (as `answer`), select, commit.
pr::FetchResponse round_trip(FetchSessions& sessions, pr::FetchRequest r, int64_t hw,
                             std::set<int32_t> with_records = {}, int64_t now = 0,
                             pr::FetchRequest* fetched = nullptr) {
  auto context = sessions.begin(r, kVersion, now);
  auto response =
      context.error == ErrorCode::kNone ? answer(r, hw, with_records) : pr::FetchResponse{};
  sessions.select(context, response);
  sessions.commit(context, r, response, false, now);
  if (fetched) *fetched = r;
  return response;
}

TEST(FetchSessionsTest, AFullFetchAtEpochZeroOpensASessionAndOthersDoNot) {
  FetchSessions sessions(10);
  auto opened = round_trip(sessions, request(0, 0, {{0, 0}, {1, 0}}), 5);
  EXPECT_NE(opened.session_id, 0);
  EXPECT_EQ(partitions_of(opened), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(round_trip(sessions, request(0, -1, {{0, 0}}), 5).session_id, 0);
  auto old = request(0, 0, {{0, 0}});
  auto context = sessions.begin(old, 6, 0);  // before v7: no sessions
  EXPECT_FALSE(context.create_session);
  EXPECT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions.partitions(), 2u);
}

TEST(FetchSessionsTest, AnIncrementalFetchReadsTheWholeSessionAndTellsOnlyWhatIsNew) {
  FetchSessions sessions(10);
  int32_t id = round_trip(sessions, request(0, 0, {{0, 0}, {1, 0}, {2, 0}}), 5).session_id;
  pr::FetchRequest fetched;
  // Nothing changed: every partition is read, none is told.
  auto quiet = round_trip(sessions, request(id, 1), 5, {}, 1, &fetched);
  EXPECT_EQ(quiet.session_id, id);
  EXPECT_EQ(quiet.error_code, 0);
  EXPECT_EQ(partitions_of(fetched), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_TRUE(quiet.responses.empty());
  // Records on 1, and the high watermark moved everywhere.
  auto moved = round_trip(sessions, request(id, 2), 7, {1}, 2);
  EXPECT_EQ(partitions_of(moved), (std::vector<int32_t>{0, 1, 2}));
  // Partition 1 returned records: it is read last from now on, at the position the client sends.
  auto next = round_trip(sessions, request(id, 3, {{1, 7}}), 7, {}, 3, &fetched);
  EXPECT_EQ(partitions_of(fetched), (std::vector<int32_t>{0, 2, 1}));
  EXPECT_EQ(fetched.topics[0].partitions.back().fetch_offset, 7);
  EXPECT_TRUE(next.responses.empty());
}

TEST(FetchSessionsTest, ErrorsAreToldUntilTheyAreGone) {
  FetchSessions sessions(10);
  int32_t id = round_trip(sessions, request(0, 0, {{0, 0}}), 5).session_id;
  auto r = request(id, 1);
  auto context = sessions.begin(r, kVersion, 0);
  auto response = answer(r, -1);
  response.responses[0].partitions[0].error_code = pr::code(ErrorCode::kNotLeaderOrFollower);
  sessions.select(context, response);
  sessions.commit(context, r, response, false, 0);
  EXPECT_EQ(partitions_of(response), (std::vector<int32_t>{0}));
  // Back at the same high watermark as before the error: told again.
  EXPECT_EQ(partitions_of(round_trip(sessions, request(id, 2), 5)), (std::vector<int32_t>{0}));
  EXPECT_TRUE(round_trip(sessions, request(id, 3), 5).responses.empty());
}

TEST(FetchSessionsTest, SessionErrorsAsKafkaAnswersThem) {
  FetchSessions sessions(10);
  int32_t id = round_trip(sessions, request(0, 0, {{0, 0}}), 5).session_id;
  EXPECT_EQ(round_trip(sessions, request(id + 1, 1), 5).error_code,
            pr::code(ErrorCode::kFetchSessionIdNotFound));
  auto stale = round_trip(sessions, request(id, 2), 5);
  EXPECT_EQ(stale.error_code, pr::code(ErrorCode::kInvalidFetchSessionEpoch));
  EXPECT_EQ(stale.session_id, 0);
  auto by_id = request(id, 1);
  EXPECT_EQ(sessions.begin(by_id, 13, 0).error, ErrorCode::kFetchSessionTopicIdError);
  // The errors left the session as it was: epoch 1 is still the one it expects.
  EXPECT_EQ(round_trip(sessions, request(id, 1), 5).error_code, 0);
}

TEST(FetchSessionsTest, ForgettingEverythingOrAFullFetchEndsTheSession) {
  FetchSessions sessions(10);
  int32_t id = round_trip(sessions, request(0, 0, {{0, 0}, {1, 0}}), 5).session_id;
  pr::FetchRequest fetched;
  round_trip(sessions, request(id, 1, {}, {0}), 5, {}, 0, &fetched);
  EXPECT_EQ(partitions_of(fetched), (std::vector<int32_t>{1}));
  auto last = round_trip(sessions, request(id, 2, {}, {1}), 5, {}, 0, &fetched);
  EXPECT_EQ(last.session_id, 0);
  EXPECT_TRUE(partitions_of(fetched).empty());
  EXPECT_EQ(sessions.size(), 0u);
  id = round_trip(sessions, request(0, 0, {{0, 0}}), 5).session_id;
  EXPECT_EQ(round_trip(sessions, request(id, -1, {{0, 0}}), 5).session_id, 0);  // final
  EXPECT_EQ(sessions.size(), 0u);
}

TEST(FetchSessionsTest, AThrottledResponseTellsNothingAndOpensNothing) {
  FetchSessions sessions(10);
  auto full = request(0, 0, {{0, 0}});
  auto context = sessions.begin(full, kVersion, 0);
  auto response = answer(full, 5);
  sessions.select(context, response);
  response.responses.clear();
  sessions.commit(context, full, response, true, 0);
  EXPECT_EQ(response.session_id, 0);
  EXPECT_EQ(sessions.size(), 0u);

  int32_t id = round_trip(sessions, request(0, 0, {{0, 0}}), 5).session_id;
  auto r = request(id, 1);
  context = sessions.begin(r, kVersion, 0);
  response = answer(r, 9);
  sessions.select(context, response);
  response.responses.clear();
  sessions.commit(context, r, response, true, 0);
  // The new high watermark was never told, so it still is next time.
  EXPECT_EQ(partitions_of(round_trip(sessions, request(id, 2), 9)), (std::vector<int32_t>{0}));
}

TEST(FetchSessionsTest, AFullCacheMakesRoomOnlyForStaleOrLargerSessions) {
  FetchSessions sessions(1, 1000);
  int32_t first = round_trip(sessions, request(0, 0, {{0, 0}, {1, 0}}), 5, {}, 0).session_id;
  EXPECT_NE(first, 0);
  // Full, and the one session is new: no room.
  EXPECT_EQ(round_trip(sessions, request(0, 0, {{0, 0}, {1, 0}, {2, 0}}), 5, {}, 500).session_id,
            0);
  round_trip(sessions, request(first, 1), 5, {}, 900);  // in use, so not stale
  // Settled but as large as the newcomer: no room either.
  EXPECT_EQ(round_trip(sessions, request(0, 0, {{0, 0}, {1, 0}}), 5, {}, 1500).session_id, 0);
  round_trip(sessions, request(first, 2), 5, {}, 1600);
  // Settled and smaller: evicted for the larger one.
  int32_t larger =
      round_trip(sessions, request(0, 0, {{0, 0}, {1, 0}, {2, 0}}), 5, {}, 1700).session_id;
  EXPECT_NE(larger, 0);
  EXPECT_EQ(round_trip(sessions, request(first, 3), 5, {}, 1800).error_code,
            pr::code(ErrorCode::kFetchSessionIdNotFound));
  // Idle past the eviction time: evicted for anything.
  EXPECT_NE(round_trip(sessions, request(0, 0, {{0, 0}}), 5, {}, 5000).session_id, 0);
  EXPECT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions.evictions(), 2u);
  FetchSessions none(0);
  EXPECT_EQ(round_trip(none, request(0, 0, {{0, 0}}), 5).session_id, 0);
}

}  // namespace
}  // namespace oxbow::broker
