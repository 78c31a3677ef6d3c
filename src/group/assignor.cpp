#include "group/assignor.h"

#include <algorithm>
#include <optional>

namespace oxbow::group {

namespace {

struct Slot {
  const TopicShape* topic;
  int32_t partition;
};

// Members are named by their index in the assignor's input, so that the per-partition loops
// compare counters instead of looking member ids up.
using MemberIndexes = std::vector<size_t>;

// The eligible member with the fewest partitions (the first in input order among equals).
size_t least_loaded(const MemberIndexes& eligible, const std::vector<size_t>& loads) {
  size_t best = eligible.front();
  for (size_t m : eligible) {
    if (loads[m] < loads[best]) best = m;
  }
  return best;
}

// The previous target's partitions of `m` that still exist and that it still subscribes to, in
// (topic, partition) order.
std::vector<Slot> still_valid(const AssignorMember& m,
                              const std::map<std::string, TopicShape>& topics) {
  std::vector<Slot> out;
  for (const auto& [name, topic] : topics) {
    auto previous = m.previous_target.find(topic.id);
    if (previous == m.previous_target.end() || !m.topics.contains(name)) continue;
    for (int32_t p : previous->second) {
      if (p < topic.partitions) out.push_back({&topic, p});
    }
  }
  return out;
}

bool same_subscriptions(const std::vector<AssignorMember>& members) {
  return std::all_of(members.begin(), members.end(),
                     [&](const AssignorMember& m) { return m.topics == members.front().topics; });
}

// As Kafka's uniform assignor: every member gets total/n partitions (one more for the first
// total%n), keeping the lowest of its previous ones; the partitions let go and the new ones go,
// in order, to the members below their share. Where subscriptions differ, a last pass moves a
// partition while its owner has two more than another subscriber; where they are all the same,
// the shares are already even and that pass, the costly one, is not run.
std::map<std::string, Assignment> uniform(const std::vector<AssignorMember>& members,
                                          const std::map<std::string, TopicShape>& topics) {
  std::map<std::string, Assignment> out;
  if (members.empty()) return out;
  std::vector<size_t> loads(members.size(), 0);
  std::map<std::string, MemberIndexes> eligible;
  for (size_t i = 0; i < members.size(); ++i) {
    out[members[i].id];
    for (const auto& t : members[i].topics) eligible[t].push_back(i);
  }
  size_t total = 0;
  for (const auto& [name, topic] : topics) {
    if (eligible.contains(name)) total += static_cast<size_t>(topic.partitions);
  }
  size_t share = total / members.size(), extra = total % members.size();
  std::map<std::pair<Uuid, int32_t>, size_t> owner;
  for (size_t i = 0; i < members.size(); ++i) {
    size_t keep = share;
    auto previous = still_valid(members[i], topics);
    if (previous.size() > share && extra > 0) {
      ++keep;
      --extra;
    }
    for (const auto& slot : previous) {
      if (loads[i] == keep) break;
      if (!owner.emplace(std::pair{slot.topic->id, slot.partition}, i).second) continue;
      ++loads[i];
    }
  }
  auto quota = [&](size_t m) { return loads[m] < share || (loads[m] == share && extra > 0); };
  for (const auto& [name, topic] : topics) {
    auto who = eligible.find(name);
    if (who == eligible.end()) continue;
    for (int32_t p = 0; p < topic.partitions; ++p) {
      if (owner.contains({topic.id, p})) continue;
      std::optional<size_t> to;
      for (size_t m : who->second) {
        if (quota(m) && (!to || loads[m] < loads[*to])) to = m;
      }
      if (!to) {
        to = least_loaded(who->second, loads);
      } else if (loads[*to] == share) {
        --extra;
      }
      owner[{topic.id, p}] = *to;
      ++loads[*to];
    }
  }
  if (!same_subscriptions(members)) {
    std::map<Uuid, const MemberIndexes*> eligible_by_id;
    for (const auto& [name, topic] : topics) {
      if (auto who = eligible.find(name); who != eligible.end())
        eligible_by_id[topic.id] = &who->second;
    }
    for (bool moved = true; moved;) {
      moved = false;
      for (auto it = owner.rbegin(); it != owner.rend(); ++it) {
        size_t& member = it->second;
        size_t to = least_loaded(*eligible_by_id.at(it->first.first), loads);
        if (loads[member] > loads[to] + 1) {
          --loads[member];
          ++loads[to];
          member = to;
          moved = true;
        }
      }
    }
  }
  for (const auto& [tp, member] : owner) out[members[member].id][tp.first].insert(tp.second);
  return out;
}

std::map<std::string, Assignment> range(const std::vector<AssignorMember>& members,
                                        const std::map<std::string, TopicShape>& topics) {
  std::map<std::string, Assignment> out;
  for (const auto& m : members) out[m.id];
  for (const auto& [name, topic] : topics) {
    std::vector<const AssignorMember*> eligible;
    for (const auto& m : members) {
      if (m.topics.contains(name)) eligible.push_back(&m);
    }
    if (eligible.empty()) continue;
    std::sort(eligible.begin(), eligible.end(),
              [](const auto* a, const auto* b) { return a->id < b->id; });
    auto n = static_cast<int32_t>(eligible.size());
    int32_t quota = topic.partitions / n, extra = topic.partitions % n, next = 0;
    for (int32_t i = 0; i < n; ++i) {
      int32_t count = quota + (i < extra ? 1 : 0);
      for (int32_t k = 0; k < count; ++k) out[eligible[i]->id][topic.id].insert(next++);
    }
  }
  return out;
}

}  // namespace

const std::vector<std::string>& assignor_names() {
  static const std::vector<std::string> names{"uniform", "range"};
  return names;
}

bool is_assignor(const std::string& name) {
  const auto& names = assignor_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::map<std::string, Assignment> assign(const std::string& assignor,
                                         const std::vector<AssignorMember>& members,
                                         const std::map<std::string, TopicShape>& topics) {
  auto out = assignor == "range" ? range(members, topics) : uniform(members, topics);
  for (auto& [member, assignment] : out) {
    std::erase_if(assignment, [](const auto& entry) { return entry.second.empty(); });
  }
  return out;
}

}  // namespace oxbow::group
