#pragma once
// The engine's TopicAccess over librdkafka: topics from the cluster's metadata, consumer counts
// from the groups' assignments, and PRINT's records read by a consumer without a group (its
// partitions started at their beginning or end, nothing committed).
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "sql/engine/topic_access.h"

struct rd_kafka_s;

namespace oxbow::sql {

// The topics of one consumer protocol assignment (version, topics with their partitions, user
// data) with how many partitions of each it holds; what cannot be read counts for nothing.
std::map<std::string, int> assigned_partitions(std::string_view assignment);

class KafkaTopicAccess : public TopicAccess {
 public:
  // `config`: librdkafka properties (bootstrap.servers, security settings...).
  explicit KafkaTopicAccess(std::map<std::string, std::string> config);
  ~KafkaTopicAccess() override;

  std::vector<TopicInfo> list_topics(bool consumers) override;
  void read(const std::string& topic, bool from_beginning,
            const std::function<bool(const ReadBatch&)>& on_batch) override;

 private:
  rd_kafka_s* handle();  // one producer handle for metadata and groups, made on first use

  std::map<std::string, std::string> config_;
  rd_kafka_s* admin_ = nullptr;
};

}  // namespace oxbow::sql
