#include "broker/topics/topic_registry.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <mutex>
#include <random>

#include "broker/config/config.h"
#include "broker/config/config_defs.h"
#include "broker/probe.h"
#include "storage/file.h"
#include "storage/log_manager.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

using protocol::ErrorCode;
using json = nlohmann::json;

namespace {

std::string to_hex(const protocol::Uuid& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : id) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

protocol::Uuid from_hex(const std::string& text) {
  protocol::Uuid id{};
  for (size_t i = 0; i < 16 && 2 * i + 1 < text.size(); ++i) {
    id[i] = static_cast<uint8_t>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

protocol::Uuid random_uuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  protocol::Uuid id;
  for (auto& b : id) b = static_cast<uint8_t>(rng());
  id[6] = static_cast<uint8_t>((id[6] & 0x0f) | 0x40);  // version 4
  id[8] = static_cast<uint8_t>((id[8] & 0x3f) | 0x80);
  return id;
}

}  // namespace

std::string invalid_topic_name_reason(const std::string& name) {
  if (name.empty()) return "Topic name is illegal, it can't be empty";
  if (name == "." || name == "..") return "Topic name cannot be \".\" or \"..\"";
  if (name.size() > 249) return "Topic name is illegal, it can't be longer than 249 characters";
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) {
      return "Topic name \"" + name +
             "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and "
             "'-'";
    }
  }
  return "";
}

TopicRegistry::TopicRegistry(const BrokerConfig& config, storage::LogManager& logs)
    : config_(config),
      logs_(logs),
      path_(config.log_dirs.front() + "/oxbow-topics.json"),
      log_defaults_(config.log_defaults),
      num_partitions_(config.num_partitions) {}

TopicRegistry::~TopicRegistry() = default;

bool TopicRegistry::open_partitions_locked(const std::vector<std::pair<Topic*, int32_t>>& topics,
                                           std::string& error) {
  std::vector<storage::LogToOpen> wanted;
  for (auto [topic, from] : topics) {
    auto log_config = resolve_log_config(log_defaults_, topic->info.configs);
    for (int32_t p = from; p < topic->info.partitions; ++p)
      wanted.push_back({topic->info.name, p, log_config});
  }
  auto logs = logs_.open_logs(wanted, error);
  if (logs.size() != wanted.size()) return false;
  auto next = logs.begin();
  for (auto [topic, from] : topics) {
    if (!topic->stats) topic->stats = std::make_shared<TopicStats>();
    for (int32_t p = from; p < topic->info.partitions; ++p) topic->logs.push_back(*next++);
  }
  return true;
}

bool TopicRegistry::load(std::string& error) {
  std::string text;
  if (!storage::read_whole_file(path_, text)) return true;  // a new broker
  std::unique_lock lock(mutex_);
  std::vector<Topic> loaded;
  try {
    auto doc = json::parse(text);
    for (const auto& t : doc.at("topics")) {
      Topic& topic = loaded.emplace_back();
      topic.info.name = t.at("name").get<std::string>();
      topic.info.id = from_hex(t.at("id").get<std::string>());
      topic.info.partitions = t.at("partitions").get<int32_t>();
      for (auto& [k, v] : t.at("configs").items()) topic.info.configs[k] = v.get<std::string>();
    }
  } catch (const std::exception& e) {
    error = path_ + ": " + e.what();
    return false;
  }
  // Every partition at once, so that recovery after a crash can use several threads.
  std::vector<std::pair<Topic*, int32_t>> all;
  for (auto& topic : loaded) all.emplace_back(&topic, 0);
  if (!open_partitions_locked(all, error)) return false;
  for (auto& topic : loaded) {
    auto name = topic.info.name;
    topics_[name] = std::move(topic);
  }
  return true;
}

bool TopicRegistry::save_locked(std::string& error) const {
  json doc;
  doc["version"] = 1;
  doc["topics"] = json::array();
  for (const auto& [name, topic] : topics_) {
    json t;
    t["name"] = name;
    t["id"] = to_hex(topic.info.id);
    t["partitions"] = topic.info.partitions;
    t["configs"] = topic.info.configs;
    doc["topics"].push_back(t);
  }
  return storage::write_file_atomically(path_, doc.dump(1), error);
}

namespace {

std::optional<TopicRegistry::Result> invalid_configs(
    const std::map<std::string, std::string>& configs) {
  for (const auto& [key, value] : configs) {
    const ConfigDef* def = find_topic_config(key);
    if (!def)
      return TopicRegistry::Result{ErrorCode::kInvalidConfig, "Unknown topic config name: " + key};
    if (auto invalid = validate_config_value(*def, value))
      return TopicRegistry::Result{ErrorCode::kInvalidConfig, *invalid};
  }
  return std::nullopt;
}

}  // namespace

TopicRegistry::Result TopicRegistry::alter_configs(
    const std::string& name, const std::map<std::string, std::string>& configs,
    bool validate_only) {
  if (auto invalid = invalid_configs(configs)) return *invalid;
  std::unique_lock lock(mutex_);
  auto it = topics_.find(name);
  if (it == topics_.end()) {
    return {ErrorCode::kUnknownTopicOrPartition, "Topic " + name + " does not exist."};
  }
  if (validate_only) return {};
  auto& topic = it->second;
  topic.info.configs = configs;
  std::string error;
  if (!save_locked(error)) return {ErrorCode::kKafkaStorageError, error};
  auto log_config = resolve_log_config(log_defaults_, configs);
  for (auto& log : topic.logs) log->set_config(log_config);
  spdlog::info("altered configs of topic {}", name);
  return {};
}

void TopicRegistry::set_broker_defaults(const storage::LogConfig& log_defaults,
                                        int32_t num_partitions) {
  std::unique_lock lock(mutex_);
  log_defaults_ = log_defaults;
  num_partitions_ = num_partitions;
  for (auto& [name, topic] : topics_) {
    auto log_config = resolve_log_config(log_defaults_, topic.info.configs);
    for (auto& log : topic.logs) log->set_config(log_config);
  }
}

TopicRegistry::Result TopicRegistry::create(const std::string& name, int32_t partitions,
                                            const std::map<std::string, std::string>& configs,
                                            bool validate_only, TopicInfo* created) {
  if (auto reason = invalid_topic_name_reason(name); !reason.empty()) {
    return {ErrorCode::kInvalidTopicException, reason};
  }
  if (partitions == -1) partitions = num_partitions_;
  if (partitions <= 0 || partitions > 100000) {
    return {ErrorCode::kInvalidPartitions, "Number of partitions must be larger than 0."};
  }
  if (auto invalid = invalid_configs(configs)) return *invalid;
  std::unique_lock lock(mutex_);
  if (topics_.count(name)) {
    return {ErrorCode::kTopicAlreadyExists, "Topic '" + name + "' already exists."};
  }
  Topic topic;
  topic.info = TopicInfo{name, random_uuid(), partitions, configs};
  if (created) *created = topic.info;
  if (validate_only) return {};
  std::string error;
  if (!open_partitions_locked({{&topic, 0}}, error)) {
    spdlog::error("creating topic {}: {}", name, error);
    return {ErrorCode::kKafkaStorageError, error};
  }
  topics_[name] = std::move(topic);
  if (!save_locked(error)) spdlog::error("saving topics: {}", error);
  spdlog::info("created topic {} with {} partitions", name, partitions);
  return {};
}

TopicRegistry::Result TopicRegistry::remove(const std::string& name) {
  if (!config_.delete_topic_enable) {
    return {ErrorCode::kTopicDeletionDisabled, "Topic deletion is disabled."};
  }
  Topic topic;
  {
    std::unique_lock lock(mutex_);
    auto it = topics_.find(name);
    if (it == topics_.end()) {
      return {ErrorCode::kUnknownTopicOrPartition,
              "This server does not host this topic-partition."};
    }
    topic = std::move(it->second);
    topics_.erase(it);
    std::string error;
    if (!save_locked(error)) spdlog::error("saving topics: {}", error);
  }
  for (int32_t p = 0; p < topic.info.partitions; ++p) logs_.delete_log(name, p);
  spdlog::info("deleted topic {}", name);
  return {};
}

TopicRegistry::Result TopicRegistry::add_partitions(const std::string& name, int32_t total,
                                                    bool validate_only) {
  std::unique_lock lock(mutex_);
  auto it = topics_.find(name);
  if (it == topics_.end()) {
    return {ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic-partition."};
  }
  auto& topic = it->second;
  if (total <= topic.info.partitions) {
    return {ErrorCode::kInvalidPartitions,
            "Topic currently has " + std::to_string(topic.info.partitions) +
                " partitions, which is higher than the requested " + std::to_string(total) + "."};
  }
  if (validate_only) return {};
  int32_t from = topic.info.partitions;
  topic.info.partitions = total;
  std::string error;
  if (!open_partitions_locked({{&topic, from}}, error)) {
    topic.info.partitions = static_cast<int32_t>(topic.logs.size());
    return {ErrorCode::kKafkaStorageError, error};
  }
  if (!save_locked(error)) spdlog::error("saving topics: {}", error);
  return {};
}

std::optional<TopicInfo> TopicRegistry::find(const std::string& name) const {
  std::shared_lock lock(mutex_);
  auto it = topics_.find(name);
  if (it == topics_.end()) return std::nullopt;
  return it->second.info;
}

std::optional<TopicInfo> TopicRegistry::find_by_id(const protocol::Uuid& id) const {
  std::shared_lock lock(mutex_);
  for (const auto& [name, topic] : topics_) {
    if (topic.info.id == id) return topic.info;
  }
  return std::nullopt;
}

std::vector<TopicInfo> TopicRegistry::list() const {
  std::shared_lock lock(mutex_);
  std::vector<TopicInfo> out;
  for (const auto& [name, topic] : topics_) out.push_back(topic.info);
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

std::shared_ptr<storage::PartitionLog> TopicRegistry::partition(const std::string& topic,
                                                                int32_t index) const {
  std::shared_lock lock(mutex_);
  auto it = topics_.find(topic);
  if (it == topics_.end() || index < 0 || index >= static_cast<int32_t>(it->second.logs.size())) {
    return nullptr;
  }
  return it->second.logs[static_cast<size_t>(index)];
}

std::shared_ptr<TopicStats> TopicRegistry::stats(const std::string& topic) const {
  std::shared_lock lock(mutex_);
  auto it = topics_.find(topic);
  return it == topics_.end() ? nullptr : it->second.stats;
}

std::vector<std::shared_ptr<storage::PartitionLog>> TopicRegistry::all_partitions() const {
  std::shared_lock lock(mutex_);
  std::vector<std::shared_ptr<storage::PartitionLog>> out;
  for (const auto& [name, topic] : topics_)
    out.insert(out.end(), topic.logs.begin(), topic.logs.end());
  return out;
}

}  // namespace oxbow::broker
