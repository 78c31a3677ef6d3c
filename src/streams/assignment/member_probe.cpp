// streams_member_probe: one GroupMember driven the way a stream thread drives it, for
// tests/integration/test_streams_group_member.py, which plays the group's other members and the
// coordinator's failures around it and reads what the member went through.
//
// Prints one JSON object per line on stdout:
//   {"event": "assigned", "generation": g, "member": id, "partitions": [..]}
//   {"event": "lost"}                      the group went on without it (tasks dropped)
//   {"event": "fatal", "error": "..."}     then exits 2
//   {"event": "committed"} or {"event": "commit_refused", "error": "...", "retriable": b}
// Reads commands on stdin, one a line: "commit TOPIC PARTITION OFFSET", "rejoin", "quit".
// As the group's leader it deals the topic's partitions round-robin over the members in
// member-id order.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "streams/assignment/group_member.h"

namespace {

using namespace oxbow::streams::detail;

void emit(const nlohmann::json& event) {
  std::cout << event.dump() << std::endl;
}

std::map<std::string, std::string> deal(const std::map<std::string, std::string>& subscriptions,
                                        const std::string& topic, int partitions) {
  std::map<std::string, ConsumerAssignment> dealt;
  for (const auto& [member, bytes] : subscriptions) dealt[member];
  auto next = dealt.begin();
  for (int p = 0; p < partitions && !dealt.empty(); ++p) {
    next->second.partitions.emplace_back(topic, p);
    if (++next == dealt.end()) next = dealt.begin();
  }
  std::map<std::string, std::string> out;
  for (const auto& [member, assignment] : dealt) out[member] = assignment.encode();
  return out;
}

// A line from stdin if one is ready; "quit" once stdin closed.
std::optional<std::string> command() {
  pollfd fd{STDIN_FILENO, POLLIN, 0};
  if (poll(&fd, 1, 0) <= 0) return std::nullopt;
  std::string line;
  if (!std::getline(std::cin, line)) return "quit";
  return line;
}

void commit(GroupMember& member, std::istringstream& words) {
  GroupMember::Offset offset;
  words >> offset.topic >> offset.partition >> offset.offset;
  try {
    member.commit({offset});
    emit({{"event", "committed"}});
  } catch (const CommitRefused& e) {
    emit({{"event", "commit_refused"}, {"error", e.what()}, {"retriable", e.retriable}});
  } catch (const std::exception& e) {
    emit({{"event", "commit_refused"}, {"error", e.what()}, {"retriable", true}});
  }
}

int run(const std::map<std::string, std::string>& args) {
  MemberConfig config;
  config.bootstrap_servers = args.at("bootstrap");
  config.group_id = args.at("group");
  config.client_id = "member-probe";
  config.session_timeout_ms = std::stoi(args.at("session-ms"));
  config.rebalance_timeout_ms = std::stoi(args.at("rebalance-ms"));
  config.heartbeat_interval_ms = std::stoi(args.at("heartbeat-ms"));
  config.request_timeout_ms = std::stoi(args.at("request-timeout-ms"));
  const std::string topic = args.at("topic");
  const int partitions = std::stoi(args.at("partitions"));
  MemberCallbacks callbacks;
  callbacks.subscription = [topic] {
    ConsumerSubscription subscription;
    subscription.topics = {topic};
    return subscription.encode();
  };
  callbacks.assign = [&](const std::map<std::string, std::string>& subscriptions) {
    return deal(subscriptions, topic, partitions);
  };
  GroupMember member(config, callbacks);
  member.start();
  while (true) {
    member.polled();
    if (auto fatal = member.fatal_error(); !fatal.empty()) {
      emit({{"event", "fatal"}, {"error", fatal}});
      return 2;
    }
    if (member.take_lost()) emit({{"event", "lost"}});
    if (auto received = member.take_assignment()) {
      nlohmann::json owned = nlohmann::json::array();
      for (const auto& [t, p] : received->assignment.partitions) owned.push_back(p);
      emit({{"event", "assigned"},
            {"generation", received->generation.id},
            {"member", received->generation.member_id},
            {"partitions", owned}});
    }
    if (auto line = command()) {
      std::istringstream words(*line);
      std::string verb;
      words >> verb;
      if (verb == "quit") break;
      if (verb == "rejoin") member.request_rejoin();
      if (verb == "commit") commit(member, words);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  member.stop();
  return 0;
}

}  // namespace

// Arguments as --name value pairs: bootstrap, group, topic, partitions, session-ms,
// rebalance-ms, heartbeat-ms, request-timeout-ms.
int main(int argc, char** argv) {
  std::map<std::string, std::string> args = {{"partitions", "3"},
                                             {"session-ms", "10000"},
                                             {"rebalance-ms", "10000"},
                                             {"heartbeat-ms", "500"},
                                             {"request-timeout-ms", "3000"}};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string name = argv[i];
    if (name.rfind("--", 0) != 0) break;
    args[name.substr(2)] = argv[i + 1];
  }
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "streams_member_probe: %s\n", e.what());
    return 1;
  }
}
