#pragma once
// Serializers and deserializers in Confluent's wire format, interchangeable with Confluent's
// KafkaAvroSerializer, KafkaJsonSchemaSerializer and KafkaProtobufSerializer (and their
// deserializers, and the Python, Go and .NET ones built on the same format):
//
//   byte 0      magic byte 0
//   bytes 1..4  the schema's registry id, big-endian
//   then        AVRO: the datum's Avro binary encoding (for the schema "bytes", the raw bytes);
//               JSON: the value's compact UTF-8 JSON text;
//               PROTOBUF: message indexes (zig-zag varints; [0] is the single byte 0), then the
//               message's binary encoding
//
// Values are nlohmann::json:
// - AVRO: Avro's JSON encoding (see src/registry/avro/binary.h): unions wrapped as
//   {"<type>": value} except null, bytes as strings of code points 0-255. A serializer also takes
//   a union's value unwrapped when one branch fits.
// - JSON: the document itself. As Confluent's, values are validated against the schema only
//   with json.fail.invalid.schema=true (default false), by the serializer and the deserializer.
// - PROTOBUF: the message in Protobuf's JSON mapping (proto3 JSON: lowerCamel names or the
//   .proto names, 64-bit integers as strings, bytes as base64, enums by name). The serializer
//   writes one message of the schema (by default its first); the deserializer reads the message
//   the indexes name and gives every field, those at their default value too (as Confluent's
//   console consumer prints them).
//
// Subject names for the record strategies: AVRO the record's full name, JSON the schema's root
// `title`, PROTOBUF the written message's full name.
//
// References: a Protobuf schema's imports that are not well-known files are looked up as
// Confluent's DefaultReferenceSubjectNameStrategy names them (subject = the import path, its
// latest version) unless references are given; they must be registered already. A JSON Schema's
// references are given explicitly (name = the URL its `$ref`s use).
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
  bool json_fail_invalid_schema = false;  // JSON: validate values against the schema
  SubjectNameStrategy key_subject_name_strategy = SubjectNameStrategy::kTopicName;
  SubjectNameStrategy value_subject_name_strategy = SubjectNameStrategy::kTopicName;

  // Confluent's names: those of ClientConfig::from_properties, auto.register.schemas,
  // use.latest.version, normalize.schemas, key.subject.name.strategy,
  // value.subject.name.strategy, json.fail.invalid.schema. A bad value throws SerdeError; unknown
  // names are ignored, as Confluent's serdes ignore them.
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
  // `message` (PROTOBUF only): the full name of the message values are written as (a name
  // without its package is found too); empty, the schema's first message.
  Serializer(std::shared_ptr<SchemaRegistryClient> client, SerdeConfig config, Format format,
             std::string schema, bool is_key, std::vector<SchemaReference> references = {},
             std::string message = {});
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
  // With a reader schema, AVRO data is resolved from its writer's schema to it (Avro's schema
  // resolution), and JSON is validated against it instead of the writer's schema (with
  // json.fail.invalid.schema); without, data is read as written. PROTOBUF takes none.
  Deserializer(std::shared_ptr<SchemaRegistryClient> client, SerdeConfig config, Format format,
               bool is_key, std::string reader_schema = {});
  ~Deserializer();
  Deserializer(Deserializer&&) noexcept;
  Deserializer& operator=(Deserializer&&) noexcept;

  nlohmann::json deserialize(std::string_view topic, std::string_view bytes);
  // The same with record fields in schema order (AVRO, PROTOBUF) or as written (JSON), for
  // printing.
  nlohmann::ordered_json deserialize_ordered(std::string_view topic, std::string_view bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::registry
