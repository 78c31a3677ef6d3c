#include "connect/runtime/distributed/incremental_assignor.h"

#include <algorithm>
#include <cmath>

namespace oxbow::connect::runtime::distributed {

namespace {

using Work = IncrementalCooperativeAssignor::Work;
using Load = IncrementalCooperativeAssignor::Load;

// Both halves of a Work or a Load, so that each rule is written once for connectors and tasks.
template <typename F>
void forBoth(F&& f) {
  f(&Work::connectors, &Load::connectors);
  f(&Work::tasks, &Load::tasks);
}

Work configuredWork(const ClusterView& cluster) {
  Work w;
  for (const auto& [connector, count] : cluster.taskCounts) {
    w.connectors.insert(connector);
    for (int t = 0; t < count; ++t) w.tasks.insert({connector, t});
  }
  return w;
}

std::vector<Load> ownedLoads(const std::map<std::string, WorkerState>& members) {
  std::vector<Load> loads;
  for (const auto& [id, state] : members) {
    Load load{id, {}, {}};
    if (state.owned) {
      load.connectors = state.owned->connectors;
      load.tasks = state.owned->tasks;
    }
    loads.push_back(std::move(load));
  }
  return loads;
}

Work unionOf(const std::vector<Load>& loads) {
  Work w;
  for (const auto& load : loads) {
    w.connectors.insert(load.connectors.begin(), load.connectors.end());
    w.tasks.insert(load.tasks.begin(), load.tasks.end());
  }
  return w;
}

Work minus(Work base, const Work& other) {
  forBoth([&](auto set, auto) {
    for (const auto& x : other.*set) (base.*set).erase(x);
  });
  return base;
}

void addAll(Work& into, const Work& from) {
  forBoth([&](auto set, auto) { (into.*set).insert((from.*set).begin(), (from.*set).end()); });
}

// What a member runs that is more than one member runs.
Work duplicated(const std::vector<Load>& loads) {
  std::map<std::string, int> connectors;
  std::map<ConnectorTaskId, int> tasks;
  for (const auto& load : loads) {
    for (const auto& c : std::set<std::string>(load.connectors.begin(), load.connectors.end()))
      ++connectors[c];
    for (const auto& t : std::set<ConnectorTaskId>(load.tasks.begin(), load.tasks.end()))
      ++tasks[t];
  }
  Work w;
  for (const auto& [c, n] : connectors)
    if (n > 1) w.connectors.insert(c);
  for (const auto& [t, n] : tasks)
    if (n > 1) w.tasks.insert(t);
  return w;
}

// Per member, the part of `work` it runs.
std::map<std::string, Work> heldBy(const Work& work, const std::vector<Load>& loads) {
  std::map<std::string, Work> out;
  for (const auto& load : loads) {
    Work& mine = out[load.worker];
    forBoth([&](auto set, auto list) {
      for (const auto& x : load.*list)
        if ((work.*set).count(x)) (mine.*set).insert(x);
    });
  }
  return out;
}

void removeAll(std::vector<Load>& loads, const std::map<std::string, Work>& toRemove) {
  for (auto& load : loads) {
    auto it = toRemove.find(load.worker);
    if (it == toRemove.end()) continue;
    forBoth([&](auto set, auto list) {
      auto& items = load.*list;
      std::erase_if(items, [&](const auto& x) { return (it->second.*set).count(x) > 0; });
    });
  }
}

void mergeInto(std::map<std::string, Work>& into, const std::map<std::string, Work>& from) {
  for (const auto& [worker, work] : from) addAll(into[worker], work);
}

// Each item to the least loaded member (ties by member id), filling the lowest tier first.
template <typename T>
void assignLeastLoaded(std::vector<Load>& loads, std::vector<T> Load::*list,
                       const std::set<T>& items) {
  if (items.empty() || loads.empty()) return;
  std::stable_sort(loads.begin(), loads.end(), [&](const Load& a, const Load& b) {
    if ((a.*list).size() != (b.*list).size()) return (a.*list).size() < (b.*list).size();
    return a.worker < b.worker;
  });
  auto next = items.begin();
  while (next != items.end()) {
    size_t lowest = (loads.front().*list).size();
    for (auto& load : loads) {
      if ((load.*list).size() > lowest || next == items.end()) break;
      (load.*list).push_back(*next++);
    }
  }
}

// How many of one kind each member must give up so that every member has `total / n` of it and
// `total % n` members one more; the first ones a member reported go.
template <typename T>
std::map<std::string, std::vector<T>> revocationsToBalance(const std::vector<Load>& loads,
                                                           std::vector<T> Load::*list,
                                                           size_t total) {
  size_t n = loads.size();
  size_t minimum = total / n, extras = total % n;
  size_t atMinimum = 0, atExtra = 0;
  for (const auto& load : loads) {
    atMinimum += (load.*list).size() == minimum;
    atExtra += (load.*list).size() == minimum + 1;
  }
  std::map<std::string, std::vector<T>> out;
  if (atExtra == extras && atMinimum + atExtra == n) return out;
  size_t extrasGiven = 0;
  for (const auto& load : loads) {
    size_t size = (load.*list).size();
    if (size <= minimum) continue;
    size_t allowed = minimum;
    if (extrasGiven < extras) {
      ++extrasGiven;
      if (size == minimum + 1) continue;
      allowed = minimum + 1;
    }
    auto& revoked = out[load.worker];
    revoked.assign((load.*list).begin(), (load.*list).begin() + (size - allowed));
  }
  return out;
}

// Kafka's backoff between successive revoking rounds: 1 ms times 40 to the power of the rounds,
// at most the maximum delay (0 when the maximum is 0).
int32_t revokingBackoff(int rounds, int32_t maxDelay) {
  if (maxDelay <= 0) return 0;
  double ms = std::pow(40.0, rounds);
  return ms >= maxDelay ? maxDelay : static_cast<int32_t>(ms);
}

template <typename T>
void appendNew(std::vector<T>& out, const std::vector<T>& now, const std::vector<T>& before) {
  for (const auto& x : now)
    if (std::find(before.begin(), before.end(), x) == before.end()) out.push_back(x);
}

WorkerAssignment baseAssignment(int16_t version, int16_t error, const std::string& leaderId,
                                const std::string& leaderUrl, int64_t configOffset) {
  WorkerAssignment assignment;
  assignment.version = version;
  assignment.error = error;
  assignment.leader = leaderId;
  assignment.leaderUrl = leaderUrl;
  assignment.configOffset = configOffset;
  return assignment;
}

}  // namespace

IncrementalCooperativeAssignor::IncrementalCooperativeAssignor(int32_t maxDelayMs)
    : maxDelay_(std::max<int32_t>(0, maxDelayMs)) {}

std::map<std::string, WorkerAssignment> IncrementalCooperativeAssignor::assign(
    const std::string& leaderId, const std::string& leaderUrl, int16_t version,
    const std::map<std::string, WorkerState>& members, const ClusterView& cluster, int64_t nowMs,
    int32_t lastCompletedGeneration, int32_t generation) {
  std::map<std::string, WorkerAssignment> out;
  if (members.empty()) return out;
  int64_t maxOffset = cluster.configOffset;
  for (const auto& [id, state] : members) maxOffset = std::max(maxOffset, state.configOffset);
  if (maxOffset > cluster.configOffset) {
    // The leader has not read the config as far as some member: it cannot assign. Everyone
    // rejoins, the leader once it caught up.
    for (const auto& [id, state] : members)
      out[id] = baseAssignment(version, kConfigMismatch, leaderId, leaderUrl, maxOffset);
    return out;
  }
  std::map<std::string, WorkerAssignment> incremental =
      version == kEagerVersion
          ? assignEager(leaderId, leaderUrl, members, cluster)
          : assignIncremental(members, cluster, nowMs, lastCompletedGeneration, generation);
  for (auto& [id, a] : incremental) {
    WorkerAssignment& filled = out[id];
    filled = baseAssignment(version, kNoError, leaderId, leaderUrl, cluster.configOffset);
    filled.connectors = std::move(a.connectors);
    filled.tasks = std::move(a.tasks);
    filled.revokedConnectors = std::move(a.revokedConnectors);
    filled.revokedTasks = std::move(a.revokedTasks);
    filled.delayMs = version == kEagerVersion ? 0 : delay_;
  }
  for (auto& [id, a] : full_) {
    a.version = version;
    a.leader = leaderId;
    a.leaderUrl = leaderUrl;
    a.configOffset = cluster.configOffset;
  }
  return out;
}

std::map<std::string, WorkerAssignment> IncrementalCooperativeAssignor::assignEager(
    const std::string&, const std::string&, const std::map<std::string, WorkerState>& members,
    const ClusterView& cluster) {
  // Every connector first, then every task, continuing round the members in id order, so that
  // one-task connectors do not put every connector on one half of the members and every task on
  // the other.
  std::map<std::string, WorkerAssignment> out;
  for (const auto& [id, state] : members) out[id];
  auto member = out.begin();
  auto nextMember = [&]() -> WorkerAssignment& {
    if (member == out.end()) member = out.begin();
    return (member++)->second;
  };
  for (const auto& [connector, count] : cluster.taskCounts)
    nextMember().connectors.push_back(connector);
  for (const auto& [connector, count] : cluster.taskCounts)
    for (int t = 0; t < count; ++t) nextMember().tasks.push_back({connector, t});
  full_ = out;
  return out;
}

std::map<std::string, WorkerAssignment> IncrementalCooperativeAssignor::assignIncremental(
    const std::map<std::string, WorkerState>& members, const ClusterView& cluster, int64_t now,
    int32_t lastCompletedGeneration, int32_t generation) {
  // Another leader assigned since this one's last round: its memory of that round is stale.
  if (lastCompletedGeneration >= 0 && previousGeneration_ != lastCompletedGeneration)
    previous_ = {};
  const Work configured = configuredWork(cluster);
  const std::vector<Load> owned = ownedLoads(members);
  const Work active = unionOf(owned);
  // A revocation that did not take effect (the member still runs it): start again from what runs.
  if (!previousRevocation_.empty()) {
    bool stillRunning = false;
    forBoth([&](auto set, auto) {
      for (const auto& x : previousRevocation_.*set) stillRunning |= (active.*set).count(x) > 0;
    });
    if (stillRunning) previous_ = active;
    previousRevocation_ = {};
  }
  // Kafka counts as deleted what the last round left assigned; what a member runs counts too
  // here, so that a new leader (who remembers no round) still stops work the config dropped.
  Work assignedOrRunning = previous_;
  addAll(assignedOrRunning, active);
  const Work deleted = minus(assignedOrRunning, configured);
  const Work lost = minus(minus(previous_, active), deleted);
  const Work created = minus(minus(configured, previous_), active);

  std::map<std::string, Work> toRevoke = heldBy(deleted, owned);
  mergeInto(toRevoke, heldBy(duplicated(owned), owned));
  std::vector<Load> next = owned;
  removeAll(next, toRevoke);
  // What each member keeps running (deleted work aside): the new work is the rest of `next`.
  std::vector<Load> current = owned;
  removeAll(current, heldBy(deleted, owned));

  Work toAssign = created;
  addAll(toAssign, handleLost(lost, next, now));
  if (delay_ == 0) {
    mergeInto(toRevoke, balanceRevocations(configured, next, now));
  } else {
    revokedInPrevious_ = false;
  }
  assignLeastLoaded(next, &Load::connectors, toAssign.connectors);
  assignLeastLoaded(next, &Load::tasks, toAssign.tasks);

  std::map<std::string, WorkerAssignment> out;
  full_.clear();
  Work nextPrevious;
  for (const auto& load : next) {
    WorkerAssignment& a = out[load.worker];
    const Load& before = *std::find_if(current.begin(), current.end(),
                                       [&](const Load& l) { return l.worker == load.worker; });
    appendNew(a.connectors, load.connectors, before.connectors);
    appendNew(a.tasks, load.tasks, before.tasks);
    const Work& revoked = toRevoke[load.worker];
    a.revokedConnectors.assign(revoked.connectors.begin(), revoked.connectors.end());
    a.revokedTasks.assign(revoked.tasks.begin(), revoked.tasks.end());
    addAll(previousRevocation_, revoked);
    WorkerAssignment& all = full_[load.worker];
    all.connectors = load.connectors;
    all.tasks = load.tasks;
    addAll(nextPrevious, unionOf({load}));
  }
  // What was revoked is placed next round as new work; what is held back stays counted.
  previous_ = minus(nextPrevious, previousRevocation_);
  addAll(previous_, lost);
  previousGeneration_ = generation;
  previousMembers_.clear();
  for (const auto& [id, state] : members) previousMembers_.insert(id);
  return out;
}

Work IncrementalCooperativeAssignor::handleLost(const Work& lost, std::vector<Load>& next,
                                                int64_t now) {
  if (lost.empty() && !revokedInPrevious_) {
    resetDelay();
    return {};
  }
  std::set<std::string> active;
  for (const auto& load : next) active.insert(load.worker);
  bool everyoneBack =
      std::includes(active.begin(), active.end(), previousMembers_.begin(), previousMembers_.end());
  // Nobody left: the work went missing because a member missed the last assignment. And with
  // no delay allowed, nothing is held back.
  if ((scheduledRebalance_ <= 0 && everyoneBack) || maxDelay_ == 0) return lost;
  if (scheduledRebalance_ > 0 && now >= scheduledRebalance_) {
    // The delay is over: the members that came empty-handed meanwhile take the lost work round
    // robin; without such members it goes to the least loaded.
    std::vector<Load*> takers;
    for (auto& load : next)
      if (candidates_.count(load.worker)) takers.push_back(&load);
    Work rest;
    if (takers.empty()) rest = lost;
    forBoth([&](auto set, auto list) {
      size_t i = 0;
      if (!takers.empty())
        for (const auto& x : lost.*set) (takers[i++ % takers.size()]->*list).push_back(x);
    });
    resetDelay();
    revokedInPrevious_ = false;
    return rest;
  }
  for (const auto& load : next)
    if (load.empty()) candidates_.insert(load.worker);
  if (now < scheduledRebalance_) {
    delay_ = static_cast<int32_t>(std::min<int64_t>(scheduledRebalance_ - now, maxDelay_));
  } else {
    delay_ = maxDelay_;
  }
  scheduledRebalance_ = now + delay_;
  return {};
}

std::map<std::string, Work> IncrementalCooperativeAssignor::balanceRevocations(
    const Work& configured, std::vector<Load>& next, int64_t now) {
  std::map<std::string, Work> revocations;
  bool allEmpty = std::all_of(next.begin(), next.end(), [](const Load& l) { return l.empty(); });
  if (!allEmpty && !configured.empty() && !next.empty()) {
    forBoth([&](auto set, auto list) {
      for (auto& [worker, items] : revocationsToBalance(next, list, (configured.*set).size()))
        (revocations[worker].*set).insert(items.begin(), items.end());
    });
  }
  if (revocations.empty()) {
    // Balanced again: successive revoking rounds start counting from zero.
    if (revokedInPrevious_) {
      revokedInPrevious_ = false;
      successiveRevokingRounds_ = 0;
    }
    return {};
  }
  if (revokedInPrevious_) {
    // Revoking round after revoking round (members joining one by one): wait a growing delay
    // before revoking again, unless there is no delay to wait.
    delay_ = revokingBackoff(++successiveRevokingRounds_, maxDelay_);
    if (delay_ != 0) {
      scheduledRebalance_ = now + delay_;
      return {};
    }
  }
  revokedInPrevious_ = true;
  removeAll(next, revocations);
  return revocations;
}

void IncrementalCooperativeAssignor::resetDelay() {
  candidates_.clear();
  scheduledRebalance_ = 0;
  delay_ = 0;
}

}  // namespace oxbow::connect::runtime::distributed
