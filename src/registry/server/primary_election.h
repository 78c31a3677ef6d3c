#pragma once
// Which registry instance is the primary, the one that allocates ids and takes every write: the
// eligible instances join a consumer group on the brokers (schema.registry.group.id, subscribed to
// the `_schemas` topic), and the member assigned its one partition is the primary. Every instance
// finds the primary's URL from the group's description, where each member's client id carries
// its URL. A primary that dies leaves the group when its session times out, and the partition
// (so the role) goes to another member.
//
// Confluent elects through a group with a protocol of its own; a consumer group is what librdkafka
// offers and gives the same guarantee: one owner of the partition per generation.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace oxbow::registry::server {

struct ElectionConfig {
  std::string bootstrap_servers;
  std::string topic = "_schemas";
  std::string group_id = "schema-registry";  // schema.registry.group.id
  std::string url;                           // this instance's, as others reach it
  bool eligible = true;                      // leader.eligibility
  int session_timeout_ms = 10000;
};

class PrimaryElection {
 public:
  explicit PrimaryElection(ElectionConfig config);
  ~PrimaryElection();
  PrimaryElection(const PrimaryElection&) = delete;
  PrimaryElection& operator=(const PrimaryElection&) = delete;

  // Before start(): the URL is known only once the listener is bound.
  void set_url(std::string url) { config_.url = std::move(url); }
  // Throws std::runtime_error when the client cannot be made.
  void start();
  void stop();

  bool is_primary() const { return primary_; }
  const std::string& url() const { return config_.url; }
  // The primary's URL (this instance's own when it is the primary); nullopt when none is known.
  std::optional<std::string> primary_url();
  // Counts the times this instance became the primary: a change tells the server to read the
  // log to its end before its first write.
  int64_t terms() const { return terms_; }

 private:
  void poll_loop();
  void rebalanced(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions);
  static void on_rebalance(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*,
                           void*);
  std::optional<std::string> describe_primary();

  ElectionConfig config_;
  rd_kafka_t* consumer_ = nullptr;
  std::thread poller_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> primary_{false};
  std::atomic<int64_t> terms_{0};
};

// The member's client id carries its URL after this prefix.
inline constexpr const char* kRegistryClientIdPrefix = "oxbow-registry@";

// The partitions of `topic` in a consumer-protocol assignment (Kafka's ConsumerProtocol
// Assignment, version 0 or later); empty when the bytes do not parse.
std::vector<int32_t> assigned_partitions(const void* data, size_t size, const std::string& topic);

}  // namespace oxbow::registry::server
