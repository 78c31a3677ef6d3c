#pragma once
// The broker's topics: names, ids, partition counts and config overrides, persisted in
// `<first log dir>/oxbow-topics.json` (rewritten atomically on every change), and the open log of
// each partition.
//
// oxbow-topics.json: {"version": 1, "topics": [{"name": "t", "id": "<32 hex digits>",
//   "partitions": 3, "configs": {"retention.ms": "1000"}}]}
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/errors.h"
#include "protocol/wire.h"
#include "storage/log_config.h"

namespace oxbow::storage {
class LogManager;
class PartitionLog;
}  // namespace oxbow::storage

namespace oxbow::broker {

struct BrokerConfig;
struct TopicStats;

struct TopicInfo {
  std::string name;
  protocol::Uuid id{};
  int32_t partitions = 0;
  std::map<std::string, std::string> configs;
};

// Kafka's rules: 1-249 characters of [a-zA-Z0-9._-], not "." or "..". Returns the reason or "".
std::string invalid_topic_name_reason(const std::string& name);

class TopicRegistry {
 public:
  TopicRegistry(const BrokerConfig& config, storage::LogManager& logs);
  ~TopicRegistry();

  // Reads the topic file and opens every partition's log (recovering when needed).
  bool load(std::string& error);

  struct Result {
    protocol::ErrorCode error = protocol::ErrorCode::kNone;
    std::string message;
  };
  Result create(const std::string& name, int32_t partitions,
                const std::map<std::string, std::string>& configs, bool validate_only,
                TopicInfo* created = nullptr);
  Result remove(const std::string& name);
  Result add_partitions(const std::string& name, int32_t total, bool validate_only);
  // Replaces the topic's config overrides; the new settings apply to its logs at once.
  Result alter_configs(const std::string& name, const std::map<std::string, std::string>& configs,
                       bool validate_only);
  // Dynamic broker configs changed the defaults topics inherit: every log gets its new settings.
  void set_broker_defaults(const storage::LogConfig& log_defaults, int32_t num_partitions);

  std::optional<TopicInfo> find(const std::string& name) const;
  std::optional<TopicInfo> find_by_id(const protocol::Uuid& id) const;
  std::vector<TopicInfo> list() const;
  // The partition's log, or nullptr when the topic or partition does not exist.
  std::shared_ptr<storage::PartitionLog> partition(const std::string& topic, int32_t index) const;
  std::vector<std::shared_ptr<storage::PartitionLog>> all_partitions() const;
  // Traffic counters of the topic, or nullptr when it does not exist.
  std::shared_ptr<TopicStats> stats(const std::string& topic) const;

 private:
  struct Topic {
    TopicInfo info;
    std::vector<std::shared_ptr<storage::PartitionLog>> logs;
    std::shared_ptr<TopicStats> stats;
  };
  bool save_locked(std::string& error) const;
  // Opens partitions [from, partitions) of each topic, all in one LogManager::open_logs call.
  bool open_partitions_locked(const std::vector<std::pair<Topic*, int32_t>>& topics,
                              std::string& error);

  const BrokerConfig& config_;
  storage::LogManager& logs_;
  std::string path_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, Topic> topics_;
  storage::LogConfig log_defaults_;  // the broker's, dynamic configs included
  int32_t num_partitions_;
};

}  // namespace oxbow::broker
