#pragma once
// One consumer group's membership, as Kafka's group coordinator runs it.
//
// States: Empty (no members; offsets may live on), PreparingRebalance (waiting for members to
// (re)join), CompletingRebalance (joined; waiting for the leader's assignment in SyncGroup),
// Stable (assignment handed out), Dead (deleted). A rebalance ends when every member has rejoined
// or the rebalance timeout passes; members that did not rejoin are dropped. The assignment itself
// is computed by the leader client, so any assignor (range, roundrobin, cooperative-sticky) works.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/errors.h"

namespace oxbow::group {

using protocol::ErrorCode;
using Bytes = std::vector<uint8_t>;

enum class GroupState { kEmpty, kPreparingRebalance, kCompletingRebalance, kStable, kDead };

enum class CommitKind { kPlain, kTransactional };  // OffsetCommit or TxnOffsetCommit
const char* state_name(GroupState state);

struct JoinedMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  Bytes metadata;
};

struct JoinResult {
  ErrorCode error = ErrorCode::kNone;
  int32_t generation = -1;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader;
  std::string member_id;
  std::vector<JoinedMember> members;  // only for the leader
  bool skip_assignment = false;       // a static leader rejoined: the assignment stands (v9+)
};

struct SyncResult {
  ErrorCode error = ErrorCode::kNone;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  Bytes assignment;
};

using JoinCallback = std::function<void(JoinResult)>;
using SyncCallback = std::function<void(SyncResult)>;

struct Member {
  std::string id;
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<std::pair<std::string, Bytes>> protocols;  // in the member's order of preference
  Bytes assignment;
  JoinCallback awaiting_join;
  SyncCallback awaiting_sync;
  int64_t heartbeat_deadline_ms = 0;

  const Bytes* metadata_for(const std::string& protocol) const;
};

struct JoinRequest {
  std::string group_id;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<std::pair<std::string, Bytes>> protocols;
  bool require_known_member_id = false;  // JoinGroup v4+ (KIP-394)
};

struct SyncRequest {
  std::string group_id;
  int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::vector<std::pair<std::string, Bytes>> assignments;
};

// What a restart must not lose of a classic group (classic_group_records.h keeps it in
// `__consumer_offsets`): its last Stable state, with each member's metadata for the chosen
// protocol and its assignment, or the generation it had when it became Empty. A rebalance in
// progress is not kept, as in Kafka: the group comes back as it was before it.
struct ClassicGroupSnapshot {
  struct MemberRecord {
    std::string id;
    std::optional<std::string> instance_id;
    std::string client_id;
    std::string client_host;
    int32_t rebalance_timeout_ms = 0;
    int32_t session_timeout_ms = 0;
    Bytes subscription;
    Bytes assignment;
    bool operator==(const MemberRecord&) const = default;
  };
  std::string protocol_type;
  int32_t generation = 0;
  std::optional<std::string> protocol;
  std::optional<std::string> leader;
  int64_t state_timestamp_ms = -1;  // when it became Empty; -1 for a Stable group
  std::vector<MemberRecord> members;
  bool operator==(const ClassicGroupSnapshot&) const = default;
};

// A revision no group has had: revisions of a group replaced by another (deleted, converted)
// never match what was written of the old one.
uint64_t next_group_revision();

// Deferred work produced while the coordinator's lock is held, run after it is released.
using Completions = std::vector<std::function<void()>>;

class Group {
 public:
  Group(std::string id, int64_t initial_rebalance_delay_ms);
  // The group as the snapshot left it (Stable with its members, or Empty); sessions run from
  // `now`.
  static Group restore(std::string id, int64_t initial_rebalance_delay_ms,
                       const ClassicGroupSnapshot& snapshot, int64_t now);
  // nullopt while a rebalance is in progress (the last snapshot stands), and for a group that
  // never had a member (offsets only: nothing to keep).
  std::optional<ClassicGroupSnapshot> snapshot() const;
  // Changes with every call that may change what a snapshot holds.
  uint64_t revision() const { return revision_; }

  const std::string& id() const { return id_; }
  GroupState state() const { return state_; }
  int32_t generation() const { return generation_; }
  const std::string& protocol_type() const { return protocol_type_; }
  const std::optional<std::string>& protocol_name() const { return protocol_name_; }
  const std::string& leader() const { return leader_; }
  const std::map<std::string, Member>& members() const { return members_; }
  bool is_member(const std::string& member_id) const { return members_.count(member_id) > 0; }
  int64_t empty_since_ms() const { return empty_since_ms_; }

  void join(const JoinRequest& request, int64_t now, JoinCallback done, Completions& out);
  // `store` writes the group's new stable state when the leader's assignment arrives; if it
  // fails, the assignment is void, every waiting member gets COORDINATOR_NOT_AVAILABLE and a new
  // rebalance starts, as in Kafka.
  using StoreGroup = std::function<bool(const ClassicGroupSnapshot&)>;
  void sync(const SyncRequest& request, int64_t now, SyncCallback done, Completions& out,
            const StoreGroup& store = nullptr);
  ErrorCode heartbeat(const std::string& member_id, const std::optional<std::string>& instance_id,
                      int32_t generation, int64_t now);
  ErrorCode leave(const std::string& member_id, const std::optional<std::string>& instance_id,
                  int64_t now, Completions& out);
  // Validates an offset commit against membership. A commit with no member, instance id or
  // generation is a simple consumer's (assign()), taken only while the group has no members; a
  // transactional one is taken whatever the group's state, since TxnOffsetCommit before v3 carries
  // no membership at all (as Kafka).
  ErrorCode check_commit(const std::string& member_id,
                         const std::optional<std::string>& instance_id, int32_t generation,
                         CommitKind kind) const;
  // Expires sessions and ends overdue rebalances.
  void tick(int64_t now, Completions& out);
  void mark_dead(Completions& out);
  // Topics the members subscribe to, decoded from consumer-protocol metadata (for OffsetDelete).
  bool subscribes_to(const std::string& topic) const;

 private:
  std::string new_member_id(const std::string& client_id,
                            const std::optional<std::string>& instance_id);
  bool protocols_compatible(const JoinRequest& request) const;
  void add_member(const JoinRequest& request, const std::string& member_id, int64_t now,
                  JoinCallback done, Completions& out);
  void prepare_rebalance(int64_t now, Completions& out);
  // Answers every member waiting in SyncGroup with `error`.
  void fail_waiting_syncs(ErrorCode error, Completions& out);
  void maybe_complete_join(int64_t now, Completions& out);
  void complete_join(int64_t now, Completions& out);
  void remove_member(const std::string& member_id, int64_t now, Completions& out);
  std::optional<std::string> select_protocol() const;
  JoinResult join_result_for(const Member& member) const;
  ErrorCode check_static(const std::string& member_id,
                         const std::optional<std::string>& instance_id) const;

  std::string id_;
  int64_t initial_rebalance_delay_ms_;
  GroupState state_ = GroupState::kEmpty;
  int32_t generation_ = 0;
  std::string protocol_type_;
  std::optional<std::string> protocol_name_;
  std::string leader_;
  std::map<std::string, Member> members_;
  std::map<std::string, int64_t> pending_members_;     // member id -> expiry (KIP-394)
  std::map<std::string, std::string> static_members_;  // instance id -> member id
  int64_t rebalance_deadline_ms_ = 0;
  int64_t rebalance_started_ms_ = 0;
  int64_t initial_delay_until_ms_ = 0;
  int64_t empty_since_ms_ = 0;
  uint64_t next_member_serial_ = 0;
  uint64_t revision_ = 0;
};

}  // namespace oxbow::group
