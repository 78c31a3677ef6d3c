#include "group/group.h"

#include <gtest/gtest.h>

#include "group/classic_group_records.h"
#include "protocol/wire.h"

namespace oxbow::group {

namespace {

JoinRequest join_request(const std::string& member, std::vector<std::string> protocols = {"range"},
                         std::optional<std::string> instance = std::nullopt) {
  JoinRequest r;
  r.group_id = "g";
  r.member_id = member;
  r.group_instance_id = instance;
  r.client_id = "client";
  r.session_timeout_ms = 10000;
  r.rebalance_timeout_ms = 5000;
  r.protocol_type = "consumer";
  for (auto& p : protocols) r.protocols.push_back({p, Bytes{1, 2, 3}});
  return r;
}

struct Captured {
  std::optional<JoinResult> join;
  std::optional<SyncResult> sync;
};

void run(Completions& c) {
  for (auto& f : c) f();
  c.clear();
}

// Joins (handling MEMBER_ID_REQUIRED) and returns the capture.
std::shared_ptr<Captured> join(Group& g, JoinRequest r, int64_t now) {
  auto cap = std::make_shared<Captured>();
  Completions c;
  g.join(
      r, now, [cap](JoinResult res) { cap->join = res; }, c);
  run(c);
  return cap;
}

std::shared_ptr<Captured> sync(Group& g, const std::string& member, int32_t generation,
                               std::vector<std::pair<std::string, Bytes>> assignments, int64_t now,
                               const Group::StoreGroup& store = nullptr) {
  auto cap = std::make_shared<Captured>();
  SyncRequest r;
  r.group_id = "g";
  r.member_id = member;
  r.generation = generation;
  r.assignments = std::move(assignments);
  Completions c;
  g.sync(
      r, now, [cap](SyncResult res) { cap->sync = res; }, c, store);
  run(c);
  return cap;
}

}  // namespace

TEST(Group, FirstJoinWithoutIdGetsMemberIdRequired) {
  Group g("g", 0);
  auto r = join_request("");
  r.require_known_member_id = true;
  auto cap = join(g, r, 0);
  ASSERT_TRUE(cap->join);
  EXPECT_EQ(cap->join->error, ErrorCode::kMemberIdRequired);
  EXPECT_FALSE(cap->join->member_id.empty());
  auto again = join(g, join_request(cap->join->member_id), 1);
  ASSERT_TRUE(again->join);
  EXPECT_EQ(again->join->error, ErrorCode::kNone);
  EXPECT_EQ(again->join->generation, 1);
  EXPECT_EQ(again->join->leader, cap->join->member_id);
  EXPECT_EQ(again->join->members.size(), 1u);
  EXPECT_EQ(g.state(), GroupState::kCompletingRebalance);
}

TEST(Group, TwoMembersRebalanceLeaderAssigns) {
  Group g("g", 0);
  auto a = join(g, join_request(""), 0);
  std::string a_id = a->join->member_id;
  EXPECT_EQ(g.state(), GroupState::kCompletingRebalance);
  auto s = sync(g, a_id, 1, {{a_id, {9}}}, 1);
  EXPECT_EQ(g.state(), GroupState::kStable);
  EXPECT_EQ(s->sync->assignment, Bytes{9});

  // A second member triggers a rebalance; the first learns of it by heartbeat and rejoins.
  auto b = join(g, join_request(""), 2);
  EXPECT_FALSE(b->join);  // waiting for the others
  EXPECT_EQ(g.state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(g.heartbeat(a_id, std::nullopt, 1, 3), ErrorCode::kRebalanceInProgress);
  auto a2 = join(g, join_request(a_id), 4);
  ASSERT_TRUE(a2->join && b->join);
  EXPECT_EQ(a2->join->generation, 2);
  EXPECT_EQ(a2->join->leader, a_id);
  EXPECT_EQ(a2->join->members.size(), 2u);
  EXPECT_TRUE(b->join->members.empty());
  std::string b_id = b->join->member_id;

  auto bs = sync(g, b_id, 2, {}, 5);
  EXPECT_FALSE(bs->sync);  // waits for the leader
  auto as = sync(g, a_id, 2, {{a_id, {1}}, {b_id, {2}}}, 6);
  ASSERT_TRUE(bs->sync);
  EXPECT_EQ(bs->sync->assignment, Bytes{2});
  EXPECT_EQ(as->sync->assignment, Bytes{1});
  EXPECT_EQ(g.state(), GroupState::kStable);
  EXPECT_EQ(g.heartbeat(b_id, std::nullopt, 1, 7), ErrorCode::kIllegalGeneration);
  EXPECT_EQ(g.heartbeat("nobody", std::nullopt, 2, 7), ErrorCode::kUnknownMemberId);
}

TEST(Group, SessionExpiryRemovesMemberAndRebalances) {
  Group g("g", 0);
  auto a = join(g, join_request(""), 0);
  auto b = join(g, join_request(""), 0);
  std::string a_id = a->join ? a->join->member_id : "";
  // a completed alone at generation 1; b's join started generation 2 which needs a to rejoin.
  auto a2 = join(g, join_request(a_id), 1);
  std::string b_id = b->join->member_id;
  sync(g, a_id, 2, {{a_id, {1}}, {b_id, {2}}}, 2);
  sync(g, b_id, 2, {}, 2);
  ASSERT_EQ(g.state(), GroupState::kStable);
  Completions c;
  g.heartbeat(a_id, std::nullopt, 2, 9000);
  g.tick(10'500, c);  // b's session (10 s from t=2) is over, a heartbeated at 9000
  run(c);
  EXPECT_FALSE(g.is_member(b_id));
  EXPECT_TRUE(g.is_member(a_id));
  EXPECT_EQ(g.state(), GroupState::kPreparingRebalance);
  auto a3 = join(g, join_request(a_id), 10'600);
  ASSERT_TRUE(a3->join);
  EXPECT_EQ(a3->join->generation, 3);
}

TEST(Group, RebalanceTimeoutDropsMembersThatDoNotRejoin) {
  Group g("g", 0);
  auto a = join(g, join_request(""), 0);
  std::string a_id = a->join->member_id;
  sync(g, a_id, 1, {}, 0);
  auto b = join(g, join_request(""), 100);  // a never rejoins
  EXPECT_FALSE(b->join);
  Completions c;
  g.tick(100 + 5000, c);  // a's rebalance timeout
  run(c);
  ASSERT_TRUE(b->join);
  EXPECT_EQ(b->join->error, ErrorCode::kNone);
  EXPECT_EQ(b->join->leader, b->join->member_id);
  EXPECT_FALSE(g.is_member(a_id));
}

TEST(Group, StaticMemberRejoinKeepsAssignmentWithoutRebalance) {
  Group g("g", 0);
  auto a = join(g, join_request("", {"range"}, "instance-a"), 0);
  std::string a_id = a->join->member_id;
  auto b = join(g, join_request("", {"range"}, "instance-b"), 0);
  join(g, join_request(a_id, {"range"}, "instance-a"), 1);
  std::string b_id = b->join->member_id;
  sync(g, a_id, 2, {{a_id, {1}}, {b_id, {2}}}, 2);
  sync(g, b_id, 2, {}, 2);
  ASSERT_EQ(g.state(), GroupState::kStable);
  // b restarts: joins with its instance id and no member id.
  auto b2 = join(g, join_request("", {"range"}, "instance-b"), 3);
  ASSERT_TRUE(b2->join);
  EXPECT_EQ(b2->join->error, ErrorCode::kNone);
  EXPECT_EQ(b2->join->generation, 2);
  EXPECT_EQ(g.state(), GroupState::kStable);
  auto s = sync(g, b2->join->member_id, 2, {}, 4);
  EXPECT_EQ(s->sync->assignment, Bytes{2});
  // The old incarnation is fenced.
  EXPECT_EQ(g.heartbeat(b_id, std::string("instance-b"), 2, 5), ErrorCode::kFencedInstanceId);
  EXPECT_EQ(g.heartbeat(a_id, std::nullopt, 2, 5), ErrorCode::kNone);
  // Rejoining with its old member id, it is fenced too, not told to join afresh.
  auto stale = join(g, join_request(b_id, {"range"}, "instance-b"), 5);
  ASSERT_TRUE(stale->join);
  EXPECT_EQ(stale->join->error, ErrorCode::kFencedInstanceId);
  EXPECT_EQ(g.state(), GroupState::kStable);
  // A known member id with an instance id the group has never seen is unknown.
  auto unknown_instance = join(g, join_request(a_id, {"range"}, "instance-z"), 5);
  ASSERT_TRUE(unknown_instance->join);
  EXPECT_EQ(unknown_instance->join->error, ErrorCode::kUnknownMemberId);

  // The leader (a) restarts too: it gets the member list but the assignment stands.
  auto a2 = join(g, join_request("", {"range"}, "instance-a"), 6);
  ASSERT_TRUE(a2->join);
  EXPECT_TRUE(a2->join->skip_assignment);
  EXPECT_EQ(a2->join->leader, a2->join->member_id);
  EXPECT_EQ(a2->join->members.size(), 2u);
  EXPECT_EQ(g.state(), GroupState::kStable);
  auto as = sync(g, a2->join->member_id, 2, {{a2->join->member_id, {7}}}, 7);
  EXPECT_EQ(as->sync->assignment, Bytes{1});
}

// As Kafka's coordinator: a static member back with other metadata for the same protocols (a
// Streams instance's subscription carries its task lags) does not rebalance the group; one whose
// protocols change the group's choice does.
TEST(Group, StaticMemberRejoinWithNewMetadataRebalancesOnlyForANewProtocol) {
  Group g("g", 0);
  auto a = join(g, join_request("", {"range", "roundrobin"}, "instance-a"), 0);
  std::string a_id = a->join->member_id;
  auto b = join(g, join_request("", {"range", "roundrobin"}, "instance-b"), 0);
  join(g, join_request(a_id, {"range", "roundrobin"}, "instance-a"), 1);
  std::string b_id = b->join->member_id;
  sync(g, a_id, 2, {{a_id, {1}}, {b_id, {2}}}, 2);
  sync(g, b_id, 2, {}, 2);
  ASSERT_EQ(g.state(), GroupState::kStable);

  auto lags = join_request("", {"range", "roundrobin"}, "instance-b");
  lags.protocols[0].second = Bytes{9, 9};
  auto b2 = join(g, lags, 3);
  ASSERT_TRUE(b2->join);
  EXPECT_EQ(b2->join->error, ErrorCode::kNone);
  EXPECT_EQ(b2->join->generation, 2);
  EXPECT_EQ(g.state(), GroupState::kStable);
  EXPECT_EQ(sync(g, b2->join->member_id, 2, {}, 4)->sync->assignment, Bytes{2});

  // Back with roundrobin alone, which a supports too: the group's choice would change.
  auto b3 = join(g, join_request("", {"roundrobin"}, "instance-b"), 6);
  EXPECT_FALSE(b3->join);  // waits for the rebalance
  EXPECT_EQ(g.state(), GroupState::kPreparingRebalance);
}

TEST(Group, ProtocolSelectionAndInconsistency) {
  Group g("g", 0);
  auto a = join(g, join_request("", {"cooperative-sticky", "range"}), 0);
  std::string a_id = a->join->member_id;
  auto b = join(g, join_request("", {"range"}), 1);
  join(g, join_request(a_id, {"cooperative-sticky", "range"}), 2);
  ASSERT_TRUE(b->join);
  EXPECT_EQ(b->join->protocol_name, "range");
  auto c = join(g, join_request("", {"roundrobin"}), 3);
  ASSERT_TRUE(c->join);
  EXPECT_EQ(c->join->error, ErrorCode::kInconsistentGroupProtocol);
}

TEST(Group, LeaveLastMemberEmptiesGroup) {
  Group g("g", 0);
  auto a = join(g, join_request(""), 0);
  std::string a_id = a->join->member_id;
  sync(g, a_id, 1, {}, 0);
  Completions c;
  EXPECT_EQ(g.leave(a_id, std::nullopt, 1, c), ErrorCode::kNone);
  EXPECT_EQ(g.state(), GroupState::kEmpty);
  EXPECT_EQ(g.leave(a_id, std::nullopt, 1, c), ErrorCode::kUnknownMemberId);
  EXPECT_EQ(g.check_commit("", std::nullopt, -1, CommitKind::kPlain), ErrorCode::kNone);
}

TEST(Group, CommitsWithoutMembershipInAGroupWithMembersOnlyTransactional) {
  Group g("g", 0);
  auto a = join(g, join_request(""), 0);
  std::string a_id = a->join->member_id;
  // Between the join and the leader's sync: a member of this generation may not commit yet.
  EXPECT_EQ(g.check_commit(a_id, std::nullopt, 1, CommitKind::kPlain),
            ErrorCode::kRebalanceInProgress);
  EXPECT_EQ(g.check_commit(a_id, std::nullopt, 0, CommitKind::kPlain),
            ErrorCode::kIllegalGeneration);
  sync(g, a_id, 1, {}, 0);
  EXPECT_EQ(g.state(), GroupState::kStable);
  // A simple consumer's commit needs an empty group; TxnOffsetCommit v0-v2 names no member.
  EXPECT_EQ(g.check_commit("", std::nullopt, -1, CommitKind::kPlain), ErrorCode::kUnknownMemberId);
  EXPECT_EQ(g.check_commit("", std::nullopt, -1, CommitKind::kTransactional), ErrorCode::kNone);
  // Once a member or generation is named, both kinds are checked alike.
  for (auto kind : {CommitKind::kPlain, CommitKind::kTransactional}) {
    EXPECT_EQ(g.check_commit(a_id, std::nullopt, 1, kind), ErrorCode::kNone);
    EXPECT_EQ(g.check_commit(a_id, std::nullopt, 7, kind), ErrorCode::kIllegalGeneration);
    EXPECT_EQ(g.check_commit("someone-else", std::nullopt, 1, kind), ErrorCode::kUnknownMemberId);
    EXPECT_EQ(g.check_commit("", std::nullopt, 1, kind), ErrorCode::kUnknownMemberId);
  }
}

TEST(Group, InitialRebalanceDelayWaitsForMoreMembers) {
  Group g("g", 3000);
  auto a = join(g, join_request(""), 0);
  EXPECT_FALSE(a->join);
  auto b = join(g, join_request(""), 1000);
  EXPECT_FALSE(b->join);
  Completions c;
  g.tick(3000, c);
  run(c);
  ASSERT_TRUE(a->join && b->join);
  EXPECT_EQ(a->join->generation, 1);
}

TEST(Group, SnapshotsOnlyStableOrEmptiedGroupsAndRestoresThem) {
  Group g("g", 0);
  EXPECT_FALSE(g.snapshot());  // never had a member
  auto a = join(g, join_request("", {"range", "roundrobin"}, "static-a"), 0);
  ASSERT_TRUE(a->join);
  EXPECT_FALSE(g.snapshot());  // mid-rebalance
  const std::string id = a->join->member_id;
  sync(g, id, 1, {{id, Bytes{9, 9}}}, 1);
  ASSERT_EQ(g.state(), GroupState::kStable);
  auto snapshot = g.snapshot();
  ASSERT_TRUE(snapshot);
  EXPECT_EQ(snapshot->protocol, "range");
  ASSERT_EQ(snapshot->members.size(), 1u);
  EXPECT_EQ(snapshot->members[0].subscription, (Bytes{1, 2, 3}));
  EXPECT_EQ(snapshot->members[0].assignment, (Bytes{9, 9}));

  auto decoded = decode_classic_group_value(encode_classic_group_value(*snapshot));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, *snapshot);
  Group restored = Group::restore("g", 0, *decoded, 100);
  EXPECT_EQ(restored.state(), GroupState::kStable);
  EXPECT_EQ(restored.generation(), 1);
  EXPECT_EQ(restored.leader(), id);
  EXPECT_EQ(restored.snapshot(), snapshot);
  EXPECT_EQ(restored.heartbeat(id, "static-a", 1, 101), ErrorCode::kNone);
  auto again = sync(restored, id, 1, {}, 102);
  ASSERT_TRUE(again->sync);
  EXPECT_EQ(again->sync->assignment, (Bytes{9, 9}));
  // A member that goes silent is dropped a session after its last word.
  const int64_t expiry = 102 + 10000;
  Completions c;
  restored.tick(expiry - 1, c);
  EXPECT_EQ(restored.state(), GroupState::kStable);
  restored.tick(expiry, c);
  run(c);
  EXPECT_EQ(restored.state(), GroupState::kEmpty);
  auto emptied = restored.snapshot();
  ASSERT_TRUE(emptied);
  EXPECT_EQ(emptied->generation, 2);
  EXPECT_EQ(emptied->state_timestamp_ms, expiry);
  Group empty = Group::restore("g", 0, *emptied, 200'000);
  EXPECT_EQ(empty.state(), GroupState::kEmpty);
  EXPECT_EQ(empty.empty_since_ms(), expiry);
  EXPECT_EQ(empty.generation(), 2);
}

TEST(ClassicGroupRecords, ReadsKafkasVersionsAndRefusesBadInput) {
  EXPECT_EQ(classic_group_of_key(encode_classic_group_key("grp")), "grp");
  EXPECT_FALSE(classic_group_of_key(std::string("\x00\x01\x00\x01g", 5)));  // an offset key
  // Version 0: no rebalance timeout, state timestamp or instance ids.
  protocol::Writer v0;
  v0.i16(0);
  v0.string("consumer", false);
  v0.i32(4);
  v0.nullable_string(std::string("range"), false);
  v0.nullable_string(std::string("m"), false);
  v0.array_length(1, false);
  for (const char* s : {"m", "client", "/127.0.0.1"}) v0.string(s, false);
  v0.i32(30000);
  v0.bytes({1}, false);
  v0.bytes({2}, false);
  auto g0 = decode_classic_group_value(std::string(v0.buffer().begin(), v0.buffer().end()));
  ASSERT_TRUE(g0);
  EXPECT_EQ(g0->generation, 4);
  EXPECT_EQ(g0->members.at(0).session_timeout_ms, 30000);
  EXPECT_EQ(g0->members.at(0).rebalance_timeout_ms, 30000);
  EXPECT_EQ(g0->members.at(0).assignment, Bytes{2});
  // Version 4: flexible.
  protocol::Writer v4;
  v4.i16(4);
  v4.string("consumer", true);
  v4.i32(5);
  v4.nullable_string(std::string("range"), true);
  v4.nullable_string(std::string("m"), true);
  v4.i64(1234);
  v4.array_length(1, true);
  v4.string("m", true);
  v4.nullable_string(std::string("inst"), true);
  v4.string("client", true);
  v4.string("/127.0.0.1", true);
  v4.i32(60000);
  v4.i32(45000);
  v4.bytes({1}, true);
  v4.bytes({2}, true);
  v4.empty_tagged_fields();
  v4.empty_tagged_fields();
  auto g4 = decode_classic_group_value(std::string(v4.buffer().begin(), v4.buffer().end()));
  ASSERT_TRUE(g4);
  EXPECT_EQ(g4->state_timestamp_ms, 1234);
  EXPECT_EQ(g4->members.at(0).instance_id, "inst");
  EXPECT_EQ(g4->members.at(0).rebalance_timeout_ms, 60000);
  std::string truncated(v4.buffer().begin(), v4.buffer().end() - 4);
  EXPECT_FALSE(decode_classic_group_value(truncated));
  EXPECT_FALSE(decode_classic_group_value(std::string("\x00\x07", 2)));  // unknown version
}

TEST(Group, AnAssignmentTheLogRefusesIsVoidAndTheGroupRebalances) {
  Group g("g", 0);
  auto a = join(g, join_request(""), 0);
  const std::string a_id = a->join->member_id;
  sync(g, a_id, 1, {{a_id, {1}}}, 1);
  auto b = join(g, join_request(""), 2);
  auto a2 = join(g, join_request(a_id), 3);
  ASSERT_TRUE(b->join && a2->join);
  const std::string b_id = b->join->member_id;
  auto bs = sync(g, b_id, 2, {}, 4);
  std::optional<ClassicGroupSnapshot> offered;
  auto refuse = [&](const ClassicGroupSnapshot& s) {
    offered = s;
    return false;
  };
  auto as = sync(g, a_id, 2, {{a_id, {1}}, {b_id, {2}}}, 5, refuse);
  ASSERT_TRUE(offered);  // what would have been written: the new generation, stable
  EXPECT_EQ(offered->generation, 2);
  EXPECT_EQ(offered->members.size(), 2u);
  ASSERT_TRUE(as->sync && bs->sync);
  EXPECT_EQ(as->sync->error, ErrorCode::kCoordinatorNotAvailable);
  EXPECT_EQ(bs->sync->error, ErrorCode::kCoordinatorNotAvailable);
  EXPECT_EQ(g.state(), GroupState::kPreparingRebalance);
  EXPECT_FALSE(g.snapshot());
  // Both rejoin, and a stored assignment makes the group stable.
  auto a3 = join(g, join_request(a_id), 6);
  auto b3 = join(g, join_request(b_id), 7);
  ASSERT_TRUE(a3->join && b3->join);
  EXPECT_EQ(a3->join->generation, 3);
  auto accept = [](const ClassicGroupSnapshot&) { return true; };
  auto ok = sync(g, a_id, 3, {{a_id, {1}}, {b_id, {2}}}, 8, accept);
  ASSERT_TRUE(ok->sync);
  EXPECT_EQ(ok->sync->error, ErrorCode::kNone);
  EXPECT_EQ(g.state(), GroupState::kStable);
}

}  // namespace oxbow::group
