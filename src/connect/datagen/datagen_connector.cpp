// DatagenConnector: its configs (Confluent's names and defaults, then ours) and one task config
// per task, each with its task.id.
#include "connect/datagen/quickstarts.h"
#include "oxbow/connect/datagen.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect {

namespace {

// Names a quickstart we have (any case, as Confluent's valueOf(toUpperCase())), or nothing.
ValidatorPtr quickstartValidator() {
  return LambdaValidator::with(
      [](const std::string& name, const ParsedValue& value) {
        const auto* text = std::get_if<std::string>(&value);
        if (text == nullptr || text->empty() || datagen::findQuickstart(*text) != nullptr) return;
        std::string names;
        for (const std::string& known : datagen::quickstartNames()) {
          names += (names.empty() ? "" : ", ") + known;
        }
        throw ConfigException(name, *text, "Quickstart must be one of: " + names);
      },
      [] {
        std::string names;
        for (const std::string& known : datagen::quickstartNames()) {
          names += (names.empty() ? "[" : ", ") + known;
        }
        return names + "]";
      });
}

// Generated data comes from the built-in quickstarts only: an Avro schema file with Confluent's
// arg.properties annotations is not read.
ValidatorPtr noSchemaFile() {
  return LambdaValidator::with(
      [](const std::string& name, const ParsedValue& value) {
        const auto* text = std::get_if<std::string>(&value);
        if (text != nullptr && !text->empty()) {
          throw ConfigException(name, *text, "schema files are not supported; use quickstart");
        }
      },
      [] { return std::string("empty"); });
}

}  // namespace

const ConfigDef& DatagenConnector::configDef() {
  using Type = ConfigDef::Type;
  using Importance = ConfigDef::Importance;
  static const ConfigDef definition = [] {
    ConfigDef def;
    def.define(std::string(KAFKA_TOPIC_CONFIG), Type::STRING, DefaultValue(),
               NonEmptyString::create(), Importance::HIGH, "Topic to write to")
        .define(std::string(MAX_INTERVAL_CONFIG), Type::LONG, int64_t{500}, Range::atLeast(0),
                Importance::HIGH, "Max interval between messages (ms)")
        .define(std::string(ITERATIONS_CONFIG), Type::INT, 1000000, Importance::HIGH,
                "Number of messages to send from each task, or less than 1 for unlimited")
        .define(std::string(SCHEMA_FILENAME_CONFIG), Type::STRING, "", noSchemaFile(),
                Importance::HIGH, "Filename of schema to use (not supported: use quickstart)")
        .define(std::string(SCHEMA_KEYFIELD_CONFIG), Type::STRING, "", Importance::HIGH,
                "Name of field to use as the message key; the quickstart's key field when empty")
        .define(std::string(QUICKSTART_CONFIG), Type::STRING, "", quickstartValidator(),
                Importance::HIGH, "Name of quickstart to use")
        .define(std::string(RANDOM_SEED_CONFIG), Type::LONG, nullptr, Importance::LOW,
                "Seed of the random values, for the same data on every run; random when unset")
        .define(std::string(RECORDS_PER_SECOND_CONFIG), Type::DOUBLE, 0.0, Range::atLeast(0),
                Importance::LOW,
                "Oxbow's: records each task writes per second, evenly paced; 0 leaves the pace to "
                "max.interval")
        .define(std::string(KEY_SPACE_CONFIG), Type::LONG, int64_t{0}, Range::atLeast(0),
                Importance::LOW,
                "Oxbow's: how many distinct keys: the key field's value drawn uniformly from that "
                "many; 0 keeps the quickstart's own values")
        .define(std::string(BATCH_SIZE_CONFIG), Type::INT, 1, Range::atLeast(1), Importance::LOW,
                "Oxbow's: the most records one poll returns (Confluent's returns one)");
    return def;
  }();
  return definition;
}

std::string DatagenConnector::version() const {
  return std::string(connectVersion());
}

void DatagenConnector::start(const Props& props) {
  AbstractConfig config(configDef(), props);
  if (config.getString(std::string(QUICKSTART_CONFIG)).empty()) {
    throw ConfigException(std::string(QUICKSTART_CONFIG), "",
                          "a quickstart is required (schema files are not supported)");
  }
  props_ = props;
}

TaskClass DatagenConnector::taskClass() const {
  return TaskClass::of<DatagenTask>(std::string(DatagenTask::CLASS_NAME));
}

std::vector<Props> DatagenConnector::taskConfigs(int maxTasks) {
  std::vector<Props> configs;
  for (int i = 0; i < maxTasks; ++i) {
    Props config = props_;
    config[std::string(DatagenTask::TASK_ID)] = std::to_string(i);
    configs.push_back(std::move(config));
  }
  return configs;
}

void registerDatagenConnector(ConnectorPlugins& plugins) {
  plugins.add(std::string(DatagenConnector::CLASS_NAME),
              [] { return std::make_unique<DatagenConnector>(); });
}

}  // namespace oxbow::connect
