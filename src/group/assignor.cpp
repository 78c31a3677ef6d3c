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

std::map<std::string, Assignment> uniform(const std::vector<AssignorMember>& members,
                                          const std::map<std::string, TopicShape>& topics) {
  std::map<std::string, Assignment> out;
  Loads loads;
  for (const auto& m : members) {
    out[m.id];
    loads[m.id] = 0;
  }
  std::map<std::string, std::vector<const AssignorMember*>> eligible;
  for (const auto& m : members) {
    for (const auto& t : m.topics) eligible[t].push_back(&m);
  }
  // Sticky first: a partition stays with the member whose target it was, if still subscribed.
  std::map<std::pair<Uuid, int32_t>, std::string> owner;
  for (const auto& m : members) {
    for (const auto& [id, partitions] : m.previous_target) {
      auto topic = std::find_if(topics.begin(), topics.end(),
                                [&](const auto& t) { return t.second.id == id; });
      if (topic == topics.end() || !m.topics.contains(topic->first)) continue;
      for (int32_t p : partitions) {
        if (p >= topic->second.partitions || owner.contains({id, p})) continue;
        owner[{id, p}] = m.id;
        ++loads[m.id];
      }
    }
  }
  std::vector<Slot> unassigned;
  for (const auto& [name, topic] : topics) {
    if (!eligible.contains(name)) continue;
    for (int32_t p = 0; p < topic.partitions; ++p) {
      if (!owner.contains({topic.id, p})) unassigned.push_back({&topic, p});
    }
  }
  for (const auto& slot : unassigned) {
    const std::string* to = least_loaded(eligible[slot.topic->name], loads);
    owner[{slot.topic->id, slot.partition}] = *to;
    ++loads[*to];
  }
  // Then balance: move a partition while its owner has two or more than an eligible member.
  std::map<Uuid, const std::string*> name_of;
  for (const auto& [name, topic] : topics) name_of[topic.id] = &name;
  for (bool moved = true; moved;) {
    moved = false;
    for (auto& [tp, member] : owner) {
      const std::string* to = least_loaded(eligible[*name_of[tp.first]], loads);
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
