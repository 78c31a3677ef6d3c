#pragma once
// One stream thread's membership in the application's consumer group, spoken by Oxbow itself
// (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit) because librdkafka 2.0.2 lets no
// application carry its own data in the group protocol or decide the assignment. The protocol is
// the classic consumer group's with the protocol name "stream", as Kafka Streams uses it, so the
// group looks to any broker and tool like a Kafka Streams application's.
//
// Rebalances are cooperative: a member rejoins keeping its tasks, the leader never hands a task
// to one member while another still owns it, and a member that gives tasks up rejoins once it
// has closed them, so that the next round can place them.
//
// The member runs on a thread of its own (heartbeats go on while the stream thread processes);
// the stream thread takes what it brings (an assignment, or the news that the membership was
// lost) when its loop comes round, and commits offsets through it.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/connection.h"
#include "streams/assignment/protocol_data.h"

namespace oxbow::streams::detail {

struct MemberConfig {
  std::string bootstrap_servers;
  client::Settings security;  // security.protocol, sasl.*, ssl.*
  std::string group_id;
  std::optional<std::string> instance_id;  // static membership (KIP-345)
  std::string client_id;
  int32_t session_timeout_ms = 45000;
  int32_t rebalance_timeout_ms = 300000;  // max.poll.interval.ms
  int32_t heartbeat_interval_ms = 3000;
  int32_t request_timeout_ms = 30000;
};

struct MemberCallbacks {
  // The subscription for the next JoinGroup (a ConsumerSubscription's bytes).
  std::function<std::string()> subscription;
  // As the group's leader: member id -> assignment bytes, from member id -> subscription bytes.
  std::function<std::map<std::string, std::string>(const std::map<std::string, std::string>&)>
      assign;
};

struct Generation {
  int32_t id = -1;
  std::string member_id;
};

struct ReceivedAssignment {
  Generation generation;
  ConsumerAssignment assignment;
};

// A commit the group refused because it moved on (the tasks may belong to another member now).
struct CommitRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
  bool retriable = false;  // a rebalance is under way: the same offsets may be committed later
};

class GroupMember {
 public:
  GroupMember(MemberConfig config, MemberCallbacks callbacks);
  ~GroupMember();
  GroupMember(const GroupMember&) = delete;
  GroupMember& operator=(const GroupMember&) = delete;

  void start();
  // Stops the member's thread; a dynamic member leaves the group (a static one stays until its
  // session times out, so that its restart finds its tasks), unless `leave` is false.
  void stop(bool leave = true);

  // For the stream thread: an assignment received since the last call.
  std::optional<ReceivedAssignment> take_assignment();
  // For the stream thread: the group moved on without this member (its session expired, or it
  // was fenced): its tasks must be dropped without committing. The member rejoins once the
  // stream thread called this.
  bool take_lost();
  // For the stream thread, every round of its loop: it is alive. Past max.poll.interval.ms (the
  // rebalance timeout) without a call, the member leaves the group, as Kafka's consumer does, so
  // that a thread stuck in user code does not keep its tasks from the others; the thread finds
  // its membership lost (take_lost) when it comes back, and the member rejoins then.
  void polled();
  // Asks for a rebalance (after giving tasks up, or when a probing rebalance is due).
  void request_rejoin();
  // Why the membership cannot go on (another instance holds the same group.instance.id, the
  // group's protocol is not "stream", ...); empty while it can.
  std::string fatal_error() const;
  Generation generation() const;

  // Commits offsets with the current generation, on a connection of the caller's own (the
  // member's may be waiting in a JoinGroup). Throws CommitRefused, or client::ConnectionError.
  struct Offset {
    std::string topic;
    int32_t partition;
    int64_t offset;
    std::string metadata;
  };
  void commit(const std::vector<Offset>& offsets);

 private:
  void run();
  void step();
  void find_coordinator();
  void join_and_sync();
  void heartbeat();
  void leave_group();
  void set_lost(const std::string& why);
  void forget_member_id();
  bool poll_overdue() const;
  void leave_for_poll_timeout();
  // Waits up to `ms` (or until a rejoin is asked for, when `or_rejoin`); false when stopping.
  bool wait_for(int ms, bool or_rejoin);

  MemberConfig config_;
  MemberCallbacks callbacks_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, rejoin_ = true, lost_ = false, leave_on_stop_ = true;
  std::string fatal_;
  std::optional<ReceivedAssignment> pending_;
  Generation generation_;  // the last round completed (JoinGroup and SyncGroup)
  // The id the coordinator gave this member, known from its first JoinGroup answer on, before
  // any round completes; empty once the group forgot it.
  std::string member_id_;
  std::string coordinator_;  // host:port
  // The member's thread's own connection to the coordinator, and the stream thread's for
  // commits.
  std::unique_ptr<client::Connection> connection_, commit_connection_;
  std::string commit_coordinator_;
  std::atomic<int64_t> last_poll_ms_{0};  // steady clock
};

}  // namespace oxbow::streams::detail
