#pragma once
// A standalone worker's properties and a connector's, with Kafka Connect's names: what the
// runtime reads from WORKER.properties and each CONNECTOR.properties before it starts anything.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/properties.h"
#include "oxbow/connect/converter.h"
#include "oxbow/connect/transformation.h"

namespace oxbow::connect::runtime {

struct WorkerConfig {
  static constexpr int64_t DEFAULT_OFFSET_FLUSH_INTERVAL_MS = 60'000;
  static constexpr int64_t DEFAULT_SHUTDOWN_TIMEOUT_MS = 5'000;

  Properties props;  // as read, for the converters' prefixed configs
  std::string bootstrapServers = "localhost:9092";
  std::string offsetFile;  // offset.storage.file.filename
  int64_t offsetFlushIntervalMs = DEFAULT_OFFSET_FLUSH_INTERVAL_MS;
  int64_t taskShutdownTimeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS;
  // producer.* and consumer.*, prefix removed: librdkafka properties laid over the runtime's.
  Properties producerOverrides;
  Properties consumerOverrides;
  // connector.client.config.override.policy: what a connector's producer.override.*,
  // consumer.override.* and admin.override.* may set ("All", Kafka's default since 3.0,
  // "Principal": the security settings only, or "None").
  std::string clientOverridePolicy = "All";
  // KIP-558: whether tasks record the topics they use, and whether the REST API may reset them.
  bool topicTrackingEnable = true;
  bool topicTrackingAllowReset = true;
  // plugin.path: the directories connector plugins are loaded from (plugin_loader/).
  std::vector<std::string> pluginPath;

  // ConnectException naming the property for a missing or bad one (key.converter and
  // value.converter are required, as Kafka's WorkerConfig has them without a default, and a
  // standalone worker's offset.storage.file.filename).
  static WorkerConfig parse(const Properties& props, bool standalone = true);
};

enum class ConnectorKind { SOURCE, SINK };

// A connector's errors.* configs (ConnectorConfig's "Error Handling" group and, for sinks,
// SinkConnectorConfig's dead letter queue), with Kafka's defaults.
struct ErrorsConfig {
  int64_t retryTimeoutMs = 0;  // errors.retry.timeout; -1 retries forever
  int64_t retryMaxDelayMs = 60'000;
  bool toleranceAll = false;  // errors.tolerance=all, else none
  bool logEnable = false;
  bool logIncludeMessages = false;
  std::string dlqTopic;  // errors.deadletterqueue.topic.name, trimmed; empty: none
  int16_t dlqReplicationFactor = 3;
  bool dlqContextHeaders = false;
};

struct ConnectorConfig {
  Properties props;  // everything, passed to the connector as its config
  std::string name;
  std::string connectorClass;
  int tasksMax = 1;
  // producer.override.*, consumer.override.*, admin.override.*, prefix removed: laid over the
  // worker's producer.*, consumer.* and admin.* for this connector's clients.
  Properties producerOverrides;
  Properties consumerOverrides;
  Properties adminOverrides;
  std::vector<std::string> topics;  // a sink's `topics`
  std::string topicsRegex;          // or its `topics.regex`
  ErrorsConfig errors;

  // Checks the runtime's own configs (name, connector.class, tasks.max, a sink's topics or
  // topics.regex but not both, errors.*); the connector validates the rest.
  static ConnectorConfig parse(const Properties& props, ConnectorKind kind);
};

// The connector's client overrides the worker's policy refuses, each as Kafka's policies word it;
// empty when all are allowed.
std::vector<std::string> clientOverrideErrors(const WorkerConfig& worker,
                                              const ConnectorConfig& connector);

// The key or value converter of a connector: its own `key.converter` (configured with its own
// `key.converter.*`) when it names one, else the worker's.
std::unique_ptr<Converter> connectorConverter(const WorkerConfig& worker,
                                              const ConnectorConfig& connector, bool isKey);

// The full class name of that converter ("org.apache.kafka.connect.json.JsonConverter" for
// "JsonConverter" or "Json"), as error reports name it.
std::string connectorConverterClass(const WorkerConfig& worker, const ConnectorConfig& connector,
                                    bool isKey);

// The connector's `transforms`/`predicates` chain.
TransformationChain connectorTransforms(const ConnectorConfig& connector);

// A property's value with Kafka's messages for a missing or bad one (ConnectException).
std::string required(const Properties& props, const std::string& name);
int64_t longConfig(const Properties& props, const std::string& name, int64_t fallback,
                   int64_t atLeast);
bool boolConfig(const Properties& props, const std::string& name, bool fallback);

// Reads a properties file; ConnectException naming the file when it cannot be read or parsed.
Properties readPropertiesFile(const std::string& path);

}  // namespace oxbow::connect::runtime
