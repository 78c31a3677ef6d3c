#include "cli/client_config.h"

#include "cli/wire_client.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <csignal>
#include <mutex>
#include <set>

namespace oxbow::cli {
namespace {

// A broker that is down makes librdkafka report the same error every retry;
// once per distinct message is enough for a command-line user.
void report_client_error(rd_kafka_t*, int err, const char* reason, void*) {
  static std::mutex mutex;
  static std::set<std::string> already_reported;
  std::lock_guard lock{mutex};
  if (!already_reported.emplace(reason).second) return;
  fmt::print(stderr, "oxbow: warning: {}: {}\n",
             rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
}

void set_property(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char errstr[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof errstr) !=
      RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    fail(fmt::format("invalid property {}={}: {}", key, value, errstr));
  }
}

std::atomic<bool> stop_flag{false};

extern "C" void on_stop_signal(int) {
  stop_flag.store(true);
}

}  // namespace

void add_client_options(CLI::App& cmd, ClientOptions& options) {
  cmd.add_option("-b,--bootstrap-server", options.bootstrap_servers,
                 "Comma-separated host:port list of brokers")
      ->capture_default_str();
  cmd.add_option("-X,--property", options.properties,
                 "librdkafka configuration property key=value (repeatable)")
      ->allow_extra_args(false)
      ->take_all();
}

bool split_key_value(std::string_view text, std::string& key, std::string& value) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) return false;
  key.assign(text.substr(0, eq));
  value.assign(text.substr(eq + 1));
  return true;
}

std::map<std::string, std::string> registry_properties(const std::string& url,
                                                       const std::vector<std::string>& properties) {
  std::map<std::string, std::string> out{{"schema.registry.url", url}};
  for (const auto& p : properties) {
    std::string k, v;
    if (!split_key_value(p, k, v))
      fail(fmt::format("invalid --registry-property '{}': expected key=value", p));
    out[k] = v;
  }
  return out;
}

rd_kafka_conf_t* make_kafka_conf(const ClientOptions& options, const ConfigEntries& defaults,
                                 const ConfigEntries& overrides) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set_property(conf, "bootstrap.servers", options.bootstrap_servers);
  set_property(conf, "client.id", "oxbow-cli");
  for (const auto& [key, value] : defaults) set_property(conf, key, value);
  for (const auto& [key, value] : overrides) set_property(conf, key, value);
  for (const auto& property : options.properties) {
    std::string key, value;
    if (!split_key_value(property, key, value)) {
      rd_kafka_conf_destroy(conf);
      fail(fmt::format("invalid property '{}': expected key=value", property));
    }
    set_property(conf, key, value);
  }
  rd_kafka_conf_set_error_cb(conf, report_client_error);
  return conf;
}

KafkaHandle make_kafka_handle(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);  // only consumed by rd_kafka_new on success
    fail(fmt::format("cannot create client: {}", errstr));
  }
  return KafkaHandle{rk};
}

MetadataHandle fetch_metadata(rd_kafka_t* rk, rd_kafka_topic_t* topic) {
  const rd_kafka_metadata_t* md = nullptr;
  const int all_topics = topic == nullptr ? 1 : 0;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, all_topics, topic, &md, kRequestTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    fail("metadata", err,
         err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__TIMED_OUT
             ? "could not get cluster metadata; is the broker reachable?"
             : "could not get cluster metadata");
  }
  return MetadataHandle{md};
}

const rd_kafka_metadata_topic_t* find_topic(const rd_kafka_metadata_t& md, std::string_view name) {
  const auto* begin = md.topics;
  const auto* end = md.topics + md.topic_cnt;
  const auto* found = std::find_if(begin, end, [&](const auto& t) { return name == t.topic; });
  return found == end ? nullptr : found;
}

int topic_partition_count(rd_kafka_t* rk, const std::string& topic) {
  // Asking for all topics rather than this one keeps the broker from
  // auto-creating it just because we looked.
  const MetadataHandle md = fetch_metadata(rk);
  const auto* meta = find_topic(*md, topic);
  if (meta == nullptr) fail(topic, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  if (meta->err != RD_KAFKA_RESP_ERR_NO_ERROR) fail(topic, meta->err);
  if (meta->partition_cnt == 0)
    fail(topic, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, "topic has no partitions");
  return meta->partition_cnt;
}

void print_error(std::string_view subject, rd_kafka_resp_err_t err, std::string_view message) {
  if (message.empty()) message = rd_kafka_err2str(err);
  fmt::print(stderr, "oxbow: error: {}: {}: {}\n", subject, rd_kafka_err2name(err), message);
}

void fail(std::string_view subject, rd_kafka_resp_err_t err, std::string_view message) {
  print_error(subject, err, message);
  throw CLI::RuntimeError(1);
}

void fail(std::string_view message) {
  fmt::print(stderr, "oxbow: error: {}\n", message);
  throw CLI::RuntimeError(1);
}

void install_stop_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() {
  return stop_flag.load(std::memory_order_relaxed);
}

std::string_view or_empty(const char* text) {
  return text == nullptr ? std::string_view{} : text;
}

AdminOptionsHandle make_admin_options(rd_kafka_t* rk, rd_kafka_admin_op_t op) {
  AdminOptionsHandle options{rd_kafka_AdminOptions_new(rk, op)};
  char errstr[256];
  rd_kafka_AdminOptions_set_request_timeout(options.get(), kRequestTimeoutMs, errstr,
                                            sizeof errstr);
  // Operations without an operation timeout refuse this one; that is fine.
  if (op != RD_KAFKA_ADMIN_OP_ANY)
    rd_kafka_AdminOptions_set_operation_timeout(options.get(), kRequestTimeoutMs, errstr,
                                                sizeof errstr);
  return options;
}

EventHandle wait_for_admin_result(rd_kafka_queue_t* queue, std::string_view subject) {
  // Slack over the request timeout so librdkafka's own timeout error wins.
  EventHandle event{rd_kafka_queue_poll(queue, kRequestTimeoutMs + 5'000)};
  if (!event) fail(subject, RD_KAFKA_RESP_ERR__TIMED_OUT, "no response from the cluster");
  if (const auto err = rd_kafka_event_error(event.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR)
    fail(subject, err, or_empty(rd_kafka_event_error_string(event.get())));
  return event;
}

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string line;
  for (const auto& row : rows) {
    line.clear();
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    line += '\n';
    fmt::print("{}", line);
  }
}

namespace {

client::Settings settings_of(const ClientOptions& options) {
  client::Settings settings;
  for (const auto& property : options.properties) {
    std::string key, value;
    if (split_key_value(property, key, value)) settings[key] = value;
  }
  return settings;
}

}  // namespace

WireClient::WireClient(const ClientOptions& options)
    : client::Connection(options.bootstrap_servers, settings_of(options), "oxbow-cli",
                         kRequestTimeoutMs) {}

}  // namespace oxbow::cli
