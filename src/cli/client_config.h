#pragma once

#include <fmt/core.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace oxbow::cli {

// Bound on every request to the cluster, so an unreachable broker yields an
// error instead of an indefinite wait.
inline constexpr int kRequestTimeoutMs = 10'000;

struct ClientOptions {
  std::string bootstrap_servers = "localhost:9092";
  std::vector<std::string> properties;  // "key=value", passed to librdkafka
};

// Adds --bootstrap-server/-b and -X/--property to `cmd`.
void add_client_options(CLI::App& cmd, ClientOptions& options);

using ConfigEntries = std::vector<std::pair<std::string, std::string>>;

// Builds a librdkafka configuration: `defaults`, then `overrides`, then the
// user's -X properties (the user has the last word). Reports a config error
// on stderr and throws CLI::RuntimeError(1).
rd_kafka_conf_t* make_kafka_conf(const ClientOptions& options, const ConfigEntries& defaults = {},
                                 const ConfigEntries& overrides = {});

struct KafkaDestroyer {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct TopicDestroyer {
  void operator()(rd_kafka_topic_t* rkt) const { rd_kafka_topic_destroy(rkt); }
};
struct QueueDestroyer {
  void operator()(rd_kafka_queue_t* rkqu) const { rd_kafka_queue_destroy(rkqu); }
};
struct MetadataDestroyer {
  void operator()(const rd_kafka_metadata_t* md) const { rd_kafka_metadata_destroy(md); }
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaDestroyer>;
using TopicHandle = std::unique_ptr<rd_kafka_topic_t, TopicDestroyer>;
using QueueHandle = std::unique_ptr<rd_kafka_queue_t, QueueDestroyer>;
using MetadataHandle = std::unique_ptr<const rd_kafka_metadata_t, MetadataDestroyer>;

// Creates a client handle, taking ownership of `conf`. Exits (throws) on failure.
KafkaHandle make_kafka_handle(rd_kafka_type_t type, rd_kafka_conf_t* conf);

struct AdminOptionsDestroyer {
  void operator()(rd_kafka_AdminOptions_t* options) const {
    rd_kafka_AdminOptions_destroy(options);
  }
};
struct EventDestroyer {
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
};
using AdminOptionsHandle = std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDestroyer>;
using EventHandle = std::unique_ptr<rd_kafka_event_t, EventDestroyer>;

std::string_view or_empty(const char* text);
// Admin options with request (and, where the operation has one, operation) timeouts, so that an
// unreachable cluster fails the command instead of leaving it queued forever.
AdminOptionsHandle make_admin_options(rd_kafka_t* rk, rd_kafka_admin_op_t op);
// The admin result event from `queue`; fails the command on a timeout or a request-level error.
EventHandle wait_for_admin_result(rd_kafka_queue_t* queue, std::string_view subject);

// Cluster metadata; all topics when `topic` is null. Exits (throws) on failure.
MetadataHandle fetch_metadata(rd_kafka_t* rk, rd_kafka_topic_t* topic = nullptr);

// Metadata of one topic from `md`, or nullptr if the cluster does not know it.
const rd_kafka_metadata_topic_t* find_topic(const rd_kafka_metadata_t& md, std::string_view name);

// Partition count of an existing topic. Exits (throws) when it is unknown.
int topic_partition_count(rd_kafka_t* rk, const std::string& topic);

// Prints "oxbow: error: <subject>: <error name>: <message>" and throws CLI::RuntimeError(1).
[[noreturn]] void fail(std::string_view subject, rd_kafka_resp_err_t err,
                       std::string_view message = {});
// Prints "oxbow: error: <message>" and throws CLI::RuntimeError(1).
[[noreturn]] void fail(std::string_view message);

void print_error(std::string_view subject, rd_kafka_resp_err_t err, std::string_view message = {});

// Prints rows whose columns are padded to a common width; the last column is not padded.
void print_table(const std::vector<std::vector<std::string>>& rows);

// Splits "key=value"; returns false when there is no '='.
bool split_key_value(std::string_view text, std::string& key, std::string& value);

// The serdes' settings: schema.registry.url, then each --registry-property key=value (a bad one
// fails with one line).
std::map<std::string, std::string> registry_properties(const std::string& url,
                                                       const std::vector<std::string>& properties);

// Installs SIGINT/SIGTERM handlers that set a flag instead of killing the
// process, so long-running commands can flush and print their summary.
void install_stop_signal_handlers();
bool stop_requested();

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace oxbow::cli
