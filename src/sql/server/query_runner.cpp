#include "sql/server/query_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "oxbow/streams/kafka_streams.h"

namespace oxbow::sql::server {

namespace {

constexpr std::string_view kStreamsPrefix = "ksql.streams.";
// The engine names every query's application with ksqlDB's default service id.
constexpr std::string_view kDefaultApplicationPrefix = "_confluent-ksql-default_query_";

using State = streams::KafkaStreams::State;

bool failed(State state) {
  return state == State::ERROR || state == State::PENDING_ERROR;
}

// A named topology's task ids are "<topology>__<sub-topology>_<partition>".
std::string topology_of_task(std::string_view task_id) {
  auto end = task_id.rfind("__");
  return std::string(end == std::string_view::npos ? std::string_view() : task_id.substr(0, end));
}

}  // namespace

// Per query of a shared runtime, the handler its engine made (it logs and counts as that query);
// the runtime's one handler picks it by the failing task's topology.
struct QueryRunner::Handlers {
  std::mutex mutex;
  std::map<std::string, streams::ProcessingExceptionHandler> of_query;

  streams::ProcessingExceptionHandlerResponse handle(const streams::ErrorHandlerContext& context,
                                                     const streams::Record* record,
                                                     const std::exception& error) {
    streams::ProcessingExceptionHandler handler;
    {
      std::lock_guard lock(mutex);
      auto found = of_query.find(topology_of_task(context.taskId()));
      if (found != of_query.end()) handler = found->second;
    }
    if (handler) return handler(context, record, error);
    return streams::LogAndContinueProcessingExceptionHandler(context, record, error);
  }
};

namespace {

void add_reads(RuntimeNeeds& runtime, const RuntimeNeeds& query) {
  runtime.topics.insert(query.topics.begin(), query.topics.end());
  runtime.read_beside_others.insert(query.read_beside_others.begin(),
                                    query.read_beside_others.end());
}

}  // namespace

size_t place_query(const std::vector<RuntimeNeeds>& runtimes, const RuntimeNeeds& query) {
  for (size_t i = 0; i < runtimes.size(); ++i) {
    if (runtimes[i].config != query.config) continue;
    bool conflicts = std::any_of(query.topics.begin(), query.topics.end(), [&](const auto& topic) {
      return runtimes[i].topics.count(topic) &&
             (query.read_beside_others.count(topic) || runtimes[i].read_beside_others.count(topic));
    });
    if (!conflicts) return i;
  }
  return runtimes.size();
}

RuntimeNeeds source_topics_of(const streams::Topology& topology) {
  std::set<std::string> read, written, beside;
  auto description = topology.describe();
  for (const auto& sub : description.subtopologies()) {
    std::set<std::string> read_here;
    for (const auto& node : sub.nodes) {
      if (node.kind == streams::NodeDescription::Kind::kSource)
        read_here.insert(node.topics.begin(), node.topics.end());
      if (node.kind == streams::NodeDescription::Kind::kSink)
        written.insert(node.topics.begin(), node.topics.end());
    }
    if (read_here.size() > 1) beside.insert(read_here.begin(), read_here.end());
    read.insert(read_here.begin(), read_here.end());
  }
  for (const auto& global : description.globalStores()) {
    read.insert(global.source.topics.begin(), global.source.topics.end());
    beside.insert(global.source.topics.begin(), global.source.topics.end());
  }
  RuntimeNeeds needs;
  std::set_difference(read.begin(), read.end(), written.begin(), written.end(),
                      std::inserter(needs.topics, needs.topics.end()));
  std::set_difference(beside.begin(), beside.end(), written.begin(), written.end(),
                      std::inserter(needs.read_beside_others, needs.read_beside_others.end()));
  return needs;
}

std::string streams_property_name(const std::string& property) {
  if (property.starts_with(kStreamsPrefix)) return property.substr(kStreamsPrefix.size());
  // Other ksql.* settings are the engine's, not Streams'.
  if (property.starts_with("ksql.")) return "";
  return property;
}

QueryRunner::QueryRunner(RunnerSettings settings) : settings_(std::move(settings)) {
  if (!settings_.shared_runtimes) return;
  std::ifstream in(placements_path());
  std::string id;
  int runtime = 0;
  while (in >> id >> runtime) placed_[id] = runtime;
}

// Beside the queries' state: a server started again on its state directory finds them.
std::string QueryRunner::placements_path() const {
  auto dir = settings_.streams_config.find("state.dir");
  std::string base = dir == settings_.streams_config.end() ? "." : dir->second;
  return base + "/ksql-" + settings_.service_id + "shared-runtimes";
}

void QueryRunner::save_placements() const {
  const std::string path = placements_path();
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
  {
    std::ofstream out(path + ".tmp", std::ios::trunc);
    for (const auto& [id, runtime] : placed_) out << id << ' ' << runtime << '\n';
    if (!out) {
      spdlog::warn("sql: could not write {}: a restart may place queries elsewhere", path);
      return;
    }
  }
  std::filesystem::rename(path + ".tmp", path, error);
}

int QueryRunner::choose_runtime(const std::string& id, const RuntimeNeeds& needs) const {
  std::vector<RuntimeNeeds> candidates;
  std::vector<int> keys;
  for (const auto& [key, runtime] : runtimes_) {
    if (failed(runtime.streams->state())) continue;  // its queries are ERROR: none joins them
    candidates.push_back(runtime.needs);
    keys.push_back(key);
  }
  // Where it ran before a restart, if it still fits there: its positions are in that group.
  if (auto before = placed_.find(id); before != placed_.end()) {
    if (!runtimes_.count(before->second)) return before->second;
    auto at = std::find(keys.begin(), keys.end(), before->second);
    if (at != keys.end() && place_query({candidates[at - keys.begin()]}, needs) == 0)
      return before->second;
  }
  size_t at = place_query(candidates, needs);
  if (at < keys.size()) return keys[at];
  auto taken = [&](int key) {
    return runtimes_.count(key) || std::any_of(placed_.begin(), placed_.end(), [&](const auto& p) {
             return p.first != id && p.second == key;
           });
  };
  int key = 0;
  while (taken(key)) ++key;
  return key;
}

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
  std::set<std::string> known;
  for (const auto& q : queries) known.insert(q.id);
  std::vector<std::string> stopping;
  for (const auto& [id, running] : running_) {
    bool replaced = std::find(restart.begin(), restart.end(), id) != restart.end();
    if (!wanted.count(id) || replaced) stopping.push_back(id);
  }
  // Paused or replaced queries keep their positions; a terminated one's go with it.
  for (const auto& id : stopping) stop_locked(id, !known.count(id));
  for (const auto& q : queries) start_locked(q, overrides);
}

void QueryRunner::stop_locked(const std::string& id, bool terminated) {
  auto found = running_.find(id);
  if (found == running_.end()) return;
  spdlog::info("sql: stopping query {}", id);
  auto running = std::move(found->second);
  running_.erase(found);
  if (running.runtime < 0) {
    running.streams->close();
    return;
  }
  if (terminated && placed_.erase(id)) save_placements();
  auto& runtime = runtimes_.at(running.runtime);
  runtime.topics.erase(id);
  {
    std::lock_guard lock(runtime.handlers->mutex);
    runtime.handlers->of_query.erase(id);
  }
  bool last = runtime.topics.empty();
  // A terminated query's positions go with it even from a runtime that closes with it; a paused
  // one's stay, for RESUME.
  if (!last || terminated) remove_topology(runtime, id, terminated);
  if (last) {
    // Its last query: the whole runtime goes, as its group would have nothing left to run.
    spdlog::info("sql: closing shared runtime {}", runtime.application_id);
    runtime.streams->close();
    runtimes_.erase(running.runtime);
    return;
  }
  runtime.needs.topics.clear();
  runtime.needs.read_beside_others.clear();
  for (const auto& [query, needs] : runtime.topics) add_reads(runtime.needs, needs);
}

void QueryRunner::remove_topology(SharedRuntime& runtime, const std::string& id, bool reset) {
  try {
    runtime.streams->removeNamedTopology(id, reset);
  } catch (const std::exception& e) {
    spdlog::error("sql: query {} not removed from runtime {}: {}", id, runtime.application_id,
                  e.what());
  }
}

void QueryRunner::start(const PersistentQuery& query,
                        const std::map<std::string, std::string>& overrides) {
  std::lock_guard lock(mutex_);
  start_locked(query, overrides);
}

void QueryRunner::start_locked(const PersistentQuery& q,
                               const std::map<std::string, std::string>& overrides) {
  if (q.paused || running_.count(q.id)) return;
  auto config = config_of(q, overrides);
  if (settings_.shared_runtimes && start_shared(q, config)) return;
  auto streams = std::make_shared<streams::KafkaStreams>(q.topology, std::move(config));
  streams->setProcessingExceptionHandler(q.processing_errors);
  streams->setStateListener([id = q.id](auto now, auto) {
    if (now == streams::KafkaStreams::State::ERROR) spdlog::error("sql: query {} failed", id);
  });
  streams->start();
  spdlog::info("sql: running query {}", q.id);
  running_.emplace(q.id, Running{std::move(streams), -1});
}

bool QueryRunner::start_shared(const PersistentQuery& q,
                               std::map<std::string, std::string> config) {
  // The query's own application id is its topics' prefix; the runtime's names the group.
  const std::string prefix = config["application.id"];
  config.erase("application.id");
  RuntimeNeeds needs = source_topics_of(q.topology);
  needs.config = config;
  const int key = choose_runtime(q.id, needs);
  bool created = !runtimes_.count(key);
  SharedRuntime fresh;
  if (created) {
    // ksqlDB's shared runtime ids: the per-query prefix with the runtime's number for the query id.
    fresh.application_id =
        "_confluent-ksql-" + settings_.service_id + "query_" + std::to_string(key);
    auto runtime_config = config;
    runtime_config["application.id"] = fresh.application_id;
    fresh.streams = std::make_shared<streams::KafkaStreams>(std::move(runtime_config));
    fresh.needs.config = config;
    fresh.handlers = std::make_shared<Handlers>();
    fresh.streams->setProcessingExceptionHandler(
        [handlers = fresh.handlers](const auto& context, const auto* record, const auto& error) {
          return handlers->handle(context, record, error);
        });
    fresh.streams->setStateListener([id = fresh.application_id](auto now, auto) {
      if (now == State::ERROR) spdlog::error("sql: shared runtime {} failed", id);
    });
  }
  SharedRuntime& runtime = created ? fresh : runtimes_.at(key);
  try {
    runtime.streams->addNamedTopology(q.id, q.topology, prefix);
  } catch (const streams::TopologyException& e) {
    spdlog::warn("sql: query {} runs alone, not in a shared runtime: {}", q.id, e.what());
    return false;
  }
  {
    std::lock_guard lock(runtime.handlers->mutex);
    runtime.handlers->of_query[q.id] = q.processing_errors;
  }
  runtime.topics[q.id] = needs;
  add_reads(runtime.needs, needs);
  if (created) {
    runtime.streams->start();
    runtimes_.emplace(key, std::move(fresh));
  }
  spdlog::info("sql: running query {} in shared runtime {}", q.id,
               runtimes_.at(key).application_id);
  running_.emplace(q.id, Running{runtimes_.at(key).streams, key});
  if (auto [entry, added] = placed_.try_emplace(q.id, key); added || entry->second != key) {
    entry->second = key;
    save_placements();
  }
  return true;
}

std::string QueryRunner::status(const std::string& query_id) const {
  std::lock_guard lock(mutex_);
  auto found = running_.find(query_id);
  if (found == running_.end()) return "";
  return failed(found->second.streams->state()) ? "ERROR" : "RUNNING";
}

std::shared_ptr<streams::KafkaStreams> QueryRunner::streams(const std::string& query_id) const {
  return query_streams(query_id).streams;
}

QueryStreams QueryRunner::query_streams(const std::string& query_id) const {
  std::lock_guard lock(mutex_);
  auto found = running_.find(query_id);
  if (found == running_.end()) return {};
  return {found->second.streams, found->second.runtime < 0 ? "" : query_id};
}

std::vector<std::string> QueryRunner::running() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> ids;
  for (const auto& [id, running] : running_) ids.push_back(id);
  return ids;
}

bool QueryRunner::any_failed() const {
  std::lock_guard lock(mutex_);
  return std::any_of(running_.begin(), running_.end(), [](const auto& entry) {
    return entry.second.streams->state() == State::ERROR;
  });
}

std::map<std::string, std::vector<streams::StreamsMetadata>> QueryRunner::streams_metadata() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::vector<streams::StreamsMetadata>> out;
  for (const auto& [id, running] : running_) {
    try {
      out[id] = running.streams->metadataForAllStreamsClients();
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
  // A shared runtime once, under the name of its first query.
  std::map<std::string, std::shared_ptr<streams::KafkaStreams>> instances;
  std::set<const streams::KafkaStreams*> seen;
  for (const auto& [id, running] : running_)
    if (seen.insert(running.streams.get()).second) instances.emplace(id, running.streams);
  for (auto& [id, streams] : instances) {
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
  runtimes_.clear();
  return all;
}

}  // namespace oxbow::sql::server
