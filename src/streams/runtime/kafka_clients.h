#pragma once
// The librdkafka clients a Streams application runs on: their configuration from the
// application's properties, and the admin steps at start (partition counts, internal topics).
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace oxbow::streams::detail {

struct RawRecord;

using Config = std::map<std::string, std::string>;

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using RdKafkaHandle = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

enum class ClientRole { kConsumer, kProducer, kAdmin, kRestoreConsumer };

// A client's topic handles by name, made on first use. Producing through a handle skips what
// librdkafka does for a topic given by name on every message: a lookup under its client-wide
// write lock; a consumer's handle made before it fetches carries topic settings
// (auto.offset.reset) for that topic alone. Destroy before the client.
class TopicHandles {
 public:
  TopicHandles() = default;
  TopicHandles(const TopicHandles&) = delete;
  TopicHandles& operator=(const TopicHandles&) = delete;
  ~TopicHandles() { clear(); }
  // nullptr when librdkafka refuses the name (rd_kafka_last_error() says why). `conf` (taken)
  // applies only to a handle made now.
  rd_kafka_topic_t* get(rd_kafka_t* client, const std::string& topic,
                        rd_kafka_topic_conf_t* conf = nullptr);
  void clear();

 private:
  std::unordered_map<std::string, rd_kafka_topic_t*> handles_;
};

// The client's librdkafka settings: bootstrap.servers, the security settings, and the properties
// prefixed with the role's name (consumer., producer., admin.), then `fixed` on top.
// `defaults` apply first (the application's settings override them), `fixed` last; no client
// may have the broker auto-create a topic (allow.auto.create.topics=false, whatever is asked).
rd_kafka_conf_t* client_conf(const Config& app, ClientRole role, const Config& fixed,
                             const Config& defaults = {});
// Throws std::runtime_error with librdkafka's reason.
RdKafkaHandle make_client(rd_kafka_type_t type, rd_kafka_conf_t* conf);

// Asks the cluster at once for the leaders of the topics the client knows. Partitions just
// assigned in a topic new to the client would otherwise start fetching only at librdkafka's next
// periodic metadata scan, up to a second later. Best effort: a failure leaves that scan to it.
void learn_leaders(rd_kafka_t* client);

// How long the thread asks again a call that timed out (the coordinator slow, moving or away)
// before it fails: Kafka Streams' task.timeout.ms default.
inline constexpr std::chrono::minutes kRetryTimedOutFor{5};

// rd_kafka_committed, asked again while it times out, for up to kRetryTimedOutFor.
rd_kafka_resp_err_t committed_offsets(rd_kafka_t* consumer, rd_kafka_topic_partition_list_t* list);

// The group's committed offset of a partition, 0 when there is none, asked through `consumer`
// (which has the group's id); throws StreamsException when the group cannot answer.
int64_t committed_offset(rd_kafka_t* consumer, const std::string& topic, int32_t partition);

// The topic's partition count, 0 when it does not exist (and not created by the asking, on a
// client from client_conf); throws when the cluster cannot answer.
int32_t partition_count(rd_kafka_t* client, const std::string& topic);

// rd_kafka_query_watermark_offsets' answer within `timeout_ms`, which librdkafka 2.0.2's own
// does not keep once the partition's leader is down: rdkafka/offsets.h, which the SQL server, the
// registry and the CLI share. A null `low` is not asked.
rd_kafka_resp_err_t query_watermarks(rd_kafka_t* client, const std::string& topic,
                                     int32_t partition, int64_t* low, int64_t* high,
                                     int timeout_ms);

// A fetched message as a task takes it: views of the message's bytes and of `topic`, valid while
// both live.
RawRecord raw_record(const rd_kafka_message_t* message, std::string_view topic);

struct NewTopic {
  std::string name;
  int32_t partitions = 1;
  int32_t replication_factor = -1;
  std::map<std::string, std::string> configs;
};
// Creates the topics that do not exist yet; throws naming a topic that failed.
void create_topics(rd_kafka_t* admin, const std::vector<NewTopic>& topics);
// Deletes `group`'s committed offsets of `partitions` (OffsetDelete); throws naming what failed.
void delete_group_offsets(rd_kafka_t* admin, const std::string& group,
                          const rd_kafka_topic_partition_list_t* partitions);

}  // namespace oxbow::streams::detail
