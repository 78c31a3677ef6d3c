// Connectors checked, their contexts and their tasks made, as Kafka's AbstractHerder and Worker
// do for both kinds of worker.
#include "connect/runtime/worker_tasks.h"

#include <spdlog/spdlog.h>

#include "connect/runtime/herder.h"
#include "connect/runtime/sink_runner.h"
#include "connect/runtime/source_runner.h"
#include "oxbow/connect/config_def.h"

namespace oxbow::connect::runtime {

namespace {

// Every validation error of the config, as "NAME: message" (for the file's message) or as
// Connect's REST message lists them (the message alone).
std::vector<std::string> configErrors(const Connector& connector, const Properties& props,
                                      bool withNames) {
  std::vector<std::string> errors;
  Config validated = connector.validate(props);
  for (const ConfigValue& value : validated.configValues()) {
    for (const std::string& message : value.errorMessages) {
      errors.push_back(withNames ? value.name + ": " + message : message);
    }
  }
  return errors;
}

void checkValid(const Connector& connector, const Properties& props, const std::string& name,
                bool fromRest, const std::vector<std::string>& more) {
  std::vector<std::string> errors = configErrors(connector, props, !fromRest);
  errors.insert(errors.end(), more.begin(), more.end());
  if (errors.empty()) return;
  std::string count = std::to_string(errors.size());
  if (!fromRest) {
    std::string text;
    for (const std::string& error : errors) text += "\n  " + error;
    throw ConnectException("Connector configuration for " + name + " is invalid and contains " +
                           count + " error(s):" + text);
  }
  // AbstractHerder's message for a config the REST API refuses.
  std::string text =
      "Connector configuration is invalid and contains the following " + count + " error(s):";
  for (const std::string& error : errors) text += "\n" + error;
  throw BadRequestException(text +
                            "\nYou can also find the above list of errors at the endpoint "
                            "`/connector-plugins/{connectorType}/config/validate`");
}

}  // namespace

CheckedConnector checkConnector(const ConnectorPlugins& plugins, const Properties& props,
                                bool fromRest, const WorkerConfig* worker) {
  auto cls = props.find("connector.class");
  if (cls == props.end()) {
    throw BadRequestException(
        "Missing required configuration \"connector.class\" which has no default value.");
  }
  CheckedConnector checked;
  try {
    checked.plugin = &plugins.connectorPlugin(cls->second);
    ConnectorKind kind =
        checked.plugin->type == PluginType::SOURCE ? ConnectorKind::SOURCE : ConnectorKind::SINK;
    checked.config = ConnectorConfig::parse(props, kind);
  } catch (const ConnectException& e) {
    if (fromRest) throw BadRequestException(e.what());
    throw;
  }
  std::unique_ptr<Connector> probe = checked.plugin->create();
  std::vector<std::string> policy;
  if (worker != nullptr) policy = clientOverrideErrors(*worker, checked.config);
  checkValid(*probe, checked.config.props, checked.config.name, fromRest, policy);
  return checked;
}

WorkerConnectorContext::WorkerConnectorContext(std::string name, OffsetBackingStore& offsets,
                                               std::function<void()> onReconfigure,
                                               std::function<void(std::string)> onError)
    : name_(std::move(name)),
      reader_(offsets, name_),
      onReconfigure_(std::move(onReconfigure)),
      onError_(std::move(onError)) {}

void WorkerConnectorContext::requestTaskReconfiguration() {
  onReconfigure_();
}

void WorkerConnectorContext::raiseError(std::exception_ptr error) {
  std::string message = exceptionMessage(error);
  spdlog::error("connect: connector {} failed: {}", name_, message);
  onError_(message);
}

std::unique_ptr<TaskRunner> makeTaskRunner(const WorkerConfig& worker,
                                           const ConnectorConfig& config,
                                           const ConnectorPlugin& plugin, Connector& connector,
                                           int id, Props taskProps, OffsetBackingStore& offsets,
                                           ActiveTopics* topics,
                                           std::optional<SourceTransactions> transactions) {
  TaskClass taskClass = connector.taskClass();
  taskProps["task.class"] = taskClass.name;
  std::unique_ptr<Task> task = taskClass.create();
  std::unique_ptr<TaskRunner> runner;
  if (plugin.type == PluginType::SOURCE) {
    auto* source = dynamic_cast<SourceTask*>(task.get());
    if (source == nullptr) throw ConnectException(taskClass.name + " is not a SourceTask");
    task.release();
    runner = std::make_unique<SourceTaskRunner>(worker, config, id, taskProps,
                                                std::unique_ptr<SourceTask>(source), offsets,
                                                std::move(transactions));
  } else {
    auto* sink = dynamic_cast<SinkTask*>(task.get());
    if (sink == nullptr) throw ConnectException(taskClass.name + " is not a SinkTask");
    task.release();
    if (!config.topics.empty()) taskProps["topics"] = config.props.at("topics");
    if (!config.topicsRegex.empty()) taskProps["topics.regex"] = config.topicsRegex;
    runner = std::make_unique<SinkTaskRunner>(worker, config, id, taskProps,
                                              std::unique_ptr<SinkTask>(sink));
  }
  if (worker.topicTrackingEnable && topics != nullptr) runner->trackTopics(topics);
  return runner;
}

}  // namespace oxbow::connect::runtime
