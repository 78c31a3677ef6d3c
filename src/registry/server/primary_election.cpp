#include "registry/server/primary_election.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

namespace oxbow::registry::server {

namespace {

// Reads Kafka's big-endian integers and int16-length strings, failing on short input.
class Reader {
 public:
  Reader(const void* data, size_t size) : p_(static_cast<const uint8_t*>(data)), end_(p_ + size) {}
  bool ok() const { return ok_; }
  int64_t integer(int width) {
    if (end_ - p_ < width) return fail();
    int64_t v = 0;
    for (int i = 0; i < width; ++i) v = (v << 8) | *p_++;
    if (width == 2) return static_cast<int16_t>(v);
    if (width == 4) return static_cast<int32_t>(v);
    return v;
  }
  std::string string() {
    int64_t n = integer(2);
    if (!ok_ || n < 0 || end_ - p_ < n) return fail(), std::string();
    std::string s(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return s;
  }

 private:
  int64_t fail() {
    ok_ = false;
    p_ = end_;
    return 0;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

}  // namespace

std::vector<int32_t> assigned_partitions(const void* data, size_t size, const std::string& topic) {
  std::vector<int32_t> out;
  if (!data) return out;
  Reader r(data, size);
  r.integer(2);  // version
  int64_t topics = r.integer(4);
  for (int64_t t = 0; r.ok() && t < topics; ++t) {
    std::string name = r.string();
    int64_t count = r.integer(4);
    for (int64_t i = 0; r.ok() && i < count; ++i) {
      auto partition = static_cast<int32_t>(r.integer(4));
      if (r.ok() && name == topic) out.push_back(partition);
    }
  }
  if (!r.ok()) out.clear();
  return out;
}

PrimaryElection::PrimaryElection(ElectionConfig config) : config_(std::move(config)) {}

PrimaryElection::~PrimaryElection() {
  stop();
}

void PrimaryElection::start() {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::pair<const char*, std::string> settings[] = {
      {"bootstrap.servers", config_.bootstrap_servers},
      {"group.id", config_.group_id},
      {"client.id", kRegistryClientIdPrefix + config_.url},
      {"enable.auto.commit", "false"},
      {"session.timeout.ms", std::to_string(config_.session_timeout_ms)},
      {"heartbeat.interval.ms", std::to_string(std::max(100, config_.session_timeout_ms / 10))},
      {"partition.assignment.strategy", "range"},
      {"allow.auto.create.topics", "false"},  // the topic is KafkaLog's to create
  };
  for (const auto& [key, value] : settings)
    if (rd_kafka_conf_set(conf, key, value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string(key) + ": " + error);
    }
  rd_kafka_conf_set_rebalance_cb(conf, &PrimaryElection::on_rebalance);
  rd_kafka_conf_set_opaque(conf, this);
  consumer_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (!consumer_) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("cannot create the election's client: ") + error);
  }
  if (!config_.eligible) return;  // it only looks the primary up
  auto* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, config_.topic.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer_, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (err) throw std::runtime_error(std::string("cannot join the group: ") + rd_kafka_err2str(err));
  poller_ = std::thread([this] { poll_loop(); });
}

void PrimaryElection::stop() {
  stopping_ = true;
  if (poller_.joinable()) poller_.join();
  if (consumer_) {
    // Leaving the group at once hands the role over without waiting for the session to expire.
    if (config_.eligible) rd_kafka_consumer_close(consumer_);
    rd_kafka_destroy(consumer_);
    consumer_ = nullptr;
  }
  primary_ = false;
}

void PrimaryElection::poll_loop() {
  while (!stopping_) {
    // The partition is paused: polls only serve the group (heartbeats, rebalances).
    if (rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_, 100)) {
      if (m->err && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
        spdlog::warn("registry election: {}", rd_kafka_message_errstr(m));
      rd_kafka_message_destroy(m);
    }
  }
}

void PrimaryElection::on_rebalance(rd_kafka_t*, rd_kafka_resp_err_t err,
                                   rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  static_cast<PrimaryElection*>(opaque)->rebalanced(err, partitions);
}

void PrimaryElection::rebalanced(rd_kafka_resp_err_t err,
                                 rd_kafka_topic_partition_list_t* partitions) {
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    bool holds = false;
    for (int i = 0; i < partitions->cnt; ++i)
      holds |= config_.topic == partitions->elems[i].topic && partitions->elems[i].partition == 0;
    rd_kafka_assign(consumer_, partitions);
    rd_kafka_pause_partitions(consumer_, partitions);
    if (holds && !primary_) {
      ++terms_;
      spdlog::info("registry: this instance ({}) is the primary", config_.url);
    }
    primary_ = holds;
  } else {
    if (primary_) spdlog::info("registry: this instance is no longer the primary");
    primary_ = false;
    rd_kafka_assign(consumer_, nullptr);
  }
}

std::optional<std::string> PrimaryElection::primary_url() {
  if (primary_) return config_.url;
  return describe_primary();
}

std::optional<std::string> PrimaryElection::describe_primary() {
  const rd_kafka_group_list* groups = nullptr;
  if (rd_kafka_list_groups(consumer_, config_.group_id.c_str(), &groups, 5000) || !groups)
    return std::nullopt;
  std::optional<std::string> url;
  for (int g = 0; g < groups->group_cnt; ++g) {
    const auto& group = groups->groups[g];
    if (group.group != config_.group_id || std::string(group.state) != "Stable") continue;
    for (int m = 0; m < group.member_cnt; ++m) {
      const auto& member = group.members[m];
      auto partitions =
          assigned_partitions(member.member_assignment,
                              static_cast<size_t>(member.member_assignment_size), config_.topic);
      std::string client_id = member.client_id ? member.client_id : "";
      const std::string prefix = kRegistryClientIdPrefix;
      if (client_id.rfind(prefix, 0) == 0 &&
          std::find(partitions.begin(), partitions.end(), 0) != partitions.end())
        url = client_id.substr(prefix.size());
    }
  }
  rd_kafka_group_list_destroy(groups);
  return url;
}

}  // namespace oxbow::registry::server
