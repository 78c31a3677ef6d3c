#pragma once
// Serializers and deserializers in Confluent's wire format, interchangeable with Confluent's
// KafkaAvroSerializer/Deserializer (and the Python, Go and .NET ones built on the same format):
//
//   byte 0      magic byte 0
//   bytes 1..4  the schema's registry id, big-endian
//   then        AVRO: the datum's Avro binary encoding (for the schema "bytes", the raw bytes);
//               PROTOBUF: message indexes, then the message; JSON: the JSON text
//
// Values are nlohmann::json in Avro's JSON encoding (see src/registry/avro/binary.h): unions
// wrapped as {"<type>": value} except null, bytes as strings of code points 0-255. A serializer
// also takes a union's value unwrapped when one branch fits.
//
// AVRO is implemented; JSON and PROTOBUF refuse construction with a SerdeError until their
// serdes are written.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oxbow/registry/client.h"

namespace oxbow::registry {

enum class Format { kAvro, kJson, kProtobuf };

// Bytes that do not decode, a value that does not fit its schema, or a registry that refused;
// Confluent's serializers throw SerializationException for the same.
class SerdeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which subject a topic's schema is registered under (Confluent's *.subject.name.strategy).
enum class SubjectNameStrategy {
  kTopicName,        // "<topic>-key" / "<topic>-value" (the default)
  kRecordName,       // the record's full name
  kTopicRecordName,  // "<topic>-<record full name>"
};
// "TopicNameStrategy" or Confluent's class name
// (io.confluent.kafka.serializers.subject.TopicNameStrategy); nullopt for others.
std::optional<SubjectNameStrategy> parse_subject_name_strategy(std::string_view name);
// The subject; a record strategy without a record name (the schema is no record) throws
// SerdeError with Confluent's message.
std::string subject_name(SubjectNameStrategy strategy, std::string_view topic, bool is_key,
                         std::string_view record_name);

struct SerdeConfig {
  ClientConfig client;
  bool auto_register_schemas = true;
  bool use_latest_version = false;
  bool normalize_schemas = false;
  SubjectNameStrategy key_subject_name_strategy = SubjectNameStrategy::kTopicName;
  SubjectNameStrategy value_subject_name_strategy = SubjectNameStrategy::kTopicName;

  // Confluent's names: those of ClientConfig::from_properties, auto.register.schemas,
  // use.latest.version, normalize.schemas, key.subject.name.strategy,
  // value.subject.name.strategy. A bad value throws SerdeError; unknown names are ignored, as
  // Confluent's serdes ignore them.
  static SerdeConfig from_properties(const std::map<std::string, std::string>& properties);
};

namespace wire {
constexpr uint8_t kMagicByte = 0;
constexpr size_t kHeaderSize = 5;
// The magic byte and the id.
std::string header(int32_t schema_id);
struct Framed {
  int32_t schema_id = 0;
  std::string_view payload;
};
// Throws SerdeError "Unknown magic byte!" (Confluent's text) or for fewer than 5 bytes.
Framed parse(std::string_view bytes);
}  // namespace wire

class Serializer {
 public:
  // `schema` is the writer's schema text; it may be empty with use_latest_version, which then
  // writes with the subject's latest schema. Several topics may share one serializer.
  Serializer(std::shared_ptr<SchemaRegistryClient> client, SerdeConfig config, Format format,
             std::string schema, bool is_key, std::vector<SchemaReference> references = {});
  ~Serializer();
  Serializer(Serializer&&) noexcept;
  Serializer& operator=(Serializer&&) noexcept;

  // The framed bytes. The first value for a topic registers (or looks up) the schema; later
  // ones use the cached id.
  std::string serialize(std::string_view topic, const nlohmann::json& value);
  // The id values for `topic` are written with, registering or looking it up first if needed (a
  // tool checks the registry this way before it reads any value).
  int32_t schema_id(std::string_view topic);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class Deserializer {
 public:
  // With a reader schema, data is resolved from its writer's schema to it (Avro's schema
  // resolution); without, it is read as written.
  Deserializer(std::shared_ptr<SchemaRegistryClient> client, SerdeConfig config, Format format,
               bool is_key, std::string reader_schema = {});
  ~Deserializer();
  Deserializer(Deserializer&&) noexcept;
  Deserializer& operator=(Deserializer&&) noexcept;

  nlohmann::json deserialize(std::string_view topic, std::string_view bytes);
  // The same with record fields in schema order (for printing).
  nlohmann::ordered_json deserialize_ordered(std::string_view topic, std::string_view bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::registry
