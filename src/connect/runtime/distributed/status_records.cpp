#include "connect/runtime/distributed/status_records.h"

#include <spdlog/spdlog.h>

#include <string_view>

#include "connect/runtime/distributed/record_json.h"

namespace oxbow::connect::runtime::distributed::status_records {

namespace {

constexpr std::string_view kConnectorPrefix = "status-connector-";
constexpr std::string_view kTaskPrefix = "status-task-";
constexpr std::string_view kTopicPrefix = "status-topic-";
constexpr std::string_view kTopicSeparator = ":connector-";
// AbstractStatus.State's names.
constexpr std::string_view kStates[] = {"UNASSIGNED", "RUNNING",    "PAUSED", "FAILED",
                                        "DESTROYED",  "RESTARTING", "STOPPED"};

using Json = nlohmann::ordered_json;

std::optional<StatusKey> taskKeyOf(std::string_view rest) {
  auto id = record_json::connectorTask(rest);
  if (!id) return std::nullopt;
  return StatusKey{StatusKey::Kind::TASK, std::move(id->first), id->second, {}};
}

// status-topic-TOPIC:connector-NAME; a topic name cannot hold ':'.
std::optional<StatusKey> topicKeyOf(std::string_view rest) {
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view tail = rest.substr(colon);
  if (!tail.starts_with(kTopicSeparator) || tail.size() == kTopicSeparator.size()) {
    return std::nullopt;
  }
  return StatusKey{StatusKey::Kind::TOPIC, std::string(tail.substr(kTopicSeparator.size())), 0,
                   std::string(rest.substr(0, colon))};
}

std::optional<StatusKey> keyOf(std::string_view key) {
  if (key.starts_with(kConnectorPrefix)) {
    std::string_view name = key.substr(kConnectorPrefix.size());
    if (name.empty()) return std::nullopt;
    return StatusKey{StatusKey::Kind::CONNECTOR, std::string(name), 0, {}};
  }
  if (key.starts_with(kTaskPrefix)) return taskKeyOf(key.substr(kTaskPrefix.size()));
  if (key.starts_with(kTopicPrefix)) return topicKeyOf(key.substr(kTopicPrefix.size()));
  return std::nullopt;
}

bool isString(const nlohmann::json& object, const char* field) {
  return object.contains(field) && object[field].is_string();
}

}  // namespace

std::string connectorKey(const std::string& connector) {
  return std::string(kConnectorPrefix) + connector;
}

std::string taskKey(const std::string& connector, int task) {
  return std::string(kTaskPrefix) + connector + "-" + std::to_string(task);
}

std::string topicKey(const std::string& topic, const std::string& connector) {
  return std::string(kTopicPrefix) + topic + std::string(kTopicSeparator) + connector;
}

std::optional<StatusKey> parseKey(const std::string& key) {
  auto parsed = keyOf(key);
  if (!parsed) spdlog::warn("connect: discarding record with invalid status key {}", key);
  return parsed;
}

std::string statusValue(const StatusRecord& status) {
  Json trace = status.trace.empty() ? Json(nullptr) : Json(status.trace);
  return Json{{"state", status.state},
              {"trace", trace},
              {"worker_id", status.workerId},
              {"generation", status.generation}}
      .dump();
}

std::optional<StatusRecord> parseStatus(const std::string& value) {
  auto json = record_json::parse(value, "status record");
  if (!json) return std::nullopt;
  StatusRecord out;
  bool known = false;
  if (json->is_object() && isString(*json, "state")) {
    out.state = (*json)["state"].get<std::string>();
    for (std::string_view state : kStates) known = known || out.state == state;
  }
  std::optional<int32_t> generation;
  if (json->is_object() && json->contains("generation")) {
    generation = record_json::int32((*json)["generation"]);
  }
  if (!known || !generation) {
    spdlog::error("connect: failed to read status record {}", value);
    return std::nullopt;
  }
  out.generation = *generation;
  if (isString(*json, "trace")) out.trace = (*json)["trace"].get<std::string>();
  if (isString(*json, "worker_id")) out.workerId = (*json)["worker_id"].get<std::string>();
  return out;
}

std::string topicValue(const TopicStatus& status) {
  return Json{{"topic",
               {{"name", status.topic},
                {"connector", status.connector},
                {"task", status.task},
                {"discoverTimestamp", status.discoverTimestamp}}}}
      .dump();
}

std::optional<TopicStatus> parseTopic(const std::string& value) {
  auto json = record_json::parse(value, "topic status record");
  if (!json) return std::nullopt;
  const nlohmann::json* inner =
      json->is_object() && json->contains("topic") ? &(*json)["topic"] : nullptr;
  if (inner == nullptr || !inner->is_object() || !isString(*inner, "name") ||
      !isString(*inner, "connector") || !inner->contains("task") ||
      !record_json::int32((*inner)["task"]) || !inner->contains("discoverTimestamp") ||
      !(*inner)["discoverTimestamp"].is_number_integer()) {
    spdlog::error("connect: invalid topic status record {}", value);
    return std::nullopt;
  }
  return TopicStatus{(*inner)["name"].get<std::string>(), (*inner)["connector"].get<std::string>(),
                     *record_json::int32((*inner)["task"]),
                     (*inner)["discoverTimestamp"].get<int64_t>()};
}

}  // namespace oxbow::connect::runtime::distributed::status_records
