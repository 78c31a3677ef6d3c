// Worker and connector properties: Kafka Connect's names, defaults and checks.
#include "connect/runtime/worker_config.h"

#include <fstream>
#include <sstream>

#include "connect/runtime/connector_config_def.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

namespace {

const std::string* find(const Properties& props, const std::string& name) {
  auto it = props.find(name);
  return it == props.end() ? nullptr : &it->second;
}

}  // namespace

std::string required(const Properties& props, const std::string& name) {
  const std::string* value = find(props, name);
  if (value == nullptr || trim(*value).empty()) {
    throw ConnectException("Missing required configuration \"" + name +
                           "\" which has no default value.");
  }
  return std::string(trim(*value));
}

int64_t longConfig(const Properties& props, const std::string& name, int64_t fallback,
                   int64_t atLeast) {
  const std::string* text = find(props, name);
  if (text == nullptr) return fallback;
  std::optional<int64_t> value = parse_int64(trim(*text));
  if (!value) {
    throw ConnectException("Invalid value " + *text + " for configuration " + name +
                           ": Not a number of type LONG");
  }
  if (*value < atLeast) {
    throw ConnectException("Invalid value " + *text + " for configuration " + name +
                           ": Value must be at least " + std::to_string(atLeast));
  }
  return *value;
}

bool boolConfig(const Properties& props, const std::string& name, bool fallback) {
  const std::string* text = find(props, name);
  if (text == nullptr) return fallback;
  std::string value = ascii_lower(std::string(trim(*text)));
  if (value != "true" && value != "false") {
    throw ConnectException("Invalid value " + *text + " for configuration " + name +
                           ": Expected value to be either true or false");
  }
  return value == "true";
}

namespace {

Properties withPrefix(const Properties& props, const std::string& prefix) {
  Properties out;
  for (auto it = props.lower_bound(prefix); it != props.end() && it->first.starts_with(prefix);
       ++it) {
    out.emplace(it->first.substr(prefix.size()), it->second);
  }
  return out;
}

std::vector<std::string> nonEmptyList(const std::string& text) {
  std::vector<std::string> out;
  for (std::string& item : split(text, ',')) {
    if (!item.empty()) out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

WorkerConfig WorkerConfig::parse(const Properties& props, bool standalone) {
  WorkerConfig config;
  config.props = props;
  if (const std::string* servers = find(props, "bootstrap.servers")) {
    config.bootstrapServers = std::string(trim(*servers));
  }
  required(props, "key.converter");
  required(props, "value.converter");
  if (standalone) config.offsetFile = required(props, "offset.storage.file.filename");
  config.offsetFlushIntervalMs =
      longConfig(props, "offset.flush.interval.ms", DEFAULT_OFFSET_FLUSH_INTERVAL_MS, 0);
  config.taskShutdownTimeoutMs =
      longConfig(props, "task.shutdown.graceful.timeout.ms", DEFAULT_SHUTDOWN_TIMEOUT_MS, 0);
  config.producerOverrides = withPrefix(props, "producer.");
  config.consumerOverrides = withPrefix(props, "consumer.");
  if (const std::string* policy = find(props, "connector.client.config.override.policy")) {
    std::string value(trim(*policy));
    if (value != "All" && value != "Principal" && value != "None") {
      throw ConnectException("Invalid value " + value +
                             " for configuration connector.client.config.override.policy: "
                             "String must be one of: All, Principal, None");
    }
    config.clientOverridePolicy = value;
  }
  config.topicTrackingEnable = boolConfig(props, "topic.tracking.enable", true);
  config.topicTrackingAllowReset = boolConfig(props, "topic.tracking.allow.reset", true);
  if (const std::string* path = find(props, "plugin.path")) config.pluginPath = nonEmptyList(*path);
  return config;
}

ConnectorConfig ConnectorConfig::parse(const Properties& props, ConnectorKind kind) {
  ConnectorConfig config;
  config.props = props;
  config.name = required(props, "name");
  config.connectorClass = required(props, "connector.class");
  config.tasksMax = static_cast<int>(longConfig(props, "tasks.max", 1, 1));
  config.producerOverrides = withPrefix(props, "producer.override.");
  config.consumerOverrides = withPrefix(props, "consumer.override.");
  config.adminOverrides = withPrefix(props, "admin.override.");
  try {
    config.errors = parseErrorsConfig(props, kind);
  } catch (const ConfigException& e) {
    throw ConnectException(e.what());
  }
  if (kind == ConnectorKind::SOURCE) return config;
  const std::string* topics = find(props, "topics");
  const std::string* regex = find(props, "topics.regex");
  if (topics != nullptr) config.topics = nonEmptyList(*topics);
  if (regex != nullptr) config.topicsRegex = std::string(trim(*regex));
  bool hasTopics = !config.topics.empty();
  bool hasRegex = !config.topicsRegex.empty();
  if (hasTopics && hasRegex) {
    throw ConnectException(
        "topics and topics.regex are mutually exclusive options, but both are set.");
  }
  if (!hasTopics && !hasRegex) {
    throw ConnectException("Must configure one of topics or topics.regex");
  }
  std::vector<ConfigValue> values;
  sinkConfigErrors(props, values);  // the dead letter queue must not be one of the topics
  for (const ConfigValue& value : values) {
    if (!value.errorMessages.empty()) throw ConnectException(value.errorMessages.front());
  }
  return config;
}

std::vector<std::string> clientOverrideErrors(const WorkerConfig& worker,
                                              const ConnectorConfig& connector) {
  std::vector<std::string> errors;
  // Principal lets a connector authenticate as itself, nothing more (Kafka's
  // PrincipalConnectorClientConfigOverridePolicy).
  auto allowed = [&](const std::string& name) {
    if (worker.clientOverridePolicy == "All") return true;
    if (worker.clientOverridePolicy == "None") return false;
    return name == "sasl.jaas.config" || name == "sasl.mechanism" || name == "security.protocol";
  };
  auto check = [&](const Properties& overrides, const std::string& prefix) {
    for (const auto& [name, value] : overrides) {
      if (allowed(name)) continue;
      errors.push_back("The '" + worker.clientOverridePolicy + "' policy does not allow '" +
                       prefix + name + "' to be overridden in the connector configuration.");
    }
  };
  check(connector.producerOverrides, "producer.override.");
  check(connector.consumerOverrides, "consumer.override.");
  check(connector.adminOverrides, "admin.override.");
  return errors;
}

std::unique_ptr<Converter> connectorConverter(const WorkerConfig& worker,
                                              const ConnectorConfig& connector, bool isKey) {
  const std::string property = isKey ? "key.converter" : "value.converter";
  const Properties& source = connector.props.contains(property) ? connector.props : worker.props;
  ConfigMap configs(source.begin(), source.end());
  return ConverterRegistry::instance().configured(configs, property, isKey);
}

std::string connectorConverterClass(const WorkerConfig& worker, const ConnectorConfig& connector,
                                    bool isKey) {
  const std::string property = isKey ? "key.converter" : "value.converter";
  const Properties& source = connector.props.contains(property) ? connector.props : worker.props;
  auto found = source.find(property);
  if (found == source.end()) return "null";
  std::string name(trim(found->second));
  for (const std::string& full : ConverterRegistry::instance().classNames()) {
    std::string simple = full.substr(full.rfind('.') + 1);
    if (name == full || name == simple || name + "Converter" == simple) return full;
  }
  return name;
}

TransformationChain connectorTransforms(const ConnectorConfig& connector) {
  return TransformationChain::fromConnectorConfig(connector.props);
}

Properties readPropertiesFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConnectException("Could not read properties file " + path);
  std::stringstream text;
  text << in.rdbuf();
  Properties props;
  if (std::optional<std::string> error = parse_properties(text.str(), props)) {
    throw ConnectException(path + ": " + *error);
  }
  return props;
}

}  // namespace oxbow::connect::runtime
