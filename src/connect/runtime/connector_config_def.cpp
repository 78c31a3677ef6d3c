// ConnectorConfig's and SinkConnectorConfig's definitions, names, defaults, groups and orders as
// Kafka defines them (documentation in our words).
#include "connect/runtime/connector_config_def.h"

#include <re2/re2.h>

#include <algorithm>

namespace oxbow::connect::runtime {

namespace {

using T = ConfigDef::Type;
using I = ConfigDef::Importance;
using W = ConfigDef::Width;

const std::string kCommon = "Common";
const std::string kErrors = "Error Handling";

void defineCommon(ConfigDef& def, ConnectorKind kind) {
  def.define("name", T::STRING, DefaultValue(), NonEmptyString::create(), I::HIGH,
             "The connector's name, unique in the worker.", kCommon, 1, W::MEDIUM, "Connector name")
      .define("connector.class", T::STRING, DefaultValue(), nullptr, I::HIGH,
              "The connector's class name or alias.", kCommon, 2, W::LONG, "Connector class")
      .define("tasks.max", T::INT, 1, Range::atLeast(1), I::HIGH,
              "At most this many tasks run the connector.", kCommon, 3, W::SHORT, "Tasks max");
  // A sink's topics come before the converters, as SinkConnectorConfig orders them.
  int order = 3;
  if (kind == ConnectorKind::SINK) {
    def.define("topics", T::LIST, std::vector<std::string>{}, nullptr, I::HIGH,
               "The topics to consume (or topics.regex).", kCommon, 4, W::LONG, "Topics")
        .define("topics.regex", T::STRING, "", nullptr, I::HIGH,
                "A regular expression naming the topics to consume (or topics).", kCommon, 5,
                W::LONG, "Topics regex");
    order = 5;
  }
  def.define("key.converter", T::CLASS, nullptr, nullptr, I::LOW,
             "The connector's key converter, instead of the worker's.", kCommon, order + 1,
             W::SHORT, "Key converter class")
      .define("value.converter", T::CLASS, nullptr, nullptr, I::LOW,
              "The connector's value converter, instead of the worker's.", kCommon, order + 2,
              W::SHORT, "Value converter class")
      .define("header.converter", T::CLASS, nullptr, nullptr, I::LOW,
              "The connector's header converter, instead of the worker's.", kCommon, order + 3,
              W::SHORT, "Header converter class")
      .define("transforms", T::LIST, std::vector<std::string>{}, nullptr, I::LOW,
              "The aliases of the transforms applied to each record, in order.", "Transforms", 0,
              W::LONG, "Transforms")
      .define("predicates", T::LIST, std::vector<std::string>{}, nullptr, I::LOW,
              "The aliases of the predicates the transforms may use.", "Predicates", 0, W::LONG,
              "Predicates");
}

void defineErrors(ConfigDef& def, ConnectorKind kind) {
  def.define("errors.retry.timeout", T::LONG, int64_t{0}, nullptr, I::MEDIUM,
             "How long, in milliseconds, a failed operation is tried again: 0 (the default) "
             "never, -1 without end.",
             kErrors, 1, W::MEDIUM, "Retry Timeout for Errors")
      .define("errors.retry.delay.max.ms", T::LONG, int64_t{60000}, nullptr, I::MEDIUM,
              "The longest wait, in milliseconds, between two attempts; past it the wait is "
              "random up to this limit.",
              kErrors, 2, W::MEDIUM, "Maximum Delay Between Retries for Errors")
      .define("errors.tolerance", T::STRING, "none", ValidString::in({"none", "all"}), I::MEDIUM,
              "none (the default): the first error fails the task; all: records that fail are "
              "skipped.",
              kErrors, 3, W::SHORT, "Error Tolerance")
      .define("errors.log.enable", T::BOOLEAN, false, nullptr, I::MEDIUM,
              "Whether each error, with the stage and class that failed, is written to the "
              "worker's log.",
              kErrors, 4, W::SHORT, "Log Errors")
      .define("errors.log.include.messages", T::BOOLEAN, false, nullptr, I::MEDIUM,
              "Whether the log line names the failed record: a sink record's topic, partition, "
              "offset and timestamp; a source record's key, value, headers and offsets.",
              kErrors, 5, W::SHORT, "Log Error Details");
  if (kind != ConnectorKind::SINK) return;
  def.define("errors.deadletterqueue.topic.name", T::STRING, "", nullptr, I::MEDIUM,
             "The topic that receives, as they were read, the records that failed in the "
             "converters, transforms or the task; empty (the default): none.",
             kErrors, 6, W::MEDIUM, "Dead Letter Queue Topic Name")
      .define("errors.deadletterqueue.topic.replication.factor", T::SHORT, int16_t{3}, nullptr,
              I::MEDIUM,
              "The replication factor of the dead letter queue topic when it is created.", kErrors,
              7, W::MEDIUM, "Dead Letter Queue Topic Replication Factor")
      .define("errors.deadletterqueue.context.headers.enable", T::BOOLEAN, false, nullptr,
              I::MEDIUM,
              "Whether a dead letter queue record carries the failure's context in headers "
              "named __connect.errors.*.",
              kErrors, 8, W::MEDIUM, "Enable Error Context Headers");
}

void addError(std::vector<ConfigValue>& values, const std::string& name,
              const std::string& message) {
  auto found = std::find_if(values.begin(), values.end(),
                            [&](const ConfigValue& value) { return value.name == name; });
  if (found == values.end()) {
    values.push_back(ConfigValue{.name = name});
    found = values.end() - 1;
  }
  found->errorMessages.push_back(message);
}

std::string trimmed(const Properties& config, const char* name) {
  auto found = config.find(name);
  return found == config.end() ? "" : std::string(trim(found->second));
}

void dlqTopicErrors(const Properties& config, std::vector<ConfigValue>& values) {
  std::string dlq = trimmed(config, "errors.deadletterqueue.topic.name");
  if (dlq.empty()) return;
  std::string topics = trimmed(config, "topics");
  std::vector<std::string> list;
  std::string shown;  // as Java prints the parsed list: [a, b]
  for (const std::string& item : split(topics, ',')) {
    std::string topic(trim(item));
    if (topic.empty() || std::find(list.begin(), list.end(), topic) != list.end()) continue;
    shown += (list.empty() ? "" : ", ") + topic;
    list.push_back(topic);
  }
  if (std::find(list.begin(), list.end(), dlq) != list.end()) {
    addError(values, "topics",
             "The DLQ topic '" + dlq + "' may not be included in the list of topics ('topics=[" +
                 shown + "]') consumed by the connector");
  }
  std::string regex = trimmed(config, "topics.regex");
  if (!regex.empty() && RE2::FullMatch(dlq, RE2(regex, RE2::Quiet))) {
    addError(values, "topics.regex",
             "The DLQ topic '" + dlq +
                 "' may not be matched by the regex for the topics "
                 "('topics.regex=" +
                 regex + "') consumed by the connector");
  }
}

}  // namespace

ConfigDef connectorConfigDef(ConnectorKind kind) {
  ConfigDef def;
  defineCommon(def, kind);
  defineErrors(def, kind);
  return def;
}

void sinkConfigErrors(const Properties& config, std::vector<ConfigValue>& values) {
  bool topics = !trimmed(config, "topics").empty();
  bool regex = !trimmed(config, "topics.regex").empty();
  if (topics == regex) {
    std::string message =
        topics ? "topics and topics.regex are mutually exclusive options, but both are set."
               : "Must configure one of topics or topics.regex";
    addError(values, "topics", message);
    addError(values, "topics.regex", message);
  }
  dlqTopicErrors(config, values);
}

ErrorsConfig parseErrorsConfig(const Properties& props, ConnectorKind kind) {
  ConfigDef def;
  defineErrors(def, kind);
  AbstractConfig parsed(def, props);
  ErrorsConfig errors;
  errors.retryTimeoutMs = parsed.getLong("errors.retry.timeout");
  errors.retryMaxDelayMs = parsed.getLong("errors.retry.delay.max.ms");
  errors.toleranceAll = parsed.getString("errors.tolerance") == "all";
  errors.logEnable = parsed.getBoolean("errors.log.enable");
  errors.logIncludeMessages = parsed.getBoolean("errors.log.include.messages");
  if (kind == ConnectorKind::SINK) {
    errors.dlqTopic = std::string(trim(parsed.getString("errors.deadletterqueue.topic.name")));
    errors.dlqReplicationFactor =
        parsed.getShort("errors.deadletterqueue.topic.replication.factor");
    errors.dlqContextHeaders = parsed.getBoolean("errors.deadletterqueue.context.headers.enable");
  }
  return errors;
}

}  // namespace oxbow::connect::runtime
