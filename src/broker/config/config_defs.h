#pragma once
// The configuration keys Oxbow knows, with Kafka's names, types and defaults: one table for the
// broker (server.properties) and one for topics, where each topic key may name the broker key
// that supplies its default (retention.ms <- log.retention.ms).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace oxbow::broker {

// Kafka's ConfigType numbering as DescribeConfigs v3+ sends it.
enum class ConfigType : int8_t {
  kBoolean = 1,
  kString = 2,
  kInt = 3,
  kShort = 4,
  kLong = 5,
  kDouble = 6,
  kList = 7,
  kPassword = 9,
};

// Kafka's ConfigSource numbering as DescribeConfigs v1+ sends it.
// The resource types of DescribeConfigs, AlterConfigs and IncrementalAlterConfigs.
constexpr int8_t kResourceTopic = 2;
constexpr int8_t kResourceBroker = 4;

enum class ConfigSource : int8_t {
  kDynamicTopic = 1,
  kDynamicBroker = 2,
  kDynamicDefaultBroker = 3,
  kStaticBroker = 4,
  kDefault = 5,
};

struct ConfigDef {
  const char* name;
  ConfigType type;
  const char* default_value;   // nullptr: no default (null)
  int64_t min_value;           // numbers only
  const char* valid_values;    // comma-separated choices (strings, lists, numbers), or nullptr
  const char* broker_synonym;  // topic keys only: broker key supplying the default
  bool read_only;              // cannot be changed without a restart
  const char* doc;
  int64_t max_value = INT64_MAX;  // numbers only
};

std::span<const ConfigDef> broker_config_defs();
std::span<const ConfigDef> topic_config_defs();
const ConfigDef* find_broker_config(std::string_view name);
const ConfigDef* find_topic_config(std::string_view name);
// The broker key a per-listener key overrides: listener.name.<l>.<key> overrides <key>, and
// listener.name.<l>.<mechanism>.<key> does for Kafka's per-mechanism keys (sasl.jaas.config,
// connections.max.reauth.ms, ...). Empty for any other key.
std::string listener_base_key(std::string_view name);
// The listener a per-listener key is for (as written in the key: lower case in Kafka's
// convention); empty for any other key.
std::string listener_of_key(std::string_view name);
// A per-listener key Oxbow checks at start-up: the definition of the key it overrides
// (max.connections, max.connection.creation.rate, sasl.enabled.mechanisms,
// connections.max.reauth.ms), else nullptr.
const ConfigDef* find_listener_config(std::string_view name);
// Of those, the ones that can change at run time (Kafka's cluster-level listener configs: the
// connection limits).
bool is_dynamic_listener_config(std::string_view name);

// Checks `value` against the definition; returns a message naming the key when invalid: `key`
// when given (a per-listener key), else the definition's name.
std::optional<std::string> validate_config_value(const ConfigDef& def, std::string_view value,
                                                 std::string_view key = {});

}  // namespace oxbow::broker
