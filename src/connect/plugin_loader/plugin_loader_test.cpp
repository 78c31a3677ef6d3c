// Plugins through the C ABI: the example plugin (examples/connect-plugin) dlopen()ed, its
// connectors and tasks driven through the runtime's classes, its records and errors carried
// across; files that are no plugin, or of another ABI version, skipped.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "connect/plugin_loader/plugin_loader.h"
#include "connect/source_task_context_fake.h"
#include "oxbow/connect/converter.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/sink.h"
#include "oxbow/connect/source.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

namespace fs = std::filesystem;

using SourceContext = FakeSourceContext;

class SinkContext : public SinkTaskContext {
 public:
  Props configs() const override { return {{"file", "x"}}; }
  void offset(const std::map<TopicPartition, int64_t>& offsets) override {
    rewound.insert(offsets.begin(), offsets.end());
  }
  void offset(const TopicPartition& tp, int64_t offset) override { rewound[tp] = offset; }
  void timeout(int64_t) override {}
  std::set<TopicPartition> assignment() const override { return {{"t", 0}}; }
  void pause(const std::vector<TopicPartition>&) override {}
  void resume(const std::vector<TopicPartition>&) override {}
  void requestCommit() override {}
  std::map<TopicPartition, int64_t> rewound;
};

ConnectorPlugins loaded() {
  ConnectorPlugins plugins;
  EXPECT_EQ(plugin_loader::loadPlugin(plugins, OXBOW_TEST_PLUGIN),
            (std::vector<std::string>{"com.example.SequenceSourceConnector",
                                      "com.example.LineSinkConnector"}));
  return plugins;
}

std::unique_ptr<SourceTask> startedSource(const ConnectorPlugins& plugins, SourceContext& context,
                                          Props props) {
  std::unique_ptr<Connector> connector = plugins.newConnector("SequenceSource");
  connector->start(props);
  std::vector<Props> configs = connector->taskConfigs(3);
  EXPECT_EQ(configs, std::vector<Props>{props});
  TaskClass taskClass = connector->taskClass();
  EXPECT_EQ(taskClass.name, "com.example.SequenceSourceTask");
  std::unique_ptr<Task> task = taskClass.create();
  auto* source = dynamic_cast<SourceTask*>(task.get());
  EXPECT_NE(source, nullptr);
  task.release();
  std::unique_ptr<SourceTask> owned(source);
  owned->initialize(context);
  owned->start(configs.front());
  return owned;
}

TEST(PluginLoaderTest, RegistersThePluginsConnectorsWithTheirFileAsLocation) {
  ConnectorPlugins plugins = loaded();
  const ConnectorPlugin& source = plugins.connectorPlugin("SequenceSourceConnector");
  EXPECT_EQ(source.type, PluginType::SOURCE);
  EXPECT_EQ(source.version, "1.0.0");
  EXPECT_EQ(source.location, OXBOW_TEST_PLUGIN);
  EXPECT_EQ(plugins.connectorPlugin("LineSink").type, PluginType::SINK);
}

TEST(PluginLoaderTest, ConvertersAreRegisteredAndConvertAcrossTheBoundary) {
  ConnectorPlugins plugins = loaded();
  std::unique_ptr<Converter> text =
      ConverterRegistry::instance().create("com.example.TextConverter");
  text->configure({}, false);
  SchemaPtr schema = SchemaBuilder::struct_().field("n", Schema::INT32_SCHEMA).build();
  Struct value(schema);
  value.put("n", int32_t{7});
  EXPECT_EQ(text->fromConnectData("t", schema, Value(value)), "Struct{n=7}");
  EXPECT_EQ(text->fromConnectData("t", nullptr, Value()), std::nullopt);
  EXPECT_EQ(text->toConnectData("t", "abc"),
            (SchemaAndValue{Schema::OPTIONAL_STRING_SCHEMA, Value("abc")}));
  EXPECT_EQ(text->toConnectData("t", std::nullopt), SchemaAndValue{});
}

TEST(PluginLoaderTest, ConfigDefinitionAndValidationCrossTheBoundary) {
  ConnectorPlugins plugins = loaded();
  std::unique_ptr<Connector> connector = plugins.newConnector("SequenceSource");
  ConfigDef def = connector->config();
  EXPECT_EQ(def.names(), (std::vector<std::string>{"topic", "count", "interval.ms", "fail.at"}));
  EXPECT_FALSE(def.find("topic")->hasDefault());
  EXPECT_EQ(std::get<int64_t>(def.find("count")->defaultValue.value()), -1);
  EXPECT_EQ(def.find("interval.ms")->importance, ConfigDef::Importance::LOW);

  Config validated = connector->validate({{"interval.ms", "-5"}});
  std::map<std::string, std::vector<std::string>> errors;
  for (const ConfigValue& value : validated.configValues())
    errors[value.name] = value.errorMessages;
  EXPECT_EQ(errors["topic"],
            std::vector<std::string>{"Missing required configuration \"topic\" which has no "
                                     "default value."});
  ASSERT_EQ(errors["interval.ms"].size(), 1u);
  EXPECT_NE(errors["interval.ms"][0].find("Value must be at least 0"), std::string::npos);
}

TEST(PluginLoaderTest, SourceRecordsWithSchemasAndOffsetsComeBackWhole) {
  ConnectorPlugins plugins = loaded();
  SourceContext context;
  context.offsets.committed = ValueMap{{"next", int64_t{5}}};
  auto task =
      startedSource(plugins, context, {{"topic", "numbers"}, {"count", "7"}, {"interval.ms", "0"}});
  EXPECT_EQ(context.offsets.asked, (std::vector<ValueMap>{ValueMap{{"sequence", "main"}}}));
  std::vector<SourceRecord> records = task->poll();
  ASSERT_EQ(records.size(), 2u);  // 5 and 6: count=7
  const SourceRecord& first = records[0];
  EXPECT_EQ(first.topic(), "numbers");
  EXPECT_EQ(first.kafkaPartition(), std::nullopt);
  EXPECT_EQ(first.key(), Value(int64_t{5}));
  EXPECT_TRUE(schemasEqual(first.keySchema(), Schema::INT64_SCHEMA));
  ASSERT_NE(first.valueSchema(), nullptr);
  EXPECT_EQ(first.valueSchema()->name(), "com.example.Sequence");
  EXPECT_EQ(first.value().asStruct().getString("text"), "number 5");
  EXPECT_EQ(first.sourcePartition(), (ValueMap{{"sequence", "main"}}));
  EXPECT_EQ(records[1].sourceOffset(), (ValueMap{{"next", int64_t{7}}}));
  EXPECT_TRUE(task->poll().empty());
  task->commitRecord(first, RecordMetadata{"numbers", 0, 12, 1000});
  task->commit();
  task->stop();
}

TEST(PluginLoaderTest, APluginsExceptionIsThrownAgainWithItsMessage) {
  ConnectorPlugins plugins = loaded();
  SourceContext context;
  auto task =
      startedSource(plugins, context, {{"topic", "t"}, {"fail.at", "3"}, {"interval.ms", "0"}});
  EXPECT_EQ(task->poll().size(), 3u);  // what comes before the failure is returned first
  try {
    task->poll();
    FAIL() << "poll should have thrown";
  } catch (const ConnectException& e) {
    EXPECT_STREQ(e.what(), "sequence source failed at 3 as fail.at asks");
  }
  // A config error is the plugin's ConfigException, as a built-in task's would be.
  std::unique_ptr<Task> bare = plugins.newConnector("SequenceSource")->taskClass().create();
  EXPECT_THROW(bare->start({}), ConfigException);
}

TEST(PluginLoaderTest, SinkTasksAreGivenRecordsWithTheirSchemasAndOffsets) {
  ConnectorPlugins plugins = loaded();
  fs::path file = fs::temp_directory_path() / ("oxbow-plugin-sink-" + std::to_string(getpid()));
  fs::remove(file);
  std::unique_ptr<Connector> connector = plugins.newConnector("com.example.LineSinkConnector");
  connector->start({{"file", file.string()}, {"topics", "t"}});
  std::unique_ptr<Task> task = connector->taskClass().create();
  auto& sink = dynamic_cast<SinkTask&>(*task);
  SinkContext context;
  sink.initialize(context);
  sink.start(connector->taskConfigs(1).front());
  sink.open({{"t", 0}});
  SchemaPtr schema = SchemaBuilder::struct_().field("n", Schema::INT32_SCHEMA).build();
  Struct value(schema);
  value.put("n", int32_t{42});
  sink.put({SinkRecord("t", 0, Schema::STRING_SCHEMA, "k", schema, value, 17),
            SinkRecord("t", 0, nullptr, Value(), nullptr, Value(), 18)});
  SinkOffsets offsets{{{"t", 0}, {19, "", std::nullopt}}};
  EXPECT_EQ(sink.preCommit(offsets), offsets);
  sink.close({{"t", 0}});
  sink.stop();
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "t-0@17 k Struct{n=42}\nt-0@18 null null\n");
  fs::remove(file);
}

TEST(PluginLoaderTest, FilesThatAreNoPluginOrOfAnotherAbiAreSkipped) {
  ConnectorPlugins plugins;
  EXPECT_TRUE(plugin_loader::loadPlugin(plugins, OXBOW_TEST_PLUGIN_V99).empty());
  fs::path dir = fs::temp_directory_path() / ("oxbow-plugin-path-" + std::to_string(getpid()));
  fs::create_directories(dir / "sub" / "lib");
  std::ofstream(dir / "garbage.so") << "not an ELF file";
  // A plugin's directory is searched however deep.
  fs::copy_file(OXBOW_TEST_PLUGIN, dir / "sub" / "lib" / "libsequence.so",
                fs::copy_options::overwrite_existing);
  fs::copy_file(OXBOW_TEST_PLUGIN_V99, dir / "future.so", fs::copy_options::overwrite_existing);
  std::vector<std::string> registered = plugin_loader::loadPluginPath(
      plugins, Properties{{"plugin.path", " /nonexistent, " + dir.string()}});
  EXPECT_EQ(registered.size(), 2u);
  EXPECT_EQ(plugins.connectorPlugin("SequenceSource").location,
            (dir / "sub" / "lib" / "libsequence.so").string());
  // An element of plugin.path may name a plugin itself.
  ConnectorPlugins direct;
  EXPECT_EQ(
      plugin_loader::loadPluginPath(direct, Properties{{"plugin.path", OXBOW_TEST_PLUGIN}}).size(),
      2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxbow::connect
