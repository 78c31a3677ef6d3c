#pragma once
// The records of the `_schemas` topic (one partition, compacted), in the JSON Confluent's registry
// writes, so that either registry can start from a topic the other wrote.
//
// Keys, UTF-8 JSON, in this key order (compaction keys on the exact bytes):
//   {"keytype":"SCHEMA","subject":"s","version":1,"magic":1}
//   {"keytype":"CONFIG","subject":"s","magic":0}      global: {"keytype":"CONFIG","magic":0}
//   {"keytype":"MODE","subject":"s","magic":0}        global: {"keytype":"MODE","magic":0}
//   {"keytype":"DELETE_SUBJECT","subject":"s","magic":0}
//   {"keytype":"CLEAR_SUBJECT","subject":"s","magic":0}
//   {"keytype":"NOOP","magic":0}
// Read in any key order; a global key's subject may also be written null (registries before 6.2,
// Karapace). A SCHEMA key's magic is 0 or 1.
//
// Values (null: a tombstone, which removes the key):
//   SCHEMA          {"subject":"s","version":1,"id":1,"schemaType":"PROTOBUF",
//                    "references":[{"name":"n","subject":"r","version":1}],"schema":"...",
//                    "deleted":false}    (schemaType left out for AVRO, references when empty)
//   CONFIG          {"subject":"s","compatibilityLevel":"FULL", ...}   (other keys kept as read)
//   MODE            {"subject":"s","mode":"READONLY"}
//   DELETE_SUBJECT  {"subject":"s","version":3}     versions up to 3 are soft-deleted
//   CLEAR_SUBJECT   {"subject":"s"}
//   NOOP            null
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace oxbow::registry::store {

enum class KeyType { kSchema, kConfig, kMode, kDeleteSubject, kClearSubject, kNoop };
const char* key_type_name(KeyType type);

struct RecordKey {
  KeyType type = KeyType::kNoop;
  std::optional<std::string> subject;  // none: global (CONFIG, MODE) or NOOP
  int version = 0;                     // SCHEMA
  int magic = 0;                       // 1 for the SCHEMA keys written today, else 0
  bool operator<(const RecordKey& o) const;
  bool operator==(const RecordKey& o) const;
};

struct SchemaReference {
  std::string name, subject;
  int version = 0;
  bool operator==(const SchemaReference&) const = default;
};

struct SchemaValue {
  std::string subject;
  int version = 0;
  int id = 0;
  std::string schema_type = "AVRO";
  std::vector<SchemaReference> references;
  std::string schema;
  bool deleted = false;
};

struct ConfigValue {
  std::optional<std::string> subject;
  std::optional<std::string> compatibility_level;
  nlohmann::ordered_json other = nlohmann::ordered_json::object();  // normalize, alias, ...
};

struct ModeValue {
  std::optional<std::string> subject;
  std::string mode;
};

struct DeleteSubjectValue {
  std::string subject;
  int version = 0;
};

struct ClearSubjectValue {
  std::optional<std::string> subject;
};

using RecordValue =
    std::variant<SchemaValue, ConfigValue, ModeValue, DeleteSubjectValue, ClearSubjectValue>;

std::string encode_key(const RecordKey& key);
std::string encode_value(const RecordValue& value);

// A decoded record, or why it could not be: the message Confluent's reader gives where it has
// one ("Unknown schema registry key type : X", "Can't deserialize schema for the magic byte N").
template <class T>
struct Decoded {
  std::optional<T> value;
  std::string error;
};
Decoded<RecordKey> decode_key(std::string_view bytes);
// The value of a record whose key is `key`; nullopt bytes (a tombstone) decode to no value.
Decoded<RecordValue> decode_value(const RecordKey& key, std::string_view bytes);

}  // namespace oxbow::registry::store
