#include "streams/runtime/topologies.h"

#include <map>
#include <set>

#include "oxbow/streams/errors.h"
#include "streams/state/state_directory.h"

namespace oxbow::streams::detail {

std::shared_ptr<const Topologies> single_topology(std::shared_ptr<const GraphBuilder> graph,
                                                  const std::string& application_id) {
  return std::make_shared<const Topologies>(Topologies{{"", std::move(graph), application_id}});
}

std::string default_prefix(const std::string& application_id, const std::string& name) {
  return application_id + "-" + name;
}

void check_named_topologies(const Topologies& topologies) {
  std::set<std::string> names, prefixes;
  // source topic -> (topology, whether its sub-topology reads that topic alone)
  std::map<std::string, std::vector<std::pair<std::string, bool>>> readers_of;
  for (const auto& t : topologies) {
    if (!valid_topology_name(t.name))
      throw TopologyException("named topology '" + t.name +
                              "': a name is a topic name's characters (letters, digits, '.', "
                              "'_', '-'), not '.' or '..'");
    if (!names.insert(t.name).second)
      throw TopologyException("named topology '" + t.name + "' is added twice");
    if (t.prefix.empty() || !prefixes.insert(t.prefix).second)
      throw TopologyException("named topology '" + t.name + "': its internal topic prefix '" +
                              t.prefix + "' is empty or another topology's");
    if (!t.graph->global_tables().empty())
      throw TopologyException("named topology '" + t.name +
                              "': global tables are not supported in named topologies yet");
    for (const auto& sub : t.graph->subtopologies()) {
      for (const auto& topic : sub.source_topics) {
        if (t.graph->is_internal_topic(topic)) continue;
        auto& readers = readers_of[topic];
        readers.push_back({t.name, sub.source_topics.size() == 1});
        if (readers.size() < 2) continue;
        // A record of a shared partition goes to every task reading it; a task that reads it
        // beside other topics orders its inputs by time in a partition group, which takes each
        // record once.
        for (const auto& [name, alone] : readers)
          if (!alone)
            throw TopologyException("source topic " + topic + " is read by named topologies '" +
                                    readers.front().first + "' and '" + readers.back().first +
                                    "', and '" + name +
                                    "' reads it beside other topics in one sub-topology: "
                                    "topologies share a source topic only where each reads it "
                                    "alone, for now");
      }
    }
  }
}

std::vector<SubtopologyTopics> group_topics(const Topologies& topologies) {
  std::vector<SubtopologyTopics> out;
  for (const auto& t : topologies)
    for (const auto& sub : t.graph->subtopologies()) {
      SubtopologyTopics topics;
      topics.id = sub.id;
      topics.topology = t.name;
      std::set<std::string> sources;
      for (const auto& s : sub.source_topics) sources.insert(t.wire(s));
      topics.sources.assign(sources.begin(), sources.end());
      for (const auto& store : sub.stores) {
        const StoreSpec* spec = t.graph->store(store);
        if (!spec) continue;
        if (!spec->source_topic.empty())
          topics.changelogs.push_back(spec->source_topic);
        else if (spec->options.logging)
          topics.changelogs.push_back(t.changelog(store));
      }
      out.push_back(std::move(topics));
    }
  return out;
}

}  // namespace oxbow::streams::detail
