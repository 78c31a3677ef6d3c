#pragma once
// One consumer group of KIP-848's protocol ("consumer" groups, ConsumerGroupHeartbeat), as Kafka
// 4's group coordinator runs it.
//
// The coordinator owns the assignment. Any change of membership, subscriptions or the subscribed
// topics' partition counts bumps the group epoch; the target assignment is then recomputed by the
// group's server-side assignor and stamped with that epoch. Each member reconciles towards its
// target on its own heartbeats: it first gives up (revokes) the partitions it must lose, staying at
// its epoch until it reports them gone, then moves to the target epoch and gets the partitions that
// no other member still holds; those held elsewhere come once released. A member that does not
// revoke within its rebalance timeout, or does not heartbeat within the session timeout, is
// removed.
//
// States: Empty (no members), Assigning (the target lags the group epoch; transient here, since the
// target is computed in the heartbeat that bumps the epoch), Reconciling (some member is not yet at
// its target), Stable.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "group/assignor.h"
#include "protocol/errors.h"

namespace oxbow::group {

using protocol::ErrorCode;

// What the group sees of the broker's topics.
class TopicCatalog {
 public:
  virtual ~TopicCatalog() = default;
  virtual std::optional<TopicShape> find(const std::string& name) const = 0;
  // The topics whose whole name a subscription's regular expression matches.
  virtual std::vector<std::string> matching(const std::string& regex) const = 0;
};

struct ConsumerGroupOptions {
  int32_t session_timeout_ms = 45000;                      // group.consumer.session.timeout.ms
  int32_t heartbeat_interval_ms = 5000;                    // group.consumer.heartbeat.interval.ms
  int32_t max_size = 2147483647;                           // group.consumer.max.size
  std::vector<std::string> assignors{"uniform", "range"};  // group.consumer.assignors
  const std::string& default_assignor() const { return assignors.front(); }
};

enum class MemberState { kStable, kUnrevokedPartitions, kUnreleasedPartitions };

constexpr int32_t kLeaveGroupEpoch = -1;
constexpr int32_t kLeaveGroupStaticEpoch = -2;

struct ConsumerMember {
  std::string id;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  int32_t epoch = 0;
  int32_t previous_epoch = -1;
  MemberState state = MemberState::kStable;
  int32_t rebalance_timeout_ms = 0;
  std::vector<std::string> subscribed_topics;
  std::optional<std::string> subscribed_regex;
  std::optional<std::string> server_assignor;
  Assignment assigned;
  Assignment pending_revocation;
  int64_t session_deadline_ms = 0;
  int64_t revocation_deadline_ms = 0;  // 0: not waiting for a revocation
};

using OwnedPartitions = std::vector<std::pair<Uuid, std::vector<int32_t>>>;

struct ConsumerHeartbeat {
  std::string member_id;
  int32_t member_epoch = 0;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  int32_t rebalance_timeout_ms = -1;
  std::optional<std::vector<std::string>> subscribed_topic_names;
  std::optional<std::string> subscribed_topic_regex;
  std::optional<std::string> server_assignor;
  std::optional<OwnedPartitions> owned;
  std::string client_id;
  std::string client_host;
};

// A regular expression's topics as the group last resolved them.
struct ResolvedRegex {
  std::set<std::string> topics;
  int64_t resolved_ms = 0;
  bool operator==(const ResolvedRegex&) const = default;
};

// What a restart must not lose of a group (consumer_group_records.h keeps it in
// `__consumer_offsets`): everything but the members' deadlines, which a restored group starts
// afresh, as Kafka's coordinator does when it loads a group.
struct ConsumerGroupSnapshot {
  int32_t group_epoch = 0;
  int32_t assignment_epoch = 0;
  // Of the subscribed topics (names, ids, partition counts): a restored group whose topics changed
  // while the broker was down bumps its epoch when it first sees them.
  uint64_t metadata_hash = 0;
  std::vector<ConsumerMember> members;  // deadlines unset
  std::map<std::string, Assignment> targets;
  std::map<std::string, ResolvedRegex> regexes;
};

struct ConsumerHeartbeatResult {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
  std::string member_id;
  int32_t member_epoch = 0;
  int32_t heartbeat_interval_ms = 0;
  std::optional<Assignment> assignment;
};

class ConsumerGroup {
 public:
  explicit ConsumerGroup(std::string id) : id_(std::move(id)) {}
  // The group as it was when `snapshot` was taken; members' sessions (and pending revocations)
  // run from `now`.
  static ConsumerGroup restore(std::string id, const ConsumerGroupSnapshot& snapshot,
                               const ConsumerGroupOptions& options, int64_t now);
  // Without members (and their targets): the group's own part only.
  ConsumerGroupSnapshot snapshot(bool with_members = true) const;
  // Changes with every change a snapshot would show, so that an unchanged group is not encoded;
  // the group's own part and each member have revisions of their own, so that a change is
  // written without encoding the rest.
  uint64_t revision() const { return revision_; }
  uint64_t own_revision() const { return own_revision_; }
  const std::map<std::string, uint64_t>& member_revisions() const { return member_revisions_; }
  // nullptr when the member has no target assignment.
  const Assignment* find_target(const std::string& member_id) const;

  const std::string& id() const { return id_; }
  int32_t group_epoch() const { return group_epoch_; }
  int32_t assignment_epoch() const { return assignment_epoch_; }
  const std::map<std::string, ConsumerMember>& members() const { return members_; }
  const Assignment& target_of(const std::string& member_id) const;
  const char* state_name() const;
  bool empty() const { return members_.empty(); }
  int64_t empty_since_ms() const { return empty_since_ms_; }
  // The assignor a describe reports: the one most members asked for, else the default.
  std::string assignor(const ConsumerGroupOptions& options) const;
  // Topic names (and ids) of the subscription metadata, for describing assignments.
  std::optional<std::string> topic_name(const Uuid& id) const;

  // A join (epoch 0), heartbeat (epoch > 0) or leave (-1, or -2 for a static member that will
  // come back). The request has been validated already (ConsumerGroupHeartbeat's rules).
  ConsumerHeartbeatResult heartbeat(const ConsumerHeartbeat& request, const TopicCatalog& topics,
                                    const ConsumerGroupOptions& options, int64_t now);
  // Removes members whose session or revocation deadline passed, and resolves the members'
  // regular expressions: a new one at once, all of them every 10 s (new topics), as Kafka does
  // it, apart from the heartbeats. A member's regex topics come with the epoch that follows.
  void tick(int64_t now, const TopicCatalog* topics);

  // OffsetCommit / TxnOffsetCommit against the membership (Kafka's validateOffsetCommit).
  ErrorCode check_commit(const std::string& member_id, int32_t member_epoch, bool transactional,
                         int16_t api_version) const;
  // OffsetFetch v9's optional member id and epoch.
  ErrorCode check_fetch(const std::optional<std::string>& member_id, int32_t member_epoch) const;
  bool subscribes_to(const std::string& topic) const;

 private:
  // The member the heartbeat is from, as it stands before the heartbeat's changes; `fresh` when
  // it is new to the group (not a rejoin, nor a static member's new incarnation).
  ErrorCode find_member(const ConsumerHeartbeat& request, const ConsumerGroupOptions& options,
                        ConsumerMember& out, bool& fresh, std::string& message);
  // A heartbeat naming an instance id that a member holds: fenced or refused (an error), a
  // static member's return (kNone, `out` set), or nothing special (nullopt).
  std::optional<ErrorCode> static_member(const ConsumerHeartbeat& request,
                                         const std::string& member_id, ConsumerMember& out,
                                         std::string& message);
  ConsumerHeartbeatResult leave(const ConsumerHeartbeat& request, int64_t now);
  // Takes the heartbeat's fields into the member; true if its subscription changed (topics,
  // regex or assignor), which bumps the group epoch.
  bool apply(const ConsumerHeartbeat& request, ConsumerMember& member);
  // The member's topic names and those its regular expression resolved to.
  std::set<std::string> effective_topics(const ConsumerMember& member) const;
  std::map<std::string, TopicShape> subscription_metadata(const TopicCatalog& topics) const;
  // Bumps the group epoch if the subscribed topics or their partition counts changed (for a
  // restored group: since the snapshot).
  void refresh_subscription(const TopicCatalog& topics);
  void bump_group_epoch();
  void changed_own_part();
  void changed_member(const std::string& member_id);
  void refresh_regexes(int64_t now, const TopicCatalog& topics);
  void update_target(const ConsumerGroupOptions& options);
  void reconcile(ConsumerMember& member, const std::optional<OwnedPartitions>& owned, int64_t now);
  void next_assignment(ConsumerMember& member, int32_t epoch,
                       const std::optional<OwnedPartitions>& owned, int64_t now);
  bool held_by_other(const Uuid& topic, int32_t partition, const std::string& member_id) const;
  // Replaces the member's partitions (assigned and pending revocation) in the ownership index.
  void store(ConsumerMember member);
  void remove(std::string member_id);
  // A regex no member subscribes to any more is resolved afresh when one does again (Kafka).
  void forget_unused_regexes();

  std::string id_;
  int64_t empty_since_ms_ = 0;
  int32_t group_epoch_ = 0;
  int32_t assignment_epoch_ = 0;
  std::map<std::string, ConsumerMember> members_;
  std::map<std::string, std::string> static_members_;  // instance id -> member id
  std::map<std::string, Assignment> target_;
  std::map<std::string, TopicShape> subscribed_;            // the subscription metadata, by name
  std::map<std::pair<Uuid, int32_t>, std::string> owners_;  // assigned or pending revocation
  std::map<std::string, ResolvedRegex> resolved_regexes_;
  bool regex_refresh_due_ = false;
  int64_t last_regex_refresh_ms_ = 0;
  // Set by restore until the subscribed topics are looked up again.
  std::optional<uint64_t> restored_metadata_hash_;
  uint64_t revision_ = 0;
  uint64_t own_revision_ = 0;
  std::map<std::string, uint64_t> member_revisions_;
};

}  // namespace oxbow::group
