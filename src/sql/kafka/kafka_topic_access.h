#pragma once
// The engine's TopicAccess over librdkafka: topics from the cluster's metadata, consumer counts
// from the groups' assignments, and PRINT's records read by a consumer without a group (its
// partitions started at their beginning or end, nothing committed).
#include <map>
#include <memory>
#include <string>

#include "sql/engine/topic_access.h"

struct rd_kafka_s;

namespace oxbow::sql {

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
