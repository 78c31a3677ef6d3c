// The plugin interface: the FileStream connectors' lifecycle and configs, the registry's class
// names and aliases, and the interface's defaults.
#include <gtest/gtest.h>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/file_stream.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect {
namespace {

class RecordingConnectorContext : public ConnectorContext {
 public:
  void requestTaskReconfiguration() override { ++reconfigurations; }
  void raiseError(std::exception_ptr error) override { errors.push_back(error); }
  int reconfigurations = 0;
  std::vector<std::exception_ptr> errors;
};

// The errors validate() reported for one config.
std::vector<std::string> errorsOf(const Config& config, const std::string& name) {
  for (const ConfigValue& value : config.configValues()) {
    if (value.name == name) return value.errorMessages;
  }
  ADD_FAILURE() << "no ConfigValue for " << name;
  return {};
}

size_t errorCount(const Config& config) {
  size_t count = 0;
  for (const ConfigValue& value : config.configValues()) count += value.errorMessages.size();
  return count;
}

template <class T>
std::string messageOf(T&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(ConnectorTest, FileSourceRunsOneTaskWithItsConfig) {
  RecordingConnectorContext context;
  FileStreamSourceConnector connector;
  connector.initialize(context);
  Props props{{"file", "/tmp/in.txt"}, {"topic", "lines"}, {"name", "src"}};
  connector.start(props);
  EXPECT_EQ(connector.taskClass().name, "org.apache.kafka.connect.file.FileStreamSourceTask");
  std::unique_ptr<Task> task = connector.taskClass().create();
  EXPECT_NE(dynamic_cast<FileStreamSourceTask*>(task.get()), nullptr);
  EXPECT_EQ(connector.taskConfigs(3), std::vector<Props>{props});
  EXPECT_EQ(connector.version(), connectVersion());
  EXPECT_EQ(task->version(), connectVersion());
  connector.stop();
  EXPECT_EQ(context.reconfigurations, 0);
  EXPECT_TRUE(context.errors.empty());
}

TEST(ConnectorTest, FileSinkRunsMaxTasksCopies) {
  FileStreamSinkConnector connector;
  Props props{{"file", "/tmp/out.txt"}, {"topics", "a,b"}};
  connector.start(props);
  EXPECT_EQ(connector.taskConfigs(3), (std::vector<Props>{props, props, props}));
  EXPECT_TRUE(connector.taskConfigs(0).empty());
  std::unique_ptr<Task> task = connector.taskClass().create();
  EXPECT_NE(dynamic_cast<FileStreamSinkTask*>(task.get()), nullptr);
  EXPECT_EQ(connector.taskClass().name, "org.apache.kafka.connect.file.FileStreamSinkTask");
}

TEST(ConnectorTest, FileConnectorsDeclareKafkasConfigs) {
  EXPECT_EQ(FileStreamSourceConnector().config().names(),
            (std::vector<std::string>{"file", "topic", "batch.size"}));
  const ConfigDef::ConfigKey* batch = FileStreamSourceConnector::configDef().find("batch.size");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->type, ConfigDef::Type::INT);
  EXPECT_EQ(std::get<int32_t>(batch->defaultValue.value()), 2000);
  EXPECT_FALSE(FileStreamSourceConnector::configDef().find("topic")->hasDefault());
  EXPECT_EQ(FileStreamSinkConnector().config().names(), std::vector<std::string>{"file"});
}

TEST(ConnectorTest, ValidateReportsKafkasMessages) {
  FileStreamSourceConnector connector;
  Config missing = connector.validate({{"file", "x"}});
  EXPECT_EQ(errorsOf(missing, "topic"),
            std::vector<std::string>{
                "Missing required configuration \"topic\" which has no default value."});
  EXPECT_EQ(errorCount(missing), 1u);
  EXPECT_EQ(errorsOf(connector.validate({{"topic", ""}}), "topic"),
            std::vector<std::string>{"Invalid value  for configuration topic: String must be "
                                     "non-empty"});
  EXPECT_EQ(errorsOf(connector.validate({{"topic", "t"}, {"batch.size", "lots"}}), "batch.size"),
            std::vector<std::string>{
                "Invalid value lots for configuration batch.size: Not a number of type INT"});
  EXPECT_EQ(errorCount(connector.validate({{"topic", "t"}})), 0u);
  EXPECT_EQ(messageOf([&] {
              connector.start({{"file", "x"}});
            }),
            "Missing required configuration \"topic\" which has no default value.");
}

TEST(ConnectorTest, FileSourceSupportsExactlyOnceOnlyForAFile) {
  FileStreamSourceConnector connector;
  EXPECT_EQ(connector.exactlyOnceSupport({{"file", "in.txt"}, {"topic", "t"}}),
            ExactlyOnceSupport::SUPPORTED);
  EXPECT_EQ(connector.exactlyOnceSupport({{"topic", "t"}}), ExactlyOnceSupport::UNSUPPORTED);
  EXPECT_EQ(connector.exactlyOnceSupport({{"file", ""}, {"topic", "t"}}),
            ExactlyOnceSupport::UNSUPPORTED);
  EXPECT_EQ(connector.canDefineTransactionBoundaries({}),
            ConnectorTransactionBoundaries::UNSUPPORTED);
}

TEST(ConnectorTest, FileSourceChecksAlteredOffsets) {
  FileStreamSourceConnector connector;
  Props config{{"file", "in.txt"}, {"topic", "t"}};
  ValueMap partition{{"filename", "in.txt"}};
  EXPECT_TRUE(connector.alterOffsets(config, {{partition, ValueMap{{"position", int64_t{7}}}}}));
  EXPECT_TRUE(connector.alterOffsets(config, {{ValueMap{{"junk", 1}}, std::nullopt}}));
  EXPECT_EQ(messageOf([&] {
              connector.alterOffsets(config, {{partition, ValueMap{}}});
            }),
            "Offset objects should either be null or contain the key 'position'");
  EXPECT_EQ(messageOf([&] {
              connector.alterOffsets(config, {{partition, ValueMap{{"position", "7"}}}});
            }),
            "The value for the 'position' key in the offset is expected to be a Long value");
  EXPECT_EQ(messageOf([&] {
              connector.alterOffsets(config, {{partition, ValueMap{{"position", int64_t{-1}}}}});
            }),
            "The value for the 'position' key in the offset should be a non-negative value");
  EXPECT_EQ(messageOf([&] {
              connector.alterOffsets(config, {{ValueMap{}, ValueMap{{"position", int64_t{1}}}}});
            }),
            "Partition objects should contain the key 'filename'");
  EXPECT_EQ(messageOf([&] {
              connector.alterOffsets({{"topic", "t"}}, {});
            }),
            "Offsets cannot be modified if the 'file' configuration is unspecified. This is "
            "because stdin is used for input and offsets are not tracked.");
  EXPECT_TRUE(FileStreamSinkConnector().alterOffsets({}, {{TopicPartition{"t", 0}, 5}}));
}

TEST(ConnectorPluginsTest, FindsConnectorsByClassNameAndAlias) {
  ConnectorPlugins plugins = ConnectorPlugins::withBuiltIns();
  for (std::string_view name : {"org.apache.kafka.connect.file.FileStreamSourceConnector",
                                "FileStreamSourceConnector", "FileStreamSource"}) {
    std::unique_ptr<Connector> connector = plugins.newConnector(name);
    EXPECT_NE(dynamic_cast<FileStreamSourceConnector*>(connector.get()), nullptr) << name;
  }
  for (std::string_view name : {"org.apache.kafka.connect.file.FileStreamSinkConnector",
                                "FileStreamSinkConnector", "FileStreamSink"}) {
    std::unique_ptr<Connector> connector = plugins.newConnector(name);
    EXPECT_NE(dynamic_cast<FileStreamSinkConnector*>(connector.get()), nullptr) << name;
  }
  const ConnectorPlugin& source = plugins.connectorPlugin("FileStreamSource");
  EXPECT_EQ(source.type, PluginType::SOURCE);
  EXPECT_EQ(plugins.connectorPlugin("FileStreamSink").type, PluginType::SINK);
  EXPECT_EQ(source.version, connectVersion());
  EXPECT_EQ(
      plugins.aliases(),
      (std::map<std::string, std::string>{
          {"Datagen", "io.confluent.kafka.connect.datagen.DatagenConnector"},
          {"DatagenConnector", "io.confluent.kafka.connect.datagen.DatagenConnector"},
          {"FileStreamSink", "org.apache.kafka.connect.file.FileStreamSinkConnector"},
          {"FileStreamSinkConnector", "org.apache.kafka.connect.file.FileStreamSinkConnector"},
          {"FileStreamSource", "org.apache.kafka.connect.file.FileStreamSourceConnector"},
          {"FileStreamSourceConnector",
           "org.apache.kafka.connect.file.FileStreamSourceConnector"}}));
}

TEST(ConnectorPluginsTest, UnknownAndAmbiguousNamesAreRefused) {
  ConnectorPlugins plugins = ConnectorPlugins::withBuiltIns();
  std::string version(connectVersion());
  std::string datagen =
      "PluginDesc{klass=class io.confluent.kafka.connect.datagen.DatagenConnector, "
      "name='io.confluent.kafka.connect.datagen.DatagenConnector', version='" +
      version + "', encodedVersion=" + version +
      ", type=source, typeName='source', location='classpath'}";
  std::string sink =
      "PluginDesc{klass=class org.apache.kafka.connect.file.FileStreamSinkConnector"
      ", name='org.apache.kafka.connect.file.FileStreamSinkConnector', version='" +
      std::string(connectVersion()) + "', encodedVersion=" + std::string(connectVersion()) +
      ", type=sink, typeName='sink', location='classpath'}";
  std::string unknown = messageOf([&] { plugins.newConnector("FileStream"); });
  EXPECT_EQ(unknown.rfind("Failed to find any class that implements Connector and which name "
                          "matches FileStream, available connectors are: " +
                              datagen + ", " + sink +
                              ", PluginDesc{klass=class "
                              "org.apache.kafka.connect.file.FileStreamSourceConnector",
                          0),
            0u)
      << unknown;

  plugins.add("com.example.FileStreamSourceConnector",
              [] { return std::make_unique<FileStreamSourceConnector>(); });
  EXPECT_EQ(messageOf([&] { plugins.newConnector("FileStreamSource"); })
                .rfind("More than one connector matches alias FileStreamSource. Please use full "
                       "package and class name instead. Classes found: ",
                       0),
            0u);
  EXPECT_FALSE(plugins.aliases().contains("FileStreamSource"));
  EXPECT_NO_THROW(plugins.newConnector("com.example.FileStreamSourceConnector"));
  EXPECT_THROW(plugins.add("com.example.FileStreamSourceConnector",
                           [] { return std::make_unique<FileStreamSinkConnector>(); }),
               ConnectException);
}

class EmptyOffsets : public OffsetStorageReader {
 public:
  std::optional<ValueMap> offset(const ValueMap& partition) override {
    if (Value(partition) == Value(ValueMap{{"p", 1}})) return ValueMap{{"o", int64_t{9}}};
    return std::nullopt;
  }
};

TEST(PluginInterfaceTest, OffsetsLeavesOutPartitionsWithoutOne) {
  EmptyOffsets reader;
  auto found = reader.offsets({ValueMap{{"p", 1}}, ValueMap{{"p", 2}}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(Value(found[0].first), Value(ValueMap{{"p", 1}}));
  EXPECT_EQ(Value(found[0].second), Value(ValueMap{{"o", int64_t{9}}}));
}

TEST(PluginInterfaceTest, TransactionBoundaryWords) {
  using Boundary = SourceTask::TransactionBoundary;
  EXPECT_EQ(SourceTask::transactionBoundaryFromProperty(" Interval "), Boundary::INTERVAL);
  EXPECT_EQ(SourceTask::transactionBoundaryFromProperty("connector"), Boundary::CONNECTOR);
  EXPECT_EQ(SourceTask::toString(SourceTask::DEFAULT_TRANSACTION_BOUNDARY), "poll");
  EXPECT_EQ(
      messageOf([] { SourceTask::transactionBoundaryFromProperty("never"); }),
      "No enum constant org.apache.kafka.connect.source.SourceTask.TransactionBoundary.NEVER");
}

}  // namespace
}  // namespace oxbow::connect
