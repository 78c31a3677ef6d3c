#include "sql/server/server_status.h"

#include "common/properties.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

json partitions_json(const std::set<streams::TopicPartition>& partitions) {
  json out = json::array();
  for (const auto& p : partitions) out.push_back({{"topic", p.topic}, {"partition", p.partition}});
  return out;
}

// ksqlDB's ActiveStandbyEntity: a query's stores and source partitions on one server.
json active_standby_json(const std::vector<streams::StreamsMetadata>& instances) {
  std::set<std::string> stores, standby_stores;
  std::set<streams::TopicPartition> partitions, standby_partitions;
  for (const auto& m : instances) {
    stores.insert(m.stateStoreNames().begin(), m.stateStoreNames().end());
    partitions.insert(m.topicPartitions().begin(), m.topicPartitions().end());
    standby_stores.insert(m.standbyStateStoreNames().begin(), m.standbyStateStoreNames().end());
    standby_partitions.insert(m.standbyTopicPartitions().begin(), m.standbyTopicPartitions().end());
  }
  return {{"activeStores", stores},
          {"activePartitions", partitions_json(partitions)},
          {"standByStores", standby_stores},
          {"standByPartitions", partitions_json(standby_partitions)}};
}

}  // namespace

std::vector<std::string> denied_properties(const std::map<std::string, std::string>& server) {
  std::vector<std::string> out;
  if (auto listed = server.find("ksql.properties.overrides.denylist"); listed != server.end())
    for (auto& name : split(listed->second, ','))
      if (!name.empty()) out.push_back(std::move(name));
  out.push_back("ksql.service.id");
  return out;
}

std::optional<std::string> denied_overrides(const std::vector<std::string>& denied,
                                            const std::map<std::string, std::string>& properties) {
  std::string listed;
  for (const auto& name : denied)
    if (properties.count(name)) listed += (listed.empty() ? "" : ", ") + name;
  if (listed.empty()) return std::nullopt;
  return "One or more properties overrides set locally are prohibited by the KSQL server (use "
         "UNSET to reset their default value): [" +
         listed + "]";
}

RestResponse is_valid_property(const std::string& property,
                               const std::vector<std::string>& denied) {
  if (auto error = denied_overrides(denied, {{property, ""}}))
    return generic_error(400, kBadRequest, *error);
  return {200, "true"};
}

json cluster_status_json(
    const std::string& host, int64_t now_ms,
    const std::map<std::string, std::vector<streams::StreamsMetadata>>& queries) {
  // Per server, per query, its instances there: an instance without an endpoint is this one's.
  std::map<std::string, std::map<std::string, std::vector<streams::StreamsMetadata>>> by_host;
  by_host[host];
  for (const auto& [id, instances] : queries) {
    by_host[host][id];
    for (const auto& m : instances)
      by_host[m.port() < 0 ? host : m.host() + ":" + std::to_string(m.port())][id].push_back(m);
  }
  json out = json::object();
  // Another server is listed alive while the queries' groups have it: ksqlDB's heartbeats say the
  // same of a server that answers them.
  for (const auto& [server, per_query] : by_host) {
    json entries = json::object();
    for (const auto& [id, instances] : per_query) entries[id] = active_standby_json(instances);
    out[server] = {{"hostAlive", true},
                   {"lastStatusUpdateMs", now_ms},
                   {"activeStandbyPerQuery", entries},
                   {"hostStoreLags", {{"stateStoreLags", json::object()}, {"updateTimeMs", 0}}}};
  }
  return {{"clusterStatus", out}};
}

}  // namespace oxbow::sql::server
