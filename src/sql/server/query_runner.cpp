#include "sql/server/query_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "oxbow/streams/kafka_streams.h"

namespace oxbow::sql::server {

namespace {

constexpr std::string_view kStreamsPrefix = "ksql.streams.";
// The engine names every query's application with ksqlDB's default service id.
constexpr std::string_view kDefaultApplicationPrefix = "_confluent-ksql-default_query_";

}  // namespace

std::string streams_property_name(const std::string& property) {
  if (property.starts_with(kStreamsPrefix)) return property.substr(kStreamsPrefix.size());
  // Other ksql.* settings are the engine's, not Streams'.
  if (property.starts_with("ksql.")) return "";
  return property;
}

QueryRunner::QueryRunner(RunnerSettings settings) : settings_(std::move(settings)) {}

QueryRunner::~QueryRunner() {
  close();
}

std::map<std::string, std::string> QueryRunner::config_of(
    const PersistentQuery& query, const std::map<std::string, std::string>& overrides) const {
  auto config = query.streams_config;
  auto& id = config["application.id"];
  if (id.starts_with(kDefaultApplicationPrefix))
    id = "_confluent-ksql-" + settings_.service_id + "query_" + query.id;
  for (const auto& [key, value] : settings_.streams_config) config[key] = value;
  // SET before the query started, then the request's own properties, as ksqlDB layers them.
  for (const auto* layer : {&query.overridden_properties, &overrides})
    for (const auto& [key, value] : *layer)
      if (auto name = streams_property_name(key); !name.empty()) config[name] = value;
  return config;
}

void QueryRunner::sync(const std::vector<PersistentQuery>& queries,
                       const std::vector<std::string>& restart,
                       const std::map<std::string, std::string>& overrides) {
  std::lock_guard lock(mutex_);
  std::set<std::string> wanted;
  for (const auto& q : queries)
    if (!q.paused) wanted.insert(q.id);
  for (auto it = running_.begin(); it != running_.end();) {
    bool replaced = std::find(restart.begin(), restart.end(), it->first) != restart.end();
    if (wanted.count(it->first) && !replaced) {
      ++it;
      continue;
    }
    spdlog::info("sql: stopping query {}", it->first);
    it->second->close();
    it = running_.erase(it);
  }
  for (const auto& q : queries) start_locked(q, overrides);
}

void QueryRunner::start(const PersistentQuery& query,
                        const std::map<std::string, std::string>& overrides) {
  std::lock_guard lock(mutex_);
  start_locked(query, overrides);
}

void QueryRunner::start_locked(const PersistentQuery& q,
                               const std::map<std::string, std::string>& overrides) {
  if (q.paused || running_.count(q.id)) return;
  auto streams = std::make_shared<streams::KafkaStreams>(q.topology, config_of(q, overrides));
  streams->setProcessingExceptionHandler(q.processing_errors);
  streams->setStateListener([id = q.id](auto now, auto) {
    if (now == streams::KafkaStreams::State::ERROR) spdlog::error("sql: query {} failed", id);
  });
  streams->start();
  spdlog::info("sql: running query {}", q.id);
  running_.emplace(q.id, std::move(streams));
}

std::string QueryRunner::status(const std::string& query_id) const {
  std::lock_guard lock(mutex_);
  auto found = running_.find(query_id);
  if (found == running_.end()) return "";
  auto state = found->second->state();
  using State = streams::KafkaStreams::State;
  return state == State::ERROR || state == State::PENDING_ERROR ? "ERROR" : "RUNNING";
}

std::shared_ptr<streams::KafkaStreams> QueryRunner::streams(const std::string& query_id) const {
  std::lock_guard lock(mutex_);
  auto found = running_.find(query_id);
  return found == running_.end() ? nullptr : found->second;
}

std::vector<std::string> QueryRunner::running() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> ids;
  for (const auto& [id, streams] : running_) ids.push_back(id);
  return ids;
}

bool QueryRunner::any_failed() const {
  std::lock_guard lock(mutex_);
  return std::any_of(running_.begin(), running_.end(), [](const auto& entry) {
    return entry.second->state() == streams::KafkaStreams::State::ERROR;
  });
}

std::map<std::string, std::vector<streams::StreamsMetadata>> QueryRunner::streams_metadata() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::vector<streams::StreamsMetadata>> out;
  for (const auto& [id, streams] : running_) {
    try {
      out[id] = streams->metadataForAllStreamsClients();
    } catch (const std::exception&) {
      out[id];  // not RUNNING or REBALANCING yet: nothing known
    }
  }
  return out;
}

std::string QueryRunner::endpoint() const {
  auto found = settings_.streams_config.find("application.server");
  return found == settings_.streams_config.end() ? "" : found->second;
}

std::chrono::milliseconds QueryRunner::shutdown_timeout() const {
  auto found = settings_.streams_config.find("shutdown.timeout.ms");
  if (found != settings_.streams_config.end()) {
    try {
      return std::chrono::milliseconds(std::max(0LL, std::stoll(found->second)));
    } catch (const std::exception&) {
      spdlog::warn("sql: ksql.streams.shutdown.timeout.ms '{}' is not a number of ms",
                   found->second);
    }
  }
  return kDefaultShutdownTimeout;
}

bool QueryRunner::close() {
  return close(shutdown_timeout());
}

bool QueryRunner::close(std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool all = true;
  for (auto& [id, streams] : running_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (streams->close(std::max(left, std::chrono::milliseconds(0)))) continue;
    all = false;
    spdlog::warn(
        "sql: query {} did not stop within ksql.streams.shutdown.timeout.ms ({} ms), left to "
        "stop as the process exits: its last offsets may not be committed nor its group left",
        id, timeout.count());
    // Its threads still run: destroying it would wait for them. It is left to the process's exit.
    static auto* abandoned = new std::vector<std::shared_ptr<streams::KafkaStreams>>;
    abandoned->push_back(streams);
  }
  running_.clear();
  return all;
}

}  // namespace oxbow::sql::server
