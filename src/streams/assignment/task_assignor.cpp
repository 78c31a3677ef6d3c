#include "streams/assignment/task_assignor.h"

#include <algorithm>
#include <tuple>

namespace oxbow::streams::detail {

namespace {

class Planner {
 public:
  Planner(const std::map<std::string, ClientState>& clients, const std::set<TaskId>& tasks,
          const std::map<TaskId, int64_t>& ends, const AssignorConfig& config)
      : clients_(clients), tasks_(tasks), ends_(ends), config_(config) {
    for (const auto& [id, c] : clients_) result_.clients[id];
  }

  AssignorResult run() {
    if (clients_.empty()) return result_;
    place_targets();
    balance();
    keep_state_where_it_is();
    place_standbys();
    return result_;
  }

 private:
  bool stateful(const TaskId& t) const { return ends_.count(t) > 0; }
  // -1: runs it now; otherwise how far its state is behind the changelogs' end.
  int64_t lag(const std::string& client, const TaskId& t) const {
    if (!stateful(t)) return 0;
    int64_t end = std::max<int64_t>(ends_.at(t), 0);
    const auto& sums = clients_.at(client).offset_sums;
    auto it = sums.find(t);
    if (it == sums.end()) return end;
    if (it->second == kLatestOffsetSum) return -1;
    if (it->second < 0) return end;
    // A sum beyond the end is state the changelog no longer has (a recreated topic): none of it
    // counts.
    if (it->second > end) return end;
    return end - it->second;
  }
  bool caught_up(const std::string& client, const TaskId& t) const {
    int64_t l = lag(client, t);
    return l < 0 || l <= config_.acceptable_recovery_lag;
  }
  int32_t capacity(const std::string& client) const {
    return std::max(clients_.at(client).capacity, 1);
  }
  size_t actives(const std::string& client) const {
    return result_.clients.at(client).active.size();
  }
  // Whether `a` holding n+1 tasks is still less loaded than `b` holding m (by threads).
  bool lighter(size_t n, const std::string& a, size_t m, const std::string& b) const {
    return static_cast<int64_t>(n) * capacity(b) < static_cast<int64_t>(m) * capacity(a);
  }
  std::string previous_owner(const TaskId& t) const {
    for (const auto& [id, c] : clients_)
      if (c.previous_active.count(t)) return id;
    return {};
  }

  // Tasks stay with their previous owner up to its share; the others go to the emptiest client.
  // Stateful tasks are placed first, those their owner keeps and then the others, before the
  // stateless ones are: a stateless task is the cheaper one to move, and a new client whose
  // share were filled with the stateless tasks it took earlier would never run a stateful one.
  void place_targets() {
    std::vector<TaskId> stateful_tasks, stateless_tasks;
    for (const auto& t : tasks_) (stateful(t) ? stateful_tasks : stateless_tasks).push_back(t);
    place(stateful_tasks);
    place(stateless_tasks);
  }
  void place(const std::vector<TaskId>& tasks) {
    int64_t total_capacity = 0;
    for (const auto& [id, c] : clients_) total_capacity += capacity(id);
    auto quota = [&](const std::string& id) {
      int64_t n = static_cast<int64_t>(tasks_.size()) * capacity(id);
      return static_cast<size_t>((n + total_capacity - 1) / total_capacity);
    };
    std::vector<TaskId> unplaced;
    for (const auto& t : tasks) {
      std::string owner = previous_owner(t);
      if (!owner.empty() && actives(owner) < quota(owner))
        result_.clients[owner].active.insert(t);
      else
        unplaced.push_back(t);
    }
    for (const auto& t : unplaced) {
      const std::string* best = nullptr;
      for (const auto& [id, c] : clients_) {
        if (!best) {
          best = &id;
          continue;
        }
        size_t n = actives(id), m = actives(*best);
        bool emptier = lighter(n, id, m, *best);
        bool as_empty = !emptier && !lighter(m, *best, n, id);
        if (emptier || (as_empty && lag(id, t) < lag(*best, t))) best = &id;
      }
      result_.clients[*best].active.insert(t);
    }
  }

  // Moves tasks from the most loaded client (tasks per thread) to the one that would be least
  // loaded with one more, while the receiver then stays lighter than the giver was; the task
  // moved is the one whose state is most caught up on the receiver. When the most loaded client
  // cannot give, no other can either.
  void balance() {
    for (size_t round = 0; round < tasks_.size() * clients_.size(); ++round) {
      const std::string *most = nullptr, *least = nullptr;
      for (const auto& [id, c] : clients_) {
        if (!most || lighter(actives(*most), *most, actives(id), id)) most = &id;
        if (!least || lighter(actives(id) + 1, id, actives(*least) + 1, *least)) least = &id;
      }
      if (*most == *least || !lighter(actives(*least) + 1, *least, actives(*most), *most)) return;
      auto& from = result_.clients[*most].active;
      const TaskId* pick = nullptr;
      for (const auto& t : from)
        if (!pick || lag(*least, t) < lag(*least, *pick)) pick = &t;
      TaskId moved = *pick;
      from.erase(moved);
      result_.clients[*least].active.insert(moved);
    }
  }

  // A stateful task whose target would have to restore stays where its state is least behind;
  // the target gets a warm-up replica to catch up, within the group's budget of warm-ups.
  void keep_state_where_it_is() {
    int32_t warmups = 0;
    for (const auto& t : tasks_) {
      if (!stateful(t)) continue;
      std::string target;
      for (const auto& [id, a] : result_.clients)
        if (a.active.count(t)) target = id;
      if (caught_up(target, t)) continue;
      std::string owner = previous_owner(t);
      const std::string* best = nullptr;
      auto rank = [&](const std::string& id) {
        return std::make_tuple(!caught_up(id, t), id != owner, lag(id, t));
      };
      for (const auto& [id, c] : clients_)
        if (!best || rank(id) < rank(*best)) best = &id;
      if (*best == target || lag(*best, t) >= lag(target, t)) continue;
      result_.clients[target].active.erase(t);
      result_.clients[*best].active.insert(t);
      if (warmups < config_.max_warmup_replicas) {
        ++warmups;
        result_.clients[target].warmup.insert(t);
        result_.clients[target].standby.insert(t);
        result_.probing_rebalance_needed = true;
      }
    }
  }

  // num.standby.replicas copies of each stateful task on clients other than its active one.
  void place_standbys() {
    if (config_.num_standby_replicas <= 0) return;
    for (const auto& t : tasks_) {
      if (!stateful(t)) continue;
      int32_t placed = 0;
      std::set<std::string> chosen;
      while (placed < config_.num_standby_replicas) {
        const std::string* best = nullptr;
        auto rank = [&](const std::string& id) {
          const auto& a = result_.clients.at(id);
          // A warm-up already warming this task is the standby's natural place.
          return std::make_tuple(
              !a.warmup.count(t), lag(id, t),
              static_cast<double>(a.active.size() + a.standby.size()) / capacity(id), id);
        };
        for (const auto& [id, a] : result_.clients) {
          if (a.active.count(t) || chosen.count(id)) continue;
          if (!best || rank(id) < rank(*best)) best = &id;
        }
        if (!best) break;  // fewer other clients than standbys asked for
        chosen.insert(*best);
        auto& a = result_.clients[*best];
        a.standby.insert(t);
        a.warmup.erase(t);  // a standby now: it stays after the task's state caught up
        ++placed;
      }
    }
  }

  const std::map<std::string, ClientState>& clients_;
  const std::set<TaskId>& tasks_;
  const std::map<TaskId, int64_t>& ends_;
  const AssignorConfig& config_;
  AssignorResult result_;
};

}  // namespace

AssignorResult assign_tasks(const std::map<std::string, ClientState>& clients,
                            const std::set<TaskId>& tasks,
                            const std::map<TaskId, int64_t>& end_offset_sums,
                            const AssignorConfig& config) {
  return Planner(clients, tasks, end_offset_sums, config).run();
}

}  // namespace oxbow::streams::detail
