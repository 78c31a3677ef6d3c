#pragma once
// An instance's picture of where the application's state lives (Kafka's StreamsMetadataState):
// the hosts' active and standby partitions from the last assignment a thread received, read
// against the topology's stores and their source topics.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/streams/streams_metadata.h"
#include "streams/assignment/protocol_data.h"

namespace oxbow::streams::detail {

class GraphBuilder;

class MetadataState {
 public:
  // `partitions_of` gives a topic's partition count (0 unknown).
  MetadataState(HostInfo self, std::function<int32_t(const std::string&)> partitions_of);
  // Each topology the instance runs, before it starts, with its internal topics' prefix. The
  // stores of several topologies are known by name only: a name two of them use is one store here.
  void add_topology(const GraphBuilder& graph, const std::string& prefix);

  void update(const AssignmentInfo& info);
  std::vector<StreamsMetadata> all() const;
  std::vector<StreamsMetadata> for_store(const std::string& store) const;
  std::optional<KeyQueryMetadata> for_key(
      const std::string& store,
      const std::function<std::string(std::string_view topic)>& serialize_key) const;
  bool has_store(const std::string& store) const;

 private:
  std::vector<StreamsMetadata> build_locked() const;

  HostInfo self_;
  std::function<int32_t(const std::string&)> partitions_of_;
  std::map<std::string, std::set<std::string>> sources_of_store_;  // as on the wire
  std::set<std::string> global_stores_;
  mutable std::mutex mutex_;
  bool initialised_ = false;
  std::map<Endpoint, PartitionList> active_, standby_;
  mutable std::map<std::string, int32_t> partition_counts_;
};

}  // namespace oxbow::streams::detail
