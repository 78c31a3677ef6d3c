#pragma once
// What the DSL tests share: the records an output topic holds, the topics a driver wrote, and a
// node of describe() as one comparable string.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams::dsl_testing {

using Strings = std::vector<std::string>;
template <class K, class V>
using Changes = std::vector<std::pair<K, std::optional<V>>>;
using Config = std::map<std::string, std::string>;

inline const Config kNoCache = {{"application.id", "app"}, {"statestore.cache.max.bytes", "0"}};
inline const Config kCache = {{"application.id", "app"},
                              {"statestore.cache.max.bytes", "10485760"}};

// Every record left on an output topic, tombstones as nullopt.
template <class K, class V>
Changes<K, V> changes(TestOutputTopic<K, V> out) {
  Changes<K, V> got;
  for (auto& r : out.readRecordsToList()) got.emplace_back(r.key.value_or(K{}), r.value);
  return got;
}

inline bool produced(const TopologyTestDriver& driver, const std::string& topic) {
  auto topics = driver.producedTopicNames();
  return std::find(topics.begin(), topics.end(), topic) != topics.end();
}

// The node of a description, and the sub-topology it is in (-1 when there is none of that name).
struct Found {
  int subtopology = -1;
  NodeDescription node;
};
inline Found find_node(const Topology& topology, const std::string& name) {
  auto description = topology.describe();
  for (const auto& sub : description.subtopologies())
    for (const auto& n : sub.nodes)
      if (n.name == name) return {sub.id, n};
  return {};
}

// "Kind name [topics] {stores} -> successors": what describe() says of a node, compared as one
// string so that a failure shows the whole node. Successors sorted: their order is the
// description's business.
inline std::string shape(const Topology& topology, const std::string& name) {
  auto found = find_node(topology, name);
  if (found.subtopology < 0) return "no node " + name;
  const auto& n = found.node;
  std::ostringstream out;
  out << (n.kind == NodeDescription::Kind::kSource ? "Source"
          : n.kind == NodeDescription::Kind::kSink ? "Sink"
                                                   : "Processor")
      << " " << n.name;
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  for (const auto& t : sorted(n.topics)) out << " [" << t << "]";
  for (const auto& s : sorted(n.stores)) out << " {" << s << "}";
  for (const auto& s : sorted(n.successors)) out << " -> " << s;
  return out.str();
}

inline size_t subtopology_count(const Topology& topology) {
  return topology.describe().subtopologies().size();
}

// account -> "region:amount", totals per region.
inline KeyValue<std::string, int64_t> region_amount(const std::string&, const std::string& v) {
  auto colon = v.find(':');
  return {v.substr(0, colon), std::stoll(v.substr(colon + 1))};
}

inline void pipe_accounts(TopologyTestDriver& driver) {
  auto in = driver.createInputTopic<std::string, std::string>("accounts");
  in.pipeInput("a", std::string("eu:5"), 1);
  in.pipeInput("b", std::string("eu:7"), 2);
  in.pipeInput("a", std::string("us:5"), 3);   // moves: out of eu, then into us
  in.pipeInput("b", std::string("eu:10"), 4);  // stays in eu: one update
  in.pipeInput("b", std::nullopt, 5);          // deleted: out of eu
  in.pipeInput("a", std::nullopt, 6);
}

}  // namespace oxbow::streams::dsl_testing
