#pragma once
// The group leader's assignment of connectors and tasks to workers, with Kafka Connect's rules
// for its incremental cooperative protocols (connect.protocol "compatible" and "sessioned"):
//  - members keep what they run; an assignment names only what is new to a member and what it
//    must stop (revoked);
//  - connectors and tasks no longer in the config are revoked; new ones go to the least loaded
//    members (connectors and tasks balanced separately);
//  - the work of a member that left is held back, unassigned, for up to
//    scheduled.rebalance.max.delay.ms (the delay goes to every member, which rejoins when it
//    ends), in case the member comes back; then it goes to the members that joined empty-handed
//    meanwhile, or to the least loaded;
//  - when the loads differ by more than one, just enough is revoked from the loaded members to
//    balance them; the revoked work is placed in the next round, after they let it go (successive
//    revoking rounds back off exponentially, up to the maximum delay);
//  - CONFIG_MISMATCH to everyone when a member has read further in the config topic than the
//    leader.
// The "default" (eager) protocol's members stop everything at each rebalance: for it, assign()
// deals out every connector and then every task round-robin, as Kafka's EagerAssignor.
//
// A pure class: no I/O, the time passed in. It keeps what it needs between the rounds it leads
// (what it assigned, when held-back work is due), so one object lives as long as the worker.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "connect/runtime/distributed/connect_protocol.h"

namespace oxbow::connect::runtime::distributed {

struct ClusterView {
  int64_t configOffset = -1;
  // Every connector in the config, with its committed task count (0 for a STOPPED one).
  std::map<std::string, int> taskCounts;
};

class IncrementalCooperativeAssignor {
 public:
  explicit IncrementalCooperativeAssignor(int32_t maxDelayMs);  // scheduled.rebalance.max.delay.ms

  // members: member id -> its state (from JoinGroup's metadata). Returns member id -> assignment.
  // `version` is the protocol the group chose (0 eager, 1 compatible, 2 sessioned).
  // The generations, when known (-1 otherwise), let the leader notice that another leader
  // assigned since its own last round, whose view of the previous assignment it then drops.
  std::map<std::string, WorkerAssignment> assign(const std::string& leaderId,
                                                 const std::string& leaderUrl, int16_t version,
                                                 const std::map<std::string, WorkerState>& members,
                                                 const ClusterView& cluster, int64_t nowMs,
                                                 int32_t lastCompletedGeneration = -1,
                                                 int32_t generation = -1);

  // After assign(): what each member runs once it applied its assignment (its connectors and
  // tasks in full, revocations done). The leader answers "who runs this" from it.
  const std::map<std::string, WorkerAssignment>& fullAssignments() const { return full_; }
  // The delay of the last round's assignments (0 when nothing is held back).
  int32_t delayMs() const { return delay_; }

  struct Work {
    std::set<std::string> connectors;
    std::set<ConnectorTaskId> tasks;
    bool empty() const { return connectors.empty() && tasks.empty(); }
  };
  // A member's connectors and tasks in the order it reported them (revocations take the first).
  struct Load {
    std::string worker;
    std::vector<std::string> connectors;
    std::vector<ConnectorTaskId> tasks;
    bool empty() const { return connectors.empty() && tasks.empty(); }
  };

 private:
  std::map<std::string, WorkerAssignment> assignEager(
      const std::string& leaderId, const std::string& leaderUrl,
      const std::map<std::string, WorkerState>& members, const ClusterView& cluster);
  std::map<std::string, WorkerAssignment> assignIncremental(
      const std::map<std::string, WorkerState>& members, const ClusterView& cluster, int64_t now,
      int32_t lastCompletedGeneration, int32_t generation);
  Work handleLost(const Work& lost, std::vector<Load>& next, int64_t now);
  std::map<std::string, Work> balanceRevocations(const Work& configured, std::vector<Load>& next,
                                                 int64_t now);
  void resetDelay();

  int32_t maxDelay_;
  Work previous_;            // what the last round led left assigned (or held back)
  Work previousRevocation_;  // what it revoked
  bool revokedInPrevious_ = false;
  int successiveRevokingRounds_ = 0;
  std::set<std::string> candidates_;  // members that joined empty during a delay
  int64_t scheduledRebalance_ = 0;
  int32_t delay_ = 0;
  int32_t previousGeneration_ = -1;
  std::set<std::string> previousMembers_;
  std::map<std::string, WorkerAssignment> full_;
};

}  // namespace oxbow::connect::runtime::distributed
