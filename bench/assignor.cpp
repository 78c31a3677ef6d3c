// The cost of KIP-848's server-side assignors as a group grows: members join one at a time, each
// join is a new group epoch and a new target assignment computed from the previous one, as the
// coordinator does it. Prints the total and per-join time, for every member subscribing to the
// same topics and for half of them subscribing to one topic fewer.
// Usage: assignor <assignor> <members> <topics> <partitions per topic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "group/assignor.h"

using namespace oxbow::group;

namespace {

double join_one_by_one(const std::string& assignor, int members, int topic_count, int partitions,
                       bool mixed) {
  std::map<std::string, TopicShape> topics;
  for (int t = 0; t < topic_count; ++t) {
    TopicShape shape;
    shape.id[0] = static_cast<uint8_t>(t + 1);
    shape.name = "topic-" + std::to_string(t);
    shape.partitions = partitions;
    topics[shape.name] = shape;
  }
  std::vector<AssignorMember> group;
  auto start = std::chrono::steady_clock::now();
  for (int m = 0; m < members; ++m) {
    AssignorMember member;
    char id[32];
    std::snprintf(id, sizeof id, "member-%06d", m);
    member.id = id;
    for (const auto& [name, _] : topics) {
      if (!(mixed && m % 2 == 1 && name == topics.rbegin()->first)) member.topics.insert(name);
    }
    group.push_back(std::move(member));
    auto target = assign(assignor, group, topics);
    for (auto& each : group) each.previous_target = std::move(target[each.id]);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <assignor> <members> <topics> <partitions per topic>\n",
                 argv[0]);
    return 2;
  }
  std::string assignor = argv[1];
  int members = std::atoi(argv[2]), topic_count = std::atoi(argv[3]),
      partitions = std::atoi(argv[4]);
  for (bool mixed : {false, true}) {
    double seconds = join_one_by_one(assignor, members, topic_count, partitions, mixed);
    std::printf(
        "%s, %d members joining one by one over %d x %d partitions, %s: %.2f s, %.2f ms "
        "per join\n",
        assignor.c_str(), members, topic_count, partitions,
        mixed ? "half subscribing to one topic fewer" : "same subscriptions", seconds,
        seconds * 1000 / members);
  }
}
