#pragma once
// The group coordinator: every consumer group of the broker and their committed offsets.
// Membership lives in memory; committed offsets are appended to `__consumer_offsets` through an
// OffsetLog and replayed from it at start-up. One lock guards everything; callbacks of deferred
// JoinGroup/SyncGroup responses run after it is released.
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "group/group.h"
#include "group/offset_records.h"

namespace oxbow::group {

// Where committed offsets are persisted (the broker's `__consumer_offsets` partitions).
class OffsetLog {
 public:
  virtual ~OffsetLog() = default;
  virtual int32_t partitions() const = 0;
  // Appends records (key, value or nullopt for a tombstone) to the partition; false on failure.
  virtual bool append(int32_t partition,
                      const std::vector<std::pair<std::string, std::optional<std::string>>>& records) = 0;
  // Calls `visit(key, value)` for every record of every partition, in log order.
  virtual void replay(const std::function<void(std::string_view, std::optional<std::string_view>)>& visit) = 0;
};

struct CoordinatorOptions {
  int64_t initial_rebalance_delay_ms = 3000;   // group.initial.rebalance.delay.ms
  int32_t min_session_timeout_ms = 6000;       // group.min.session.timeout.ms
  int32_t max_session_timeout_ms = 1800000;    // group.max.session.timeout.ms
  int64_t offsets_retention_ms = 7LL * 24 * 3600 * 1000;  // offsets.retention.minutes
  int32_t offset_metadata_max_bytes = 4096;    // offset.metadata.max.bytes
};

struct CommittedOffset {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp_ms = -1;
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
  GroupCoordinator(CoordinatorOptions options, OffsetLog& log);
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

  // One error per entry (in order), or a single group-level error applied to all.
  std::vector<ErrorCode> commit(const std::string& group_id, const std::string& member_id,
                                const std::optional<std::string>& instance_id, int32_t generation,
                                const std::vector<OffsetCommitEntry>& entries);
  // nullopt partitions: every committed offset of the group.
  std::map<TopicPartition, CommittedOffset> fetch(const std::string& group_id,
                                                  const std::optional<std::vector<TopicPartition>>& wanted);
  std::vector<GroupOverview> list(const std::vector<std::string>& states_filter);
  GroupDescription describe(const std::string& group_id);
  ErrorCode delete_group(const std::string& group_id);
  // Per-partition results of OffsetDelete; a group-level error in `group_error`.
  std::vector<ErrorCode> delete_offsets(const std::string& group_id, const std::vector<TopicPartition>& partitions,
                                        ErrorCode& group_error);

  // Expires sessions, overdue rebalances and old offsets (also run by the timer thread).
  void tick(int64_t now_ms);

 private:
  Group& group_for_join(const std::string& group_id);
  bool persist(const std::string& group_id,
               const std::vector<std::pair<std::string, std::optional<std::string>>>& records);
  void expire_offsets_locked(int64_t now_ms);
  static void run(Completions& completions);

  CoordinatorOptions options_;
  OffsetLog& log_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
  std::map<std::string, std::map<TopicPartition, CommittedOffset>> offsets_;
  std::thread timer_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  int64_t last_expiry_ms_ = 0;
};

}  // namespace oxbow::group
