#pragma once
// Where an application's state lives, as Kafka Streams describes it to interactive queries: each
// instance names its endpoint in `application.server` (host:port), the group's assignment carries
// every instance's endpoint with the partitions of its active and standby tasks, and any
// instance can then say which one holds a key (KafkaStreams::queryMetadataForKey) or a store.
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>

namespace oxbow::streams {

// An instance's application.server endpoint (Kafka's HostInfo).
class HostInfo {
 public:
  HostInfo() = default;
  HostInfo(std::string host, int32_t port) : host_(std::move(host)), port_(port) {}
  // ("unavailable", -1): no instance, or one without application.server.
  static HostInfo unavailable() { return HostInfo("unavailable", -1); }

  const std::string& host() const { return host_; }
  int32_t port() const { return port_; }
  bool operator==(const HostInfo&) const = default;
  auto operator<=>(const HostInfo&) const = default;

 private:
  std::string host_ = "unavailable";
  int32_t port_ = -1;
};

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  bool operator==(const TopicPartition&) const = default;
  auto operator<=>(const TopicPartition&) const = default;
};

// One instance of the application (Kafka's StreamsMetadata): its endpoint, the stores and source
// partitions of its active tasks, and those of its standby tasks.
class StreamsMetadata {
 public:
  StreamsMetadata() = default;
  StreamsMetadata(HostInfo host, std::set<std::string> stores, std::set<TopicPartition> partitions,
                  std::set<std::string> standby_stores, std::set<TopicPartition> standby_partitions)
      : host_(std::move(host)),
        stores_(std::move(stores)),
        partitions_(std::move(partitions)),
        standby_stores_(std::move(standby_stores)),
        standby_partitions_(std::move(standby_partitions)) {}

  const HostInfo& hostInfo() const { return host_; }
  const std::string& host() const { return host_.host(); }
  int32_t port() const { return host_.port(); }
  // The stores of its active tasks (every global store included).
  const std::set<std::string>& stateStoreNames() const { return stores_; }
  // The source partitions of its active tasks, repartition topics included.
  const std::set<TopicPartition>& topicPartitions() const { return partitions_; }
  const std::set<std::string>& standbyStateStoreNames() const { return standby_stores_; }
  // The source partitions of its standby tasks (as Kafka's assignor fills them).
  const std::set<TopicPartition>& standbyTopicPartitions() const { return standby_partitions_; }
  bool operator==(const StreamsMetadata&) const = default;

 private:
  HostInfo host_;
  std::set<std::string> stores_;
  std::set<TopicPartition> partitions_;
  std::set<std::string> standby_stores_;
  std::set<TopicPartition> standby_partitions_;
};

// Where one key of a store lives (Kafka's KeyQueryMetadata): the instance whose active task
// holds its partition, the instances with a standby of it, and the partition.
class KeyQueryMetadata {
 public:
  KeyQueryMetadata() = default;
  KeyQueryMetadata(HostInfo active, std::set<HostInfo> standbys, int32_t partition)
      : active_(std::move(active)), standbys_(std::move(standbys)), partition_(partition) {}
  // Before the instance knows its group's assignment: unavailable, no standbys, partition -1.
  static KeyQueryMetadata notAvailable() { return {}; }

  const HostInfo& activeHost() const { return active_; }
  const std::set<HostInfo>& standbyHosts() const { return standbys_; }
  int32_t partition() const { return partition_; }
  bool operator==(const KeyQueryMetadata&) const = default;

 private:
  HostInfo active_ = HostInfo::unavailable();
  std::set<HostInfo> standbys_;
  int32_t partition_ = -1;
};

// How far a local store's partition is behind its changelog (Kafka's LagInfo).
class LagInfo {
 public:
  LagInfo(int64_t current, int64_t end) : current_(current), end_(end) {}
  int64_t currentOffsetPosition() const { return current_; }
  int64_t endOffsetPosition() const { return end_; }
  int64_t offsetLag() const { return end_ > current_ ? end_ - current_ : 0; }

 private:
  int64_t current_ = 0, end_ = 0;
};

}  // namespace oxbow::streams
