#include "sql/server/server_status.h"

#include "common/properties.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr int kBadRequest = 40000;

json partitions_json(const std::set<streams::TopicPartition>& partitions) {
  json out = json::array();
  for (const auto& p : partitions) out.push_back({{"topic", p.topic}, {"partition", p.partition}});
  return out;
}

// ksqlDB's ActiveStandbyEntity: a query's stores and source partitions here, over every instance
// of its application (one server holds them all).
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
  json per_query = json::object();
  for (const auto& [id, instances] : queries) per_query[id] = active_standby_json(instances);
  json status = {{"hostAlive", true},
                 {"lastStatusUpdateMs", now_ms},
                 {"activeStandbyPerQuery", per_query},
                 {"hostStoreLags", {{"stateStoreLags", json::object()}, {"updateTimeMs", 0}}}};
  return {{"clusterStatus", {{host, status}}}};
}

}  // namespace oxbow::sql::server
