#pragma once
// What the engine needs of a Kafka cluster for SHOW TOPICS and PRINT: the topics, and a topic's
// records as they are read. An interface so that the engine stays a library tested without a
// broker (a fake stands in); `sql/kafka/` implements it over librdkafka.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow::sql {

struct TopicInfo {
  std::string name;
  std::vector<int> replicas;  // per partition, in partition order
  // SHOW TOPICS EXTENDED, counted as ksqlDB counts them: one consumer per partition a member of a
  // consumer group is assigned (not per member), and the groups with such a member.
  int consumers = 0;
  int consumer_groups = 0;
};

struct TopicRecord {
  int64_t timestamp = -1;  // -1: none (ksqlDB prints N/A)
  int32_t partition = 0;
  std::optional<std::string> key, value;  // none: null
};

// What one read of a topic returned: possibly no records (nothing came in a while), and whether
// every partition had then been read to its end.
struct ReadBatch {
  std::span<const TopicRecord> records;
  bool caught_up = false;
};

class TopicAccess {
 public:
  virtual ~TopicAccess() = default;
  // Every topic of the cluster (internal ones too: the engine hides what ksqlDB hides), with
  // consumers counted only when `consumers` is asked for (it costs a look at every group).
  virtual std::vector<TopicInfo> list_topics(bool consumers) = 0;
  // Reads `topic`'s partitions from their beginning or from their end, without a group and
  // without committing, handing each batch to `on_batch` until it returns false.
  virtual void read(const std::string& topic, bool from_beginning,
                    const std::function<bool(const ReadBatch&)>& on_batch) = 0;
};

// A format's reading of bytes as text, or nothing when the bytes are not in that format.
using FormatDecoder = std::function<std::optional<std::string>(std::string_view bytes)>;

// The Schema Registry's formats for PRINT, tried in ksqlDB's order when given (ksqlDB tries them
// with its registry client; without a registry they never match).
struct RegistryDecoders {
  FormatDecoder avro, protobuf, json_sr;
};

// Where PRINT's lines go and when a PRINT without LIMIT ends; a caller with no `line` gets the
// lines in StatementResult::printed.
struct PrintOutput {
  std::function<void(const std::string&)> line;
  std::function<bool()> stop;  // asked after each batch: true ends the PRINT (an interrupt)
  // A PRINT without LIMIT ends once every partition has been read to its end (a file run); false
  // waits for records until `stop` says so (an interactive session).
  bool end_when_caught_up = true;
  RegistryDecoders registry;
};

}  // namespace oxbow::sql
