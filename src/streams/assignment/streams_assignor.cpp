#include "streams/assignment/streams_assignor.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace oxbow::streams::detail {

namespace {

constexpr int32_t kAssignmentError = 3;
constexpr int32_t kShutdownRequested = 4;

struct Member {
  std::string id;
  std::string process;
  std::string endpoint;
  std::set<TaskId> owned;
  bool readable = false;
};

Endpoint endpoint_of(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return {text, -1};
  try {
    return {text.substr(0, colon), std::stoi(text.substr(colon + 1))};
  } catch (const std::exception&) {
    return {text, -1};
  }
}

std::string error_assignment(int32_t code) {
  AssignmentInfo info;
  info.error_code = code;
  return ConsumerAssignment{{}, info.encode()}.encode();
}

class GroupPlan {
 public:
  GroupPlan(const GroupAssignorContext& context,
            const std::map<std::string, std::string>& subscriptions)
      : context_(context) {
    form_units();
    for (const auto& s : context_.subtopologies)
      for (const auto& t : s.sources) subtopology_of_[t] = &s;
    for (const auto& [id, bytes] : subscriptions) read_member(id, bytes);
  }

  std::map<std::string, std::string> run() {
    std::map<std::string, std::string> out;
    if (shutdown_requested_) {
      for (const auto& m : members_) out[m.id] = error_assignment(kShutdownRequested);
      return out;
    }
    std::set<TaskId> tasks;
    std::map<TaskId, int64_t> ends;
    collect_tasks(tasks, ends);
    std::map<std::string, ClientState> clients;
    for (const auto& m : members_) {
      if (!m.readable) continue;
      auto& c = clients[m.process];
      c.capacity = ++threads_[m.process];
      c.previous_active.insert(m.owned.begin(), m.owned.end());
      for (const auto& [task, sum] : sums_[m.id]) {
        auto [it, fresh] = c.offset_sums.emplace(task, sum);
        if (!fresh &&
            (sum == kLatestOffsetSum || (it->second != kLatestOffsetSum && sum > it->second)))
          it->second = sum;
      }
    }
    AssignorResult result = assign_tasks(clients, tasks, ends, context_.config);
    std::map<std::string, ClientAssignment> by_member = share_among_threads(result);
    AssignmentInfo common;
    host_maps(by_member, common);
    if (result.probing_rebalance_needed)
      common.next_rebalance_ms = context_.now_ms + context_.probing_rebalance_interval_ms;
    for (const auto& m : members_) {
      if (!m.readable) {
        out[m.id] = error_assignment(kAssignmentError);
        continue;
      }
      out[m.id] = member_assignment(by_member[m.id], common);
    }
    return out;
  }

 private:
  // Sub-topologies of different named topologies that read one source topic (each alone, as
  // check_named_topologies requires) form a unit: the member whose consumer holds a partition
  // feeds it to every task reading it, so those tasks go to one member together. The plan places
  // the unit's first sub-topology (with the changelogs of all, for their lags); the assignment
  // brings the others' tasks beside its own.
  void form_units() {
    std::vector<SubtopologyTopics> units;
    std::map<std::string, size_t> unit_reading;  // a source topic -> its unit in `units`
    for (const auto& s : context_.subtopologies) {
      auto shared = s.sources.size() == 1 ? unit_reading.find(s.sources[0]) : unit_reading.end();
      if (shared == unit_reading.end()) {
        if (s.sources.size() == 1) unit_reading[s.sources[0]] = units.size();
        units.push_back(s);
        continue;
      }
      auto& unit = units[shared->second];
      unit.changelogs.insert(unit.changelogs.end(), s.changelogs.begin(), s.changelogs.end());
      followers_[{unit.topology, unit.id}].push_back({s.topology, s.id});
      unit_of_[{s.topology, s.id}] = {unit.topology, unit.id};
    }
    context_.subtopologies = std::move(units);
  }

  // A task as the plan knows it: a follower's task is its unit's.
  TaskId unit_task(const TaskId& task) const {
    auto it = unit_of_.find({task.topology, task.subtopology});
    return it == unit_of_.end() ? task
                                : TaskId{it->second.second, task.partition, it->second.first};
  }

  // The unit task's own and its followers' tasks.
  std::vector<TaskId> expand(const TaskId& task) const {
    std::vector<TaskId> out{task};
    auto it = followers_.find({task.topology, task.subtopology});
    if (it != followers_.end())
      for (const auto& [topology, id] : it->second) out.push_back({id, task.partition, topology});
    return out;
  }

  void read_member(const std::string& id, const std::string& bytes) {
    Member m;
    m.id = id;
    try {
      auto envelope = ConsumerSubscription::decode(bytes);
      auto info = SubscriptionInfo::decode(envelope.user_data);
      m.process = uuid_text(info.process_id);
      m.endpoint = info.endpoint;
      for (const auto& [topic, p] : envelope.owned) {
        auto sub = subtopology_of_.find(topic);
        if (sub != subtopology_of_.end()) m.owned.insert(sub->second->task(p));
      }
      // A unit's sum: the latest when one of its tasks is running here, else the sum of its
      // tasks' (what its stores' changelogs hold locally).
      for (const auto& [task, sum] : info.task_offset_sums) {
        auto [it, fresh] = sums_[id].emplace(unit_task(task), sum);
        if (fresh || it->second == kLatestOffsetSum) continue;
        it->second = sum == kLatestOffsetSum ? sum : it->second + sum;
      }
      if (info.error_code == kShutdownRequested) shutdown_requested_ = true;
      m.readable = true;
    } catch (const std::exception& e) {
      spdlog::error("group member {} sent a subscription this assignor cannot read: {}", id,
                    e.what());
    }
    members_.push_back(std::move(m));
  }

  void collect_tasks(std::set<TaskId>& tasks, std::map<TaskId, int64_t>& ends) {
    PartitionList changelogs;
    for (const auto& s : context_.subtopologies) {
      int32_t n = 0;
      for (const auto& t : s.sources) n = std::max(n, context_.partitions_of(t));
      for (int32_t p = 0; p < n; ++p) {
        tasks.insert(s.task(p));
        if (s.changelogs.empty()) continue;
        stateful_.insert(s.task(p));
        ends[s.task(p)] = 0;
        for (const auto& c : s.changelogs) changelogs.emplace_back(c, p);
      }
    }
    if (changelogs.empty()) return;
    try {
      auto offsets = context_.end_offsets(changelogs);
      for (const auto& s : context_.subtopologies)
        for (const auto& c : s.changelogs)
          for (auto& [task, sum] : ends)
            if (s.runs(task)) {
              auto it = offsets.find({c, task.partition});
              if (it != offsets.end() && it->second > 0) sum += it->second;
            }
    } catch (const std::exception& e) {
      // Without the ends no lag is known: every client counts as caught up.
      spdlog::warn("assignor: changelog end offsets unknown ({}): tasks placed without lags",
                   e.what());
      for (auto& [task, sum] : ends) sum = 0;
    }
  }

  // Each client's tasks among its members: a task stays with the member that had it, the others
  // go to the member with the fewest; a task another member still owns waits a round.
  std::map<std::string, ClientAssignment> share_among_threads(const AssignorResult& result) {
    std::map<TaskId, std::string> owner;
    for (const auto& m : members_)
      for (const auto& t : m.owned) owner[t] = m.id;
    std::map<std::string, ClientAssignment> out;
    for (const auto& [process, tasks] : result.clients) {
      std::vector<const Member*> threads;
      for (const auto& m : members_)
        if (m.readable && m.process == process) threads.push_back(&m);
      if (threads.empty()) continue;
      auto fewest = [&](bool count_standbys) {
        const Member* best = nullptr;
        size_t best_n = 0;
        for (const auto* m : threads) {
          const auto& a = out[m->id];
          size_t n = a.active.size() + (count_standbys ? a.standby.size() : 0);
          if (!best || n < best_n) best = m, best_n = n;
        }
        return best;
      };
      // Each thread's share; a thread keeps what it owns up to it.
      size_t quota = (tasks.active.size() + threads.size() - 1) / threads.size();
      std::vector<TaskId> rest, handover_standby;
      for (const auto& t : tasks.active) {
        auto o = owner.find(t);
        bool here =
            o != owner.end() && std::any_of(threads.begin(), threads.end(),
                                            [&](const Member* m) { return m->id == o->second; });
        if (here && out[o->second].active.size() < quota) {
          out[o->second].active.insert(t);
        } else if (o != owner.end()) {
          // Its owner gives it up first and the next round places it; meanwhile this client
          // keeps (or starts) a copy of its state, as Kafka gives it as a standby.
          withheld_.insert(t);
          if (stateful_.count(t)) handover_standby.push_back(t);
        } else {
          rest.push_back(t);
        }
      }
      for (const auto& t : rest) out[fewest(false)->id].active.insert(t);
      for (const auto& t : handover_standby) out[fewest(true)->id].standby.insert(t);
      for (const auto& t : tasks.standby) {
        auto& a = out[fewest(true)->id];
        a.standby.insert(t);
        if (tasks.warmup.count(t)) a.warmup.insert(t);
      }
    }
    // A withheld task is still processed by its owner until it gives it up: the hosts say so.
    for (const auto& t : withheld_) held_by_owner_[owner.at(t)].insert(t);
    return out;
  }

  void host_maps(const std::map<std::string, ClientAssignment>& by_member, AssignmentInfo& info) {
    for (const auto& m : members_) {
      if (!m.readable || m.endpoint.empty()) continue;
      Endpoint e = endpoint_of(m.endpoint);
      auto& active = info.active_by_host[e];
      auto& standby = info.standby_by_host[e];
      auto it = by_member.find(m.id);
      std::set<TaskId> actives = held_by_owner_[m.id];
      if (it != by_member.end()) actives.insert(it->second.active.begin(), it->second.active.end());
      for (const auto& t : actives)
        for (const auto& p : task_partitions(context_, t)) active.push_back(p);
      if (it != by_member.end())
        for (const auto& t : it->second.standby)
          for (const auto& p : task_partitions(context_, t)) standby.push_back(p);
    }
    for (auto* map : {&info.active_by_host, &info.standby_by_host})
      for (auto& [host, list] : *map) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
      }
  }

  std::string member_assignment(const ClientAssignment& tasks, const AssignmentInfo& common) {
    AssignmentInfo info = common;
    std::vector<std::pair<std::pair<std::string, int32_t>, TaskId>> paired;
    for (const auto& t : tasks.active)
      for (const auto& p : task_partitions(context_, t)) paired.push_back({p, t});
    std::sort(paired.begin(), paired.end());
    ConsumerAssignment envelope;
    for (const auto& [p, t] : paired) {
      envelope.partitions.push_back(p);
      info.active_tasks.push_back(t);
    }
    // Followers' tasks after the pairs (a partition appears once in the envelope).
    for (const auto& t : tasks.active) {
      auto all = expand(t);
      info.active_tasks.insert(info.active_tasks.end(), all.begin() + 1, all.end());
    }
    for (const auto& t : tasks.standby)
      for (const auto& each : expand(t)) info.standby_tasks[each] = task_partitions(context_, t);
    envelope.user_data = info.encode();
    return envelope.encode();
  }

  GroupAssignorContext context_;  // its sub-topologies: the units' first ones (form_units)
  using SubtopologyName = std::pair<std::string, int32_t>;  // topology, id
  std::map<SubtopologyName, std::vector<SubtopologyName>> followers_;
  std::map<SubtopologyName, SubtopologyName> unit_of_;  // a follower -> its unit's first
  std::map<std::string, const SubtopologyTopics*> subtopology_of_;
  std::vector<Member> members_;
  std::map<std::string, std::map<TaskId, int64_t>> sums_;
  std::map<std::string, int32_t> threads_;
  std::set<TaskId> withheld_;
  std::set<TaskId> stateful_;
  std::map<std::string, std::set<TaskId>> held_by_owner_;
  bool shutdown_requested_ = false;
};

}  // namespace

PartitionList task_partitions(const GroupAssignorContext& context, const TaskId& task) {
  PartitionList out;
  for (const auto& s : context.subtopologies) {
    if (!s.runs(task)) continue;
    for (const auto& t : s.sources)
      if (task.partition < context.partitions_of(t)) out.emplace_back(t, task.partition);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::map<std::string, std::string> assign_group(
    const GroupAssignorContext& context, const std::map<std::string, std::string>& subscriptions) {
  return GroupPlan(context, subscriptions).run();
}

}  // namespace oxbow::streams::detail
