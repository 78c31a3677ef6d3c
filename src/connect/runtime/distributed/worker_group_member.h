#pragma once
// A distributed worker's membership in its Connect group (group.id), spoken over the Kafka
// protocol as Kafka's WorkerCoordinator speaks it: protocol type "connect", the protocols of
// connect.protocol offered most preferred first, each with the worker's state as its metadata
// (connect_protocol.h); the leader's assignments come from the herder's callback.
//
// The member runs on a thread of its own: it finds the coordinator, joins, syncs, heartbeats,
// rejoins when asked or when the coordinator starts a rebalance, and retries with a backoff when
// the coordinator moves or fails. The herder takes what it brings on its own thread:
//  - takeAssignment(): the round's assignment, with connectors and tasks in full (what the worker
//    should run now: what it kept plus what is new, as Kafka's coordinator completes an
//    incremental assignment) and the revocations (what it must stop). With the eager protocol
//    the revocations are what it ran and runs no more. An assignment with an error
//    (CONFIG_MISMATCH) changes nothing: the herder reads the config topic further and rejoins
//    (requestRejoin); the member also rejoins by itself a heartbeat interval later.
//  - takeLost(): the group went on without this worker (its session expired, or the coordinator
//    was unreachable for a session timeout): it must stop everything. The member rejoins, with
//    nothing owned, once the herder took the news.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "client/connection.h"
#include "connect/runtime/distributed/connect_protocol.h"

namespace oxbow::connect::runtime::distributed {

struct WorkerMemberConfig {
  std::string bootstrapServers;
  client::Settings security;  // security.protocol, sasl.*, ssl.* (librdkafka's names)
  std::string groupId, clientId;
  int32_t sessionTimeoutMs = 10000, rebalanceTimeoutMs = 60000, heartbeatIntervalMs = 3000,
          requestTimeoutMs = 40000;
  std::string protocol = "sessioned";  // connect.protocol: "default" (eager), "compatible"
  int32_t retryBackoffMs = 100;        // retry.backoff.ms; doubles up to 20 times that
};

struct WorkerMemberCallbacks {
  // This worker's url and config offset for the next JoinGroup (called on the member's thread).
  // `owned` is the member's to fill in: what the group assigned to this worker, as Kafka's
  // coordinator reports its assignment snapshot, whether or not the herder has taken it yet.
  std::function<WorkerState()> state;
  // As leader: the assignments for every member (called on the member's thread). `version` is
  // the protocol the group chose; the assignments are encoded with it.
  std::function<std::map<std::string, WorkerAssignment>(
      const std::string& leaderId, int16_t version,
      const std::map<std::string, WorkerState>& members)>
      assign;
  std::function<void()> wake;  // an assignment or a lost membership to take
};

// What the worker runs after `received` (the round's assignment, `owned` what it ran): an
// incremental assignment adds to what the worker kept, an eager one replaces it all (what it ran
// and runs no more counts as revoked), one with an error changes nothing.
WorkerAssignment completeAssignment(const WorkerAssignment& received,
                                    const std::optional<WorkerAssignment>& owned, int16_t version);
// A new round's assignment while the herder has not taken `untaken`: what that one revoked and
// the new one does not give back must still stop.
void carryRevocations(WorkerAssignment& next, const WorkerAssignment& untaken);

class WorkerGroupMember {
 public:
  WorkerGroupMember(WorkerMemberConfig config, WorkerMemberCallbacks callbacks);
  ~WorkerGroupMember();
  WorkerGroupMember(const WorkerGroupMember&) = delete;
  WorkerGroupMember& operator=(const WorkerGroupMember&) = delete;

  void start();
  void stop();  // leaves the group (so that the others rebalance at once) and joins the thread

  std::optional<std::pair<int32_t /*generation*/, WorkerAssignment>> takeAssignment();
  bool takeLost();
  void requestRejoin();
  // Between a JoinGroup and its SyncGroup's answer (the REST API answers 409 then).
  bool rebalancing() const;
  std::string memberId() const;
  int32_t generation() const;  // of the last completed round; -1 before the first
  // The generation the leader is assigning (valid inside the assign callback) and the last
  // completed one, as the assignor's stale-leader check wants them.
  std::pair<int32_t, int32_t> assigningGenerations() const;
  int16_t protocolVersion() const;  // of the last completed round
  // Why the member cannot go on (the group uses another protocol type, authorization, ...);
  // empty while it can.
  std::string fatalError() const;

 private:
  void run();
  void step();
  void connectToCoordinator();
  void joinGroup();
  void syncGroup(int32_t generation, const std::string& memberId, const std::string& leader,
                 int16_t version, const std::map<std::string, WorkerState>& members);
  void completeRound(int32_t generation, const std::string& memberId, int16_t version,
                     std::string_view bytes);
  void heartbeat();
  void leaveGroup();
  void leave(client::Connection& coordinator, const std::string& memberId);
  void handleGroupError(int16_t code, const char* api);
  bool markLost(const std::string& why);
  bool rejoinDue() const;
  bool sleep(int ms);
  void notify();

  WorkerMemberConfig config_;
  WorkerMemberCallbacks callbacks_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_.
  bool stopping_ = false, rejoin_ = true, lost_ = false, rebalancing_ = false;
  int64_t rejoinAtMs_ = -1;  // a failed assignment's automatic rejoin
  std::string fatal_, memberId_, coordinatorAddress_;
  int32_t generation_ = -1, assigningGeneration_ = -1;
  int16_t version_ = kSessionedVersion;
  std::optional<std::pair<int32_t, WorkerAssignment>> pending_;
  std::optional<WorkerAssignment> owned_;  // everything the worker was assigned and runs
  // The member's thread's own.
  std::unique_ptr<client::Connection> coordinator_;
  int64_t lastContactMs_ = 0;  // the coordinator last answered
};

}  // namespace oxbow::connect::runtime::distributed
