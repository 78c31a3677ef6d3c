// The admin HTTP API: Prometheus metrics, health for orchestration, JSON views for tools, and
// run-time log levels.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "broker/broker.h"
#include "broker/handlers/fetch_session.h"
#include "broker/net/server.h"
#include "broker/probe.h"
#include "broker/topics/topic_registry.h"
#include "common/clock.h"
#include "common/properties.h"
#include "group/coordinator.h"
#include "http/admin_server.h"
#include "protocol/messages/api_table.h"
#include "storage/partition_log.h"
#include "storage/probe.h"

namespace oxbow::broker {

using json = nlohmann::json;
using metrics::PrometheusWriter;

BrokerProbe& probe() {
  static BrokerProbe instance;
  return instance;
}

bool Broker::start_admin_api(std::string& error) {
  auto value = config_.value_of("admin.listener").value_or("");
  if (value.empty()) return true;
  auto colon = value.rfind(':');
  auto port = colon == std::string::npos ? std::nullopt : parse_int64(value.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535) {
    error = "admin.listener: expected host:port, got '" + value + "'";
    return false;
  }
  admin_ = std::make_unique<http::AdminServer>(
      server_->main_context(), [this](const http::Request& r) { return handle_admin(r); });
  if (!admin_->listen(value.substr(0, colon), static_cast<uint16_t>(*port), error)) return false;
  spdlog::info("admin API on http://{}:{}", value.substr(0, colon), admin_->port());
  return true;
}

namespace {

const char* api_name(size_t key) {
  for (const auto& api : protocol::kApiTable) {
    if (static_cast<size_t>(api.key) == key) return api.name;
  }
  return nullptr;
}

void write_request_metrics(PrometheusWriter& w) {
  auto& p = probe();
  w.family("oxbow_requests_total", "counter", "Requests handled, by API.");
  for (size_t k = 0; k < BrokerProbe::kMaxApiKey; ++k) {
    if (const char* name = api_name(k); name && p.apis[k].requests.value() > 0) {
      w.sample("oxbow_requests_total", {{"api", name}},
               static_cast<double>(p.apis[k].requests.value()));
    }
  }
  w.family("oxbow_request_errors_total", "counter",
           "Produce/fetch partitions answered with an error, and requests that closed their "
           "connection.");
  for (size_t k = 0; k < BrokerProbe::kMaxApiKey; ++k) {
    if (const char* name = api_name(k); name && p.apis[k].requests.value() > 0) {
      w.sample("oxbow_request_errors_total", {{"api", name}},
               static_cast<double>(p.apis[k].errors.value()));
    }
  }
  const std::pair<const char*, metrics::Histogram ApiProbe::*> phases[] = {
      {"queue", &ApiProbe::queue_seconds},
      {"local", &ApiProbe::local_seconds},
      {"send", &ApiProbe::send_seconds}};
  for (const auto& [phase, member] : phases) {
    std::string family = std::string("oxbow_request_") + phase + "_seconds";
    w.family(family, "histogram", std::string("Request ") + phase + " time, by API.");
    for (size_t k = 0; k < BrokerProbe::kMaxApiKey; ++k) {
      if (const char* name = api_name(k); name && p.apis[k].requests.value() > 0) {
        w.histogram(family, {{"api", name}}, (p.apis[k].*member).snapshot());
      }
    }
  }
  w.family("oxbow_produce_request_bytes", "histogram", "Size of produce requests.");
  w.histogram("oxbow_produce_request_bytes", {}, p.produce_request_bytes.snapshot());
  w.family("oxbow_fetch_response_bytes", "histogram", "Size of fetch responses.");
  w.histogram("oxbow_fetch_response_bytes", {}, p.fetch_response_bytes.snapshot());
  w.family("oxbow_active_connections", "gauge", "Open client connections.");
  w.sample("oxbow_active_connections", {}, static_cast<double>(p.connections.load()));
  w.family("oxbow_fetch_down_conversions_total", "counter",
           "Partition reads converted to the message formats of Fetch v0-v3.");
  w.sample("oxbow_fetch_down_conversions_total", {},
           static_cast<double>(p.fetch_down_conversions.value()));
  w.family("oxbow_connections_accepted_total", "counter", "Client connections accepted.");
  w.sample("oxbow_connections_accepted_total", {},
           static_cast<double>(p.connections_accepted.value()));
  w.family("oxbow_connections_rejected_total", "counter",
           "Client connections closed at once for max.connections.per.ip.");
  w.sample("oxbow_connections_rejected_total", {},
           static_cast<double>(p.connections_rejected.value()));
  w.family("oxbow_connections_throttled_total", "counter",
           "Client connections closed unserved for their address's connection_creation_rate.");
  w.sample("oxbow_connections_throttled_total", {},
           static_cast<double>(p.connections_throttled.value()));
  w.family("oxbow_connection_creation_throttle_seconds_total", "counter",
           "Time the listeners waited before accepting, for max.connection.creation.rate.");
  w.sample("oxbow_connection_creation_throttle_seconds_total", {},
           static_cast<double>(p.connection_creation_throttle_ms.value()) / 1000.0);
  w.family("oxbow_connection_limit_wait_seconds_total", "counter",
           "Time the listeners held an accepted connection unserved, waiting for a slot under "
           "max.connections (the broker's or the listener's).");
  w.sample("oxbow_connection_limit_wait_seconds_total", {},
           static_cast<double>(p.connection_limit_wait_ms.value()) / 1000.0);
  w.family("oxbow_authentication_failures_total", "counter",
           "Failed authentications: SASL (wrong mechanism or credentials) and TLS (handshake or "
           "certificate).");
  w.sample("oxbow_authentication_failures_total", {{"method", "sasl"}},
           static_cast<double>(p.sasl_authentication_failures.value()));
  w.sample("oxbow_authentication_failures_total", {{"method", "tls"}},
           static_cast<double>(p.tls_handshake_failures.value()));
  w.family("oxbow_authorization_denials_total", "counter",
           "Resources an ACL check refused, by API.");
  for (size_t k = 0; k < BrokerProbe::kMaxApiKey; ++k) {
    if (const char* name = api_name(k); name && p.apis[k].authorization_denials.value() > 0) {
      w.sample("oxbow_authorization_denials_total", {{"api", name}},
               static_cast<double>(p.apis[k].authorization_denials.value()));
    }
  }
  w.family("oxbow_quota_throttled_total", "counter",
           "Responses to clients over a quota (byte rate or request time), by API.");
  w.family("oxbow_quota_throttle_seconds_total", "counter",
           "Throttle time those responses asked their clients to wait, by API.");
  for (size_t k = 0; k < BrokerProbe::kMaxApiKey; ++k) {
    const char* name = api_name(k);
    const auto& counters = p.apis[k];
    if (!name || (k > 1 && counters.throttled.value() == 0)) continue;  // Produce, Fetch always
    w.sample("oxbow_quota_throttled_total", {{"api", name}},
             static_cast<double>(counters.throttled.value()));
    w.sample("oxbow_quota_throttle_seconds_total", {{"api", name}},
             static_cast<double>(counters.throttle_ms.value()) / 1000.0);
  }
}

void write_storage_metrics(PrometheusWriter& w, TopicRegistry& topics) {
  auto list = topics.list();
  w.family("oxbow_topic_bytes_in_total", "counter", "Record-batch bytes appended, by topic.");
  for (const auto& t : list) {
    if (auto s = topics.stats(t.name))
      w.sample("oxbow_topic_bytes_in_total", {{"topic", t.name}}, s->bytes_in.value());
  }
  w.family("oxbow_topic_records_in_total", "counter", "Records appended, by topic.");
  for (const auto& t : list) {
    if (auto s = topics.stats(t.name))
      w.sample("oxbow_topic_records_in_total", {{"topic", t.name}}, s->records_in.value());
  }
  w.family("oxbow_topic_bytes_out_total", "counter", "Record bytes sent to fetchers, by topic.");
  for (const auto& t : list) {
    if (auto s = topics.stats(t.name))
      w.sample("oxbow_topic_bytes_out_total", {{"topic", t.name}}, s->bytes_out.value());
  }
  size_t partitions = 0;
  for (const auto& t : list) partitions += static_cast<size_t>(t.partitions);
  w.family("oxbow_partitions", "gauge", "Partitions on this broker.");
  w.sample("oxbow_partitions", {}, static_cast<double>(partitions));
  w.family("oxbow_under_replicated_partitions", "gauge",
           "Partitions with fewer in-sync replicas than replicas.");
  w.sample("oxbow_under_replicated_partitions", {}, 0);
  w.family("oxbow_offline_partitions", "gauge", "Partitions without a leader.");
  w.sample("oxbow_offline_partitions", {}, 0);
  struct Gauge {
    const char* name;
    const char* help;
    double (*read)(storage::PartitionLog&);
  };
  const Gauge gauges[] = {
      {"oxbow_partition_log_size_bytes", "Bytes in the partition's segments.",
       [](storage::PartitionLog& l) { return static_cast<double>(l.size_bytes()); }},
      {"oxbow_partition_log_end_offset", "Offset the next record will get.",
       [](storage::PartitionLog& l) { return static_cast<double>(l.log_end_offset()); }},
      {"oxbow_partition_high_watermark", "Offset up to which consumers may read.",
       [](storage::PartitionLog& l) { return static_cast<double>(l.high_watermark()); }},
      {"oxbow_partition_log_start_offset", "First offset still in the log.",
       [](storage::PartitionLog& l) { return static_cast<double>(l.log_start_offset()); }},
  };
  for (const auto& g : gauges) {
    w.family(g.name, "gauge", g.help);
    for (const auto& t : list) {
      for (int32_t p = 0; p < t.partitions; ++p) {
        if (auto log = topics.partition(t.name, p)) {
          w.sample(g.name, {{"topic", t.name}, {"partition", std::to_string(p)}}, g.read(*log));
        }
      }
    }
  }
  auto& sp = storage::probe();
  w.family("oxbow_log_flush_seconds", "histogram", "Time of one partition's fdatasync.");
  w.histogram("oxbow_log_flush_seconds", {}, sp.flush_seconds.snapshot());
  w.family("oxbow_log_recovery_truncated_bytes_total", "counter",
           "Bytes of torn or corrupt tails truncated at start-up.");
  w.sample("oxbow_log_recovery_truncated_bytes_total", {},
           static_cast<double>(sp.recovered_bytes_truncated.value()));
  struct CleanerCounter {
    const char* name;
    const char* help;
    const metrics::Counter& counter;
  };
  const CleanerCounter cleaner[] = {
      {"oxbow_log_cleaner_runs_total", "Compaction passes that rewrote a log.", sp.cleaner_runs},
      {"oxbow_log_cleaner_bytes_read_total", "Bytes compaction read.", sp.cleaner_bytes_read},
      {"oxbow_log_cleaner_bytes_written_total", "Bytes compaction wrote.",
       sp.cleaner_bytes_written},
      {"oxbow_log_cleaner_records_removed_total", "Records compaction removed.",
       sp.cleaner_records_removed},
  };
  for (const auto& c : cleaner) {
    w.family(c.name, "counter", c.help);
    w.sample(c.name, {}, static_cast<double>(c.counter.value()));
  }
  w.family("oxbow_log_cleaner_seconds", "histogram", "Time of one compaction pass over one log.");
  w.histogram("oxbow_log_cleaner_seconds", {}, sp.cleaner_seconds.snapshot());
  w.family("oxbow_log_cleaner_dirty_ratio", "gauge",
           "Share of a compacted partition's cleanable bytes not compacted yet.");
  int64_t now = now_ms();
  for (const auto& t : list) {
    for (int32_t p = 0; p < t.partitions; ++p) {
      auto log = topics.partition(t.name, p);
      if (!log || !log->config().compact) continue;
      w.sample("oxbow_log_cleaner_dirty_ratio",
               {{"topic", t.name}, {"partition", std::to_string(p)}}, log->dirty_ratio(now));
    }
  }
}

void write_group_metrics(PrometheusWriter& w, group::GroupCoordinator& groups,
                         TopicRegistry& topics) {
  auto list = groups.list({});
  // Classic groups' states and KIP-848 consumer groups' (Assigning, Reconciling) together.
  std::map<std::string, int> by_state = {
      {"Empty", 0},  {"PreparingRebalance", 0}, {"CompletingRebalance", 0},
      {"Stable", 0}, {"Assigning", 0},          {"Reconciling", 0}};
  for (const auto& g : list) by_state[g.state]++;
  w.family("oxbow_groups", "gauge", "Consumer groups of either protocol, by state.");
  for (const auto& [state, count] : by_state) w.sample("oxbow_groups", {{"state", state}}, count);
  w.family("oxbow_consumer_group_lag", "gauge",
           "Records between a group's committed offset and the partition's high watermark.");
  for (const auto& g : list) {
    for (const auto& [tp, committed] : groups.fetch(g.group_id, std::nullopt)) {
      auto log = topics.partition(tp.first, tp.second);
      if (!log || committed.offset < 0) continue;
      double lag =
          static_cast<double>(std::max<int64_t>(0, log->high_watermark() - committed.offset));
      w.sample(
          "oxbow_consumer_group_lag",
          {{"group", g.group_id}, {"topic", tp.first}, {"partition", std::to_string(tp.second)}},
          lag);
    }
  }
}

http::Response json_response(const json& body, int status = 200) {
  return {status, "application/json", body.dump() + "\n"};
}

}  // namespace

std::string Broker::metrics_text() {
  PrometheusWriter w;
  w.family("oxbow_ready", "gauge", "1 once the logs are loaded and clients are served.");
  w.sample("oxbow_ready", {}, ready_ ? 1 : 0);
  write_request_metrics(w);
  w.family("oxbow_incremental_fetches_total", "counter",
           "Fetches of an incremental fetch session's partitions (KIP-227).");
  w.sample("oxbow_incremental_fetches_total", {},
           static_cast<double>(probe().incremental_fetches.value()));
  w.family("oxbow_fetch_session_errors_total", "counter",
           "Fetches refused for their session: unknown, a stale epoch, or topic ids mismatched.");
  w.sample("oxbow_fetch_session_errors_total", {},
           static_cast<double>(probe().fetch_session_errors.value()));
  w.family("oxbow_fetch_sessions", "gauge", "Incremental fetch sessions held (KIP-227).");
  w.sample("oxbow_fetch_sessions", {}, static_cast<double>(fetch_sessions_->size()));
  w.family("oxbow_fetch_session_evictions_total", "counter",
           "Fetch sessions evicted to make room for new ones (max.incremental.fetch.session."
           "cache.slots).");
  w.sample("oxbow_fetch_session_evictions_total", {},
           static_cast<double>(fetch_sessions_->evictions()));
  w.family("oxbow_fetch_session_partitions", "gauge", "Partitions held by fetch sessions.");
  w.sample("oxbow_fetch_session_partitions", {},
           static_cast<double>(fetch_sessions_->partitions()));
  if (ready_) {
    write_storage_metrics(w, *topics_);
    write_group_metrics(w, *groups_, *topics_);
  }
  return w.text();
}

http::Response Broker::handle_admin(const http::Request& request) {
  const auto& path = request.path;
  if (request.method == "GET" && path == "/metrics") {
    return {200, "text/plain; version=0.0.4; charset=utf-8", metrics_text()};
  }
  if (request.method == "GET" && path == "/v1/status/live") return json_response({{"live", true}});
  if (request.method == "GET" && path == "/v1/status/ready") {
    return json_response({{"ready", ready_.load()}}, ready_ ? 200 : 503);
  }
  if (path == "/v1/loggers") {
    if (request.method == "GET") {
      return json_response({{"level", spdlog::level::to_string_view(spdlog::get_level()).data()}});
    }
    if (request.method == "PUT" || request.method == "POST") {
      std::string wanted = request.query.starts_with("level=") ? request.query.substr(6)
                                                               : std::string(trim(request.body));
      auto level = spdlog::level::from_str(wanted);
      if (wanted.empty() || (level == spdlog::level::off && wanted != "off")) {
        return {400, "text/plain",
                "unknown log level '" + wanted +
                    "' (trace, debug, info, warn, error, critical, off)\n"};
      }
      spdlog::set_level(level);
      spdlog::info("log level set to {}", wanted);
      return json_response({{"level", wanted}});
    }
  }
  if (request.method != "GET") return {405, "text/plain", "method not allowed\n"};
  if (!ready_ && path.starts_with("/v1/"))
    return {503, "text/plain", "the broker is loading its logs\n"};
  if (path == "/v1/brokers") {
    json brokers = json::array();
    for (const auto& e : config_.advertised_listeners) {
      brokers.push_back({{"node_id", config_.node_id},
                         {"listener", e.name},
                         {"host", advertised_endpoint(e.name).host},
                         {"port", e.port},
                         {"rack", config_.rack ? json(*config_.rack) : json(nullptr)},
                         {"controller", true}});
    }
    return json_response({{"cluster_id", cluster_id_}, {"brokers", brokers}});
  }
  if (path == "/v1/topics") {
    json topics = json::array();
    for (const auto& t : topics_->list()) {
      json partitions = json::array();
      for (int32_t p = 0; p < t.partitions; ++p) {
        if (auto log = topics_->partition(t.name, p)) {
          partitions.push_back({{"partition", p},
                                {"log_start_offset", log->log_start_offset()},
                                {"high_watermark", log->high_watermark()},
                                {"log_end_offset", log->log_end_offset()},
                                {"size_bytes", log->size_bytes()}});
        }
      }
      topics.push_back({{"name", t.name},
                        {"internal", t.name.starts_with("__")},
                        {"configs", t.configs},
                        {"partitions", partitions}});
    }
    return json_response(topics);
  }
  if (path == "/v1/groups") {
    json out = json::array();
    for (const auto& g : groups_->list({})) {
      auto d = groups_->describe(g.group_id);
      json offsets = json::array();
      for (const auto& [tp, committed] : groups_->fetch(g.group_id, std::nullopt)) {
        auto log = topics_->partition(tp.first, tp.second);
        int64_t end = log ? log->high_watermark() : -1;
        offsets.push_back({{"topic", tp.first},
                           {"partition", tp.second},
                           {"committed_offset", committed.offset},
                           {"end_offset", end},
                           {"lag", end >= 0 ? std::max<int64_t>(0, end - committed.offset) : -1}});
      }
      out.push_back({{"group_id", g.group_id},
                     {"state", g.state},
                     {"protocol_type", g.protocol_type},
                     {"members", d.members.size()},
                     {"offsets", offsets}});
    }
    return json_response(out);
  }
  return {404, "text/plain", "no such resource: " + path + "\n"};
}

}  // namespace oxbow::broker
