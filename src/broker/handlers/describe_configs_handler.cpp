// DescribeConfigs: each config's value, where it comes from, and its synonyms, as Kafka lists them.
#include <algorithm>
#include <set>

#include "broker/broker.h"
#include "broker/config/config_defs.h"
#include "broker/config/dynamic_configs.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/topic_registry.h"
#include "common/properties.h"
#include "protocol/errors.h"
#include "protocol/messages/describe_configs.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

using ConfigEntry = pr::DescribeConfigsResponse::DescribeConfigsResourceResult;
using Synonym = pr::DescribeConfigsResponse::DescribeConfigsSynonym;
using Resource = pr::DescribeConfigsRequest::DescribeConfigsResource;

// The definitions asked for, in the order asked (each once), or all of them.
std::vector<const ConfigDef*> wanted_defs(std::span<const ConfigDef> defs,
                                          const std::optional<std::vector<std::string>>& keys) {
  std::vector<const ConfigDef*> out;
  if (!keys || keys->empty()) {
    for (const auto& def : defs) out.push_back(&def);
    return out;
  }
  for (const auto& key : *keys) {
    for (const auto& def : defs) {
      if (key == def.name && std::find(out.begin(), out.end(), &def) == out.end()) {
        out.push_back(&def);
      }
    }
  }
  return out;
}

ConfigEntry make_entry(const ConfigDef& def, std::optional<std::string> value, ConfigSource source,
                       bool include_doc) {
  ConfigEntry e;
  e.name = def.name;
  e.value = std::move(value);
  e.read_only = def.read_only;
  e.is_default = source == ConfigSource::kDefault;
  e.config_source = static_cast<int8_t>(source);
  e.is_sensitive = def.type == ConfigType::kPassword;
  e.config_type = static_cast<int8_t>(def.type);
  if (e.is_sensitive) e.value = std::nullopt;
  if (include_doc) e.documentation = def.doc;
  return e;
}

// Broker keys that set one thing in different units, as KafkaConfig groups them (its
// brokerConfigSynonyms), the most precise first; a per-listener key and the key it overrides.
std::vector<std::string> key_family(const std::string& key) {
  if (auto base = listener_base_key(key); !base.empty()) return {key, base};
  if (key == "log.retention.ms" || key == "log.retention.minutes" || key == "log.retention.hours") {
    return {"log.retention.ms", "log.retention.minutes", "log.retention.hours"};
  }
  if (key == "log.roll.ms" || key == "log.roll.hours") return {"log.roll.ms", "log.roll.hours"};
  if (key == "log.roll.jitter.ms" || key == "log.roll.jitter.hours") {
    return {"log.roll.jitter.ms", "log.roll.jitter.hours"};
  }
  // Unset, the flush interval falls back on the scheduler's (not the other way round).
  if (key == "log.flush.interval.ms")
    return {"log.flush.interval.ms", "log.flush.scheduler.interval.ms"};
  return {key};
}

int64_t unit_ms(const std::string& key) {
  if (key.ends_with(".hours")) return 3600 * 1000;
  if (key.ends_with(".minutes")) return 60 * 1000;
  return 1;
}

// A family member's value in the unit of `key` (a retention of -2 hours is -1 ms, unbounded).
std::string in_unit_of(const std::string& key, const std::string& member,
                       const std::string& value) {
  if (unit_ms(member) == unit_ms(key)) return value;
  auto number = parse_int64(value);
  if (!number) return value;
  int64_t converted = *number * unit_ms(member) / unit_ms(key);
  return std::to_string(converted < 0 ? -1 : converted);
}

class BrokerLayers {
 public:
  BrokerLayers(const BrokerConfig& config, const DynamicLayers& dynamic)
      : layers_{{&dynamic.broker, ConfigSource::kDynamicBroker},
                {&dynamic.cluster_default, ConfigSource::kDynamicDefaultBroker},
                {&config.given, ConfigSource::kStaticBroker}} {}

  // Kafka's synonyms of a broker key: each layer in turn (this broker's dynamic value, the
  // cluster's dynamic default, server.properties, the built-in default), each with every key of
  // the family; then, as Kafka does, whatever comes before the key's own first entry is dropped.
  std::vector<Synonym> synonyms(const std::string& key, bool sensitive) const {
    auto family = key_family(key);
    std::vector<Synonym> chain;
    for (const auto& [values, source] : layers_) {
      for (const auto& name : family) {
        if (auto it = values->find(name); it != values->end()) {
          chain.push_back({name, sensitive ? std::nullopt : std::optional(it->second),
                           static_cast<int8_t>(source)});
        }
      }
    }
    for (const auto& name : family) {
      const ConfigDef* def = find_broker_config(name);
      if (def && def->default_value) {
        chain.push_back({name, def->default_value, static_cast<int8_t>(ConfigSource::kDefault)});
      }
    }
    auto own =
        std::find_if(chain.begin(), chain.end(), [&](const Synonym& s) { return s.name == key; });
    chain.erase(chain.begin(), own);
    return chain;
  }

  // What a topic inherits through broker key `key`: the first key of its family that a layer
  // sets (Kafka: ms before minutes before hours), else the first built-in default, in the unit
  // of `key`.
  std::optional<std::string> inherited(const std::string& key) const {
    auto family = key_family(key);
    for (const auto& name : family) {
      for (const auto& [values, source] : layers_) {
        if (auto it = values->find(name); it != values->end()) {
          return in_unit_of(key, name, it->second);
        }
      }
    }
    for (const auto& name : family) {
      const ConfigDef* def = find_broker_config(name);
      if (def && def->default_value) return in_unit_of(key, name, def->default_value);
    }
    return std::nullopt;
  }

 private:
  std::vector<std::pair<const std::map<std::string, std::string>*, ConfigSource>> layers_;
};

void describe_topic_configs(const BrokerLayers& layers, const TopicInfo& topic,
                            const Resource& resource, bool synonyms, bool docs,
                            pr::DescribeConfigsResponse::DescribeConfigsResult& result) {
  for (const ConfigDef* def : wanted_defs(topic_config_defs(), resource.configuration_keys)) {
    bool sensitive = def->type == ConfigType::kPassword;
    std::vector<Synonym> chain;
    std::optional<std::string> value =
        def->default_value ? std::optional<std::string>(def->default_value) : std::nullopt;
    if (auto it = topic.configs.find(def->name); it != topic.configs.end()) {
      value = it->second;
      chain.push_back({def->name, it->second, static_cast<int8_t>(ConfigSource::kDynamicTopic)});
    } else if (def->broker_synonym) {
      if (auto inherited = layers.inherited(def->broker_synonym)) value = inherited;
    }
    if (def->broker_synonym) {
      auto inherited = layers.synonyms(def->broker_synonym, sensitive);
      chain.insert(chain.end(), inherited.begin(), inherited.end());
    }
    auto source =
        chain.empty() ? ConfigSource::kDefault : static_cast<ConfigSource>(chain.front().source);
    auto entry = make_entry(*def, value, source, docs);
    entry.read_only = false;
    if (synonyms) entry.synonyms = std::move(chain);
    result.configs.push_back(std::move(entry));
  }
}

// The resource with an empty name is the cluster-wide default, which holds only its own layer.
void describe_cluster_default_configs(const DynamicLayers& dynamic, const Resource& resource,
                                      bool synonyms, bool docs,
                                      pr::DescribeConfigsResponse::DescribeConfigsResult& result) {
  for (const ConfigDef* def : wanted_defs(broker_config_defs(), resource.configuration_keys)) {
    auto it = dynamic.cluster_default.find(def->name);
    if (it == dynamic.cluster_default.end()) continue;
    auto entry = make_entry(*def, it->second, ConfigSource::kDynamicDefaultBroker, docs);
    if (synonyms) {
      bool sensitive = def->type == ConfigType::kPassword;
      entry.synonyms = {{def->name, sensitive ? std::nullopt : std::optional(it->second),
                         static_cast<int8_t>(ConfigSource::kDynamicDefaultBroker)}};
    }
    result.configs.push_back(std::move(entry));
  }
}

void describe_broker_configs(const BrokerLayers& layers, const Resource& resource, bool synonyms,
                             bool docs,
                             pr::DescribeConfigsResponse::DescribeConfigsResult& result) {
  for (const ConfigDef* def : wanted_defs(broker_config_defs(), resource.configuration_keys)) {
    auto chain = layers.synonyms(def->name, def->type == ConfigType::kPassword);
    std::optional<std::string> value =
        def->default_value ? std::optional<std::string>(def->default_value) : std::nullopt;
    auto source = ConfigSource::kDefault;
    if (!chain.empty()) {
      value = chain.front().value;
      source = static_cast<ConfigSource>(chain.front().source);
    }
    auto entry = make_entry(*def, value, source, docs);
    if (synonyms) entry.synonyms = std::move(chain);
    result.configs.push_back(std::move(entry));
  }
}

// The per-listener keys some layer sets, asked for or all. Kafka lists them among a broker's
// configs under their own names, typed as the key they override and sensitive when that is
// unknown, and read-only (its dynamic-config set holds only the unprefixed names).
// `cluster_default_only`: the cluster-wide default resource, which holds only its own layer.
void describe_listener_configs(const BrokerLayers& layers,
                               std::vector<const std::map<std::string, std::string>*> sources,
                               bool cluster_default_only, const Resource& resource, bool synonyms,
                               bool docs,
                               pr::DescribeConfigsResponse::DescribeConfigsResult& result) {
  std::set<std::string> keys;
  for (const auto* values : sources) {
    for (const auto& [key, value] : *values)
      if (!listener_of_key(key).empty()) keys.insert(key);
  }
  const auto& wanted = resource.configuration_keys;
  for (const auto& key : keys) {
    if (wanted && !wanted->empty() &&
        std::find(wanted->begin(), wanted->end(), key) == wanted->end())
      continue;
    const ConfigDef* base = find_broker_config(listener_base_key(key));
    bool sensitive = !base || base->type == ConfigType::kPassword;
    auto chain = layers.synonyms(key, sensitive);
    if (cluster_default_only) {
      std::erase_if(chain, [](const Synonym& s) {
        return s.source != static_cast<int8_t>(ConfigSource::kDynamicDefaultBroker);
      });
    }
    if (chain.empty()) continue;
    ConfigEntry entry;
    entry.name = key;
    entry.value = chain.front().value;
    entry.read_only = true;
    entry.is_default = false;
    entry.config_source = chain.front().source;
    entry.is_sensitive = sensitive;
    entry.config_type = base ? static_cast<int8_t>(base->type) : 0;  // 0: UNKNOWN
    if (docs && base) entry.documentation = base->doc;
    if (synonyms) entry.synonyms = std::move(chain);
    result.configs.push_back(std::move(entry));
  }
}

}  // namespace

void handle_describe_configs(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeConfigsRequest request;
  request.decode(body, v);
  const auto& config = ctx.broker.config();
  const auto dynamic = ctx.broker.dynamic_configs().snapshot();
  const BrokerLayers layers(config, dynamic);
  pr::DescribeConfigsResponse response;
  for (const auto& resource : request.resources) {
    auto& result = response.results.emplace_back();
    result.resource_type = resource.resource_type;
    result.resource_name = resource.resource_name;
    if (resource.resource_type == kResourceTopic) {
      if (!authorized(ctx, AclOperation::kDescribeConfigs, ResourceType::kTopic,
                      resource.resource_name)) {
        result.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      auto topic = ctx.broker.topics().find(resource.resource_name);
      if (!topic) {
        result.error_code = pr::code(ErrorCode::kUnknownTopicOrPartition);
        result.error_message = "Topic " + resource.resource_name + " does not exist.";
        continue;
      }
      describe_topic_configs(layers, *topic, resource, request.include_synonyms,
                             request.include_documentation, result);
    } else if (resource.resource_type == kResourceBroker) {
      if (!authorized_on_cluster(ctx, AclOperation::kDescribeConfigs)) {
        result.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
        continue;
      }
      if (resource.resource_name.empty()) {
        describe_cluster_default_configs(dynamic, resource, request.include_synonyms,
                                         request.include_documentation, result);
        describe_listener_configs(layers, {&dynamic.cluster_default}, true, resource,
                                  request.include_synonyms, request.include_documentation, result);
      } else if (resource.resource_name != std::to_string(config.node_id)) {
        result.error_code = pr::code(ErrorCode::kInvalidRequest);
        result.error_message = "Unexpected broker id, expected " + std::to_string(config.node_id);
      } else {
        describe_broker_configs(layers, resource, request.include_synonyms,
                                request.include_documentation, result);
        describe_listener_configs(
            layers, {&dynamic.broker, &dynamic.cluster_default, &config.given}, false, resource,
            request.include_synonyms, request.include_documentation, result);
      }
    } else {
      result.error_code = pr::code(ErrorCode::kInvalidRequest);
      result.error_message = "Unsupported resource type " + std::to_string(resource.resource_type);
    }
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
