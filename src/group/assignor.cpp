#include "group/assignor.h"

#include <algorithm>

namespace oxbow::group {

namespace {

struct Slot {
  const TopicShape* topic;
  int32_t partition;
};

using Loads = std::map<std::string, size_t>;

// The eligible member with the fewest partitions (the first by id among equals).
const std::string* least_loaded(const std::vector<const AssignorMember*>& eligible,
                                const Loads& loads) {
  const std::string* best = nullptr;
  for (const auto* m : eligible) {
    if (!best || loads.at(m->id) < loads.at(*best)) best = &m->id;
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

// As Kafka's uniform assignor: every member gets total/n partitions (one more for the first
// total%n), keeping the lowest of its previous ones; the partitions let go and the new ones go,
// in order, to the members below their share. Where subscriptions differ, a last pass moves a
// partition while its owner has two more than another subscriber.
std::map<std::string, Assignment> uniform(const std::vector<AssignorMember>& members,
                                          const std::map<std::string, TopicShape>& topics) {
  std::map<std::string, Assignment> out;
  Loads loads;
  std::map<std::string, std::vector<const AssignorMember*>> eligible;
  size_t total = 0;
  for (const auto& m : members) {
    out[m.id];
    loads[m.id] = 0;
    for (const auto& t : m.topics) eligible[t].push_back(&m);
  }
  for (const auto& [name, topic] : topics) {
    if (eligible.contains(name)) total += static_cast<size_t>(topic.partitions);
  }
  if (members.empty()) return out;
  size_t share = total / members.size(), extra = total % members.size();
  std::map<std::pair<Uuid, int32_t>, std::string> owner;
  for (const auto& m : members) {
    size_t keep = share;
    auto previous = still_valid(m, topics);
    if (previous.size() > share && extra > 0) {
      ++keep;
      --extra;
    }
    for (const auto& slot : previous) {
      if (loads[m.id] == keep) break;
      if (!owner.emplace(std::pair{slot.topic->id, slot.partition}, m.id).second) continue;
      ++loads[m.id];
    }
  }
  auto quota = [&](const std::string& member) {
    return loads[member] < share || (loads[member] == share && extra > 0);
  };
  for (const auto& [name, topic] : topics) {
    auto who = eligible.find(name);
    if (who == eligible.end()) continue;
    for (int32_t p = 0; p < topic.partitions; ++p) {
      if (owner.contains({topic.id, p})) continue;
      const std::string* to = nullptr;
      for (const auto* m : who->second) {
        if (quota(m->id) && (!to || loads[m->id] < loads[*to])) to = &m->id;
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
  std::map<Uuid, const std::string*> name_of;
  for (const auto& [name, topic] : topics) name_of[topic.id] = &name;
  for (bool moved = true; moved;) {
    moved = false;
    for (auto it = owner.rbegin(); it != owner.rend(); ++it) {
      auto& member = it->second;
      const std::string* to = least_loaded(eligible[*name_of[it->first.first]], loads);
      if (loads[member] > loads[*to] + 1) {
        --loads[member];
        ++loads[*to];
        member = *to;
        moved = true;
      }
    }
  }
  for (const auto& [tp, member] : owner) out[member][tp.first].insert(tp.second);
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
