#pragma once
// The group coordinator: every consumer group of the broker and their committed offsets.
// Committed offsets, classic groups' last stable membership (generation, members, assignments)
// and KIP-848 consumer groups' members, epochs and assignments are appended to
// `__consumer_offsets` through a KeyedLog, in Kafka's record formats, and replayed from it at
// start-up. Offsets committed inside a transaction
// (TxnOffsetCommit) stay pending until the transaction's marker reaches the group's partition. One
// lock guards everything; callbacks of deferred JoinGroup/SyncGroup responses run after it is
// released.
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/keyed_log.h"
#include "group/classic_group_records.h"
#include "group/consumer_group.h"
#include "group/consumer_group_records.h"
#include "group/group.h"
#include "group/offset_records.h"

namespace oxbow::group {

struct CoordinatorOptions {
  int64_t initial_rebalance_delay_ms = 3000;              // group.initial.rebalance.delay.ms
  int32_t min_session_timeout_ms = 6000;                  // group.min.session.timeout.ms
  int32_t max_session_timeout_ms = 1800000;               // group.max.session.timeout.ms
  int64_t offsets_retention_ms = 7LL * 24 * 3600 * 1000;  // offsets.retention.minutes
  int32_t offset_metadata_max_bytes = 4096;               // offset.metadata.max.bytes
  ConsumerGroupOptions consumer;                          // group.consumer.*
};

struct CommittedOffset {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp_ms = -1;
  bool pending_transaction = false;  // an open transaction holds a newer offset (fetch only)
};

struct OffsetCommitEntry {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::optional<std::string> metadata;
};

struct GroupOverview {
  std::string group_id;
  std::string protocol_type;
  std::string state;
  std::string type;  // "classic" or "consumer" (KIP-848)
};

struct MemberDescription {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  Bytes metadata;
  Bytes assignment;
};

struct GroupDescription {
  ErrorCode error = ErrorCode::kNone;
  std::string group_id;
  std::string state;
  std::string protocol_type;
  std::string protocol_name;
  std::vector<MemberDescription> members;
};

using TopicPartition = std::pair<std::string, int32_t>;

class GroupCoordinator {
 public:
  GroupCoordinator(CoordinatorOptions options, KeyedLog& log);
  ~GroupCoordinator();

  // Replays committed offsets from the log, then starts the timer thread.
  void start();
  void stop();

  void join(JoinRequest request, JoinCallback done);
  void sync(SyncRequest request, SyncCallback done);
  ErrorCode heartbeat(const std::string& group_id, const std::string& member_id,
                      const std::optional<std::string>& instance_id, int32_t generation);
  ErrorCode leave(const std::string& group_id, const std::string& member_id,
                  const std::optional<std::string>& instance_id);

  // ConsumerGroupHeartbeat, validated by the caller. Whatever it changes of the group is written
  // to the log before it returns (else COORDINATOR_NOT_AVAILABLE). A group id this broker does not
  // know answers a member's heartbeat with UNKNOWN_MEMBER_ID, so that it rejoins.
  ConsumerHeartbeatResult consumer_heartbeat(const std::string& group_id,
                                             const ConsumerHeartbeat& request);
  // The broker's topics, as consumer groups see them; set before the first heartbeat.
  void set_topic_catalog(const TopicCatalog* topics) { topics_ = topics; }
  // Runs `describe` with the consumer group, or nullptr if there is none by that id.
  void describe_consumer_group(const std::string& group_id,
                               const std::function<void(const ConsumerGroup*)>& describe);
  const ConsumerGroupOptions& consumer_options() const { return options_.consumer; }

  // One error per entry (in order), or a single group-level error applied to all. `api_version`
  // is OffsetCommit's: members of consumer groups must use v9 or later.
  std::vector<ErrorCode> commit(const std::string& group_id, const std::string& member_id,
                                const std::optional<std::string>& instance_id, int32_t generation,
                                const std::vector<OffsetCommitEntry>& entries,
                                int16_t api_version = 9);
  // TxnOffsetCommit: written now, in effect once the producer's transaction commits.
  std::vector<ErrorCode> commit_transactional(const std::string& group_id, int64_t producer_id,
                                              int16_t epoch, const std::string& member_id,
                                              const std::optional<std::string>& instance_id,
                                              int32_t generation,
                                              const std::vector<OffsetCommitEntry>& entries);
  // The producer's transaction ended (its marker is in the offsets partition).
  void complete_transaction(int64_t producer_id, bool commit);
  // OffsetFetch v9's member id and epoch, checked against a consumer group's membership.
  ErrorCode check_fetch(const std::string& group_id, const std::optional<std::string>& member_id,
                        int32_t member_epoch);
  // nullopt partitions: every committed offset of the group.
  std::map<TopicPartition, CommittedOffset> fetch(
      const std::string& group_id, const std::optional<std::vector<TopicPartition>>& wanted);
  std::vector<GroupOverview> list(const std::vector<std::string>& states_filter);
  GroupDescription describe(const std::string& group_id);
  ErrorCode delete_group(const std::string& group_id);
  // Per-partition results of OffsetDelete; a group-level error in `group_error`.
  std::vector<ErrorCode> delete_offsets(const std::string& group_id,
                                        const std::vector<TopicPartition>& partitions,
                                        ErrorCode& group_error);

  // The topic was deleted: every group's committed offsets of it go, as in Kafka, so that a
  // topic created again under the name starts with none. A group left empty with no offsets
  // is dead. Offsets of open transactions are left to their transaction.
  void forget_topic(const std::string& topic);

  // Expires sessions, overdue rebalances and old offsets (also run by the timer thread).
  void tick(int64_t now_ms);

 private:
  Group& group_for_join(const std::string& group_id);
  bool persist(const std::string& group_id, const KeyedRecords& records);
  // Checks the committer's membership; creates a simple group for commits without one.
  ErrorCode check_commit_locked(const std::string& group_id, const std::string& member_id,
                                const std::optional<std::string>& instance_id, int32_t generation,
                                CommitKind kind, int16_t api_version);
  // Whether the group has members of either protocol (offsets of such a group do not expire).
  bool has_members_locked(const std::string& group_id) const;
  // Offset records for the entries, with per-entry errors for those refused.
  KeyedRecords offset_records(const std::string& group_id,
                              const std::vector<OffsetCommitEntry>& entries, int64_t now,
                              std::vector<ErrorCode>& errors) const;
  static void apply_offsets(const std::vector<OffsetCommitEntry>& entries,
                            const std::vector<ErrorCode>& errors, int64_t now,
                            std::map<TopicPartition, CommittedOffset>& into);
  // Applies (commit) or drops the offsets of the producer's transaction.
  void settle_locked(int64_t producer_id, bool commit);
  void replay_record(std::string_view key_bytes, std::optional<std::string_view> value_bytes,
                     int64_t producer_id);
  // Rebuilds the classic and consumer groups whose records the replay found.
  void restore_groups_locked(int64_t now);
  // Writes the classic group's snapshot if it changed since it was last written (a tombstone once
  // the group is gone); false if the log refused it, which is tried again on the next call.
  bool persist_classic_group_locked(const std::string& group_id);
  // Writes the classic group's record (a tombstone for nullopt) unless the log holds it already.
  bool write_classic_group_locked(const std::string& group_id,
                                  const std::optional<std::string>& value);
  // Writes what changed of the consumer group since it was last written (tombstones for all of
  // it once the group is gone); false if the log refused the records, which are tried again on
  // the next call.
  bool persist_consumer_group_locked(const std::string& group_id);
  // The same for every group of either kind, written or not yet (the timer's pass).
  void persist_groups_locked();
  void expire_offsets_locked(int64_t now_ms);
  using OffsetsByGroup = std::map<std::string, std::map<TopicPartition, CommittedOffset>>;
  using OffsetFilter = std::function<bool(const TopicPartition&, const CommittedOffset&)>;
  // Drops the offsets of `group` that `drop` selects, with tombstones in the log; a group left
  // with no offsets and no members is dead. Moves `group` to the next group; false if the
  // tombstones could not be written.
  bool drop_offsets_locked(OffsetsByGroup::iterator& group, const OffsetFilter& drop);
  static void run(Completions& completions);

  CoordinatorOptions options_;
  KeyedLog& log_;
  const TopicCatalog* topics_ = nullptr;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Group>> groups_;  // classic groups
  std::map<std::string, std::unique_ptr<ConsumerGroup>> consumer_groups_;
  // What the log holds of each consumer group, and the group's revisions when it was written
  // (0 for parts never written: no revision is 0).
  struct WrittenConsumerGroup {
    GroupRecords records;
    uint64_t revision = 0;
    uint64_t own_revision = 0;
    std::map<std::string, uint64_t> member_revisions;
  };
  std::map<std::string, WrittenConsumerGroup> written_consumer_groups_;
  struct WrittenClassicGroup {
    std::string value;
    uint64_t revision = UINT64_MAX;  // none written yet
  };
  std::map<std::string, WrittenClassicGroup> written_classic_groups_;
  OffsetsByGroup offsets_;
  // producer id -> group -> offsets its open transaction will commit
  std::map<int64_t, std::map<std::string, std::map<TopicPartition, CommittedOffset>>> pending_;
  std::thread timer_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  int64_t last_expiry_ms_ = 0;
};

}  // namespace oxbow::group
