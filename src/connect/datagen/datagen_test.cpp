// The datagen source: its configs, the quickstarts' records (schemas, keys, headers, offsets),
// a seeded run being repeatable and a restarted task going on from its offset, iterations, key
// space and pace.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "connect/source_task_context_fake.h"
#include "oxbow/connect/datagen.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"
#include "oxbow/connect/plugins.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

using Context = FakeSourceContext;

Props config(Props extra) {
  Props props{{"kafka.topic", "out"},
              {"quickstart", "users"},
              {"max.interval", "0"},
              {"random.seed", "42"},
              {"task.id", "0"}};
  for (auto& [k, v] : extra) props[k] = v;
  return props;
}

std::vector<SourceRecord> run(Props props, size_t records, Context* context = nullptr) {
  Context own;
  DatagenTask task;
  task.initialize(context != nullptr ? *context : own);
  task.start(props);
  std::vector<SourceRecord> out;
  while (out.size() < records) {
    std::vector<SourceRecord> more = task.poll();
    if (more.empty()) break;
    out.insert(out.end(), more.begin(), more.end());
  }
  task.stop();
  return out;
}

std::map<std::string, std::vector<std::string>> errorsOf(const Props& props) {
  std::map<std::string, std::vector<std::string>> errors;
  Config validated = DatagenConnector().validate(props);
  for (const ConfigValue& value : validated.configValues()) {
    if (!value.errorMessages.empty()) errors[value.name] = value.errorMessages;
  }
  return errors;
}

TEST(DatagenTest, ConfigsAreConfluentsWithOursBeside) {
  ConnectorPlugins plugins = ConnectorPlugins::withBuiltIns();
  const ConnectorPlugin& plugin = plugins.connectorPlugin("Datagen");
  EXPECT_EQ(plugin.className, "io.confluent.kafka.connect.datagen.DatagenConnector");
  EXPECT_EQ(plugin.type, PluginType::SOURCE);
  const ConfigDef& def = DatagenConnector::configDef();
  EXPECT_EQ(std::get<int64_t>(def.find("max.interval")->defaultValue.value()), 500);
  EXPECT_EQ(std::get<int32_t>(def.find("iterations")->defaultValue.value()), 1000000);
  EXPECT_EQ(errorsOf({{"quickstart", "users"}}).count("kafka.topic"), 1u);
  EXPECT_EQ(errorsOf({{"kafka.topic", "t"}, {"quickstart", "Users"}}).size(), 0u);
  EXPECT_EQ(errorsOf({{"kafka.topic", "t"}, {"quickstart", "clicks"}})["quickstart"],
            std::vector<std::string>{"Invalid value clicks for configuration quickstart: "
                                     "Quickstart must be one of: users, pageviews, orders"});
  EXPECT_EQ(
      errorsOf({{"kafka.topic", "t"}, {"schema.filename", "/x.avro"}}).count("schema.filename"),
      1u);
  DatagenConnector connector;
  EXPECT_THROW(connector.start({{"kafka.topic", "t"}}), ConfigException);
  connector.start({{"kafka.topic", "t"}, {"quickstart", "orders"}});
  std::vector<Props> tasks = connector.taskConfigs(3);
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[2].at("task.id"), "2");
  EXPECT_EQ(tasks[2].at("quickstart"), "orders");
}

TEST(DatagenTest, UsersRecordsHaveTheQuickstartSchemaKeyHeadersAndOffsets) {
  Context context;
  std::vector<SourceRecord> records = run(config({}), 3, &context);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(context.offsets.asked, (std::vector<ValueMap>{ValueMap{{"task.id", int32_t{0}}}}));
  const SourceRecord& first = records[0];
  EXPECT_EQ(first.topic(), "out");
  EXPECT_EQ(first.valueSchema()->name(), "ksql.users");
  std::vector<std::string> fields;
  for (const Field& f : first.valueSchema()->fields()) fields.push_back(f.name());
  EXPECT_EQ(fields, (std::vector<std::string>{"registertime", "userid", "regionid", "gender"}));
  const Struct& value = first.value().asStruct();
  EXPECT_TRUE(schemasEqual(first.keySchema(), Schema::STRING_SCHEMA));
  EXPECT_EQ(first.key().asString(), *value.getString("userid"));
  EXPECT_EQ(value.getString("userid")->rfind("User_", 0), 0u);
  EXPECT_TRUE(
      std::set<std::string>({"MALE", "FEMALE", "OTHER"}).contains(*value.getString("gender")));
  EXPECT_GE(*value.getInt64("registertime"), 1487715775521);
  EXPECT_EQ(records[2].headers().lastWithName("current.iteration")->value, Value(int64_t{2}));
  EXPECT_EQ(records[2].headers().lastWithName("task.id")->value, Value(int64_t{0}));
  const Value* next = Value(records[2].sourceOffset()).mapGet(Value("current.iteration"));
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(*next, Value(int64_t{3}));
  // JsonConverter writes it with its schema, as any converter would.
  JsonConverter json;
  json.configure({}, false);
  EXPECT_NE(json.fromConnectData("out", first.valueSchema(), first.value())->find("\"ksql.users\""),
            std::string::npos);
}

TEST(DatagenTest, ASeededRunRepeatsAndARestartGoesOnFromItsOffset) {
  std::vector<SourceRecord> whole = run(config({}), 6);
  EXPECT_EQ(run(config({}), 6), whole);
  EXPECT_NE(run(config({{"task.id", "1"}}), 6)[0].value(), whole[0].value());
  std::vector<SourceRecord> firstRun = run(config({}), 3);
  Context restarted;
  restarted.offsets.committed = firstRun.back().sourceOffset();
  std::vector<SourceRecord> secondRun = run(config({}), 3, &restarted);
  ASSERT_EQ(secondRun.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(secondRun[i].value(), whole[3 + i].value()) << i;
    EXPECT_EQ(secondRun[i].headers().lastWithName("current.iteration")->value,
              Value(static_cast<int64_t>(3 + i)));
  }
}

TEST(DatagenTest, OrdersAndPageviewsFollowTheirQuickstarts) {
  std::vector<SourceRecord> orders = run(config({{"quickstart", "orders"}}), 4);
  ASSERT_EQ(orders.size(), 4u);
  for (int32_t i = 0; i < 4; ++i) {
    const Struct& order = orders[i].value().asStruct();
    EXPECT_EQ(order.getInt32("orderid"), i);
    EXPECT_EQ(orders[i].key().asString(), std::to_string(i));
    double units = *order.getFloat64("orderunits");
    EXPECT_TRUE(units >= 0.1 && units < 10.0) << units;
    std::shared_ptr<Struct> address = order.getStruct("address");
    EXPECT_EQ(address->schema()->name(), "ksql.address");
    int64_t zip = *address->getInt64("zipcode");
    EXPECT_TRUE(zip >= 10000 && zip < 99999) << zip;
    EXPECT_EQ(order.getString("itemid")->rfind("BYOC_Item_", 0), 0u);
  }
  std::vector<SourceRecord> views = run(config({{"quickstart", "PAGEVIEWS"}}), 3);
  EXPECT_EQ(views[2].value().asStruct().getInt64("viewtime"), 21);
  EXPECT_EQ(views[2].key().asString(), "21");
  // schema.keyfield picks another field as the key.
  EXPECT_EQ(run(config({{"quickstart", "pageviews"}, {"schema.keyfield", "pageid"}}), 1)[0]
                .key()
                .asString()
                .rfind("Page_", 0),
            0u);
  EXPECT_THROW(run(config({{"schema.keyfield", "nope"}}), 1), ConfigException);
}

TEST(DatagenTest, IterationsKeySpaceAndBatchSize) {
  std::vector<SourceRecord> limited = run(config({{"iterations", "5"}, {"batch.size", "3"}}), 100);
  EXPECT_EQ(limited.size(), 5u);
  std::set<std::string> keys;
  for (const SourceRecord& r : run(config({{"key.space", "3"}, {"batch.size", "50"}}), 200)) {
    keys.insert(r.key().asString());
    EXPECT_EQ(r.value().asStruct().getString("userid"), r.key().asString());
  }
  EXPECT_EQ(keys, (std::set<std::string>{"User_0", "User_1", "User_2"}));
  std::set<int32_t> ids;
  for (const SourceRecord& r : run(config({{"quickstart", "orders"}, {"key.space", "4"}}), 50)) {
    ids.insert(*r.value().asStruct().getInt32("orderid"));
  }
  EXPECT_EQ(ids, (std::set<int32_t>{0, 1, 2, 3}));
}

TEST(DatagenTest, RecordsPerSecondPacesTheTask) {
  DatagenTask task;
  Context context;
  task.initialize(context);
  task.start(config({{"records.per.second", "200"}, {"batch.size", "1000"}}));
  auto start = std::chrono::steady_clock::now();
  size_t count = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(300)) {
    count += task.poll().size();
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Never ahead of the pace; on a loaded machine it may fall behind, but not to nothing.
  EXPECT_LE(count, static_cast<size_t>(elapsed * 200) + 1);
  EXPECT_GE(count, 10u);
  task.stop();
}

}  // namespace
}  // namespace oxbow::connect
