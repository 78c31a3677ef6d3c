// Named topologies in one instance (topologies.h): what the group assigns from, with each
// topology's internal topics under its own prefix; what they may not share; a task of a named
// topology writing its repartition topic and changelog under that prefix; and KafkaStreams'
// addNamedTopology and removeNamedTopology before start().
// tests/integration/test_streams_named_topologies.py runs them against the broker, adding and
// removing while running too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"
#include "streams/runtime/task.h"
#include "streams/runtime/topologies.h"
#include "streams/state/rocksdb_store.h"

namespace oxbow::streams {
namespace {

// in -> selectKey -> groupByKey -> count("counts"): a repartition topic and a changelog.
Topology counting(const std::string& input) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>(input)
      .selectKey([](const std::string&, const std::string& v) { return v; })
      .groupByKey()
      .count(Materialized<std::string, int64_t>::as("counts"));
  return builder.build();
}

Topology mapping(const std::string& input) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>(input)
      .mapValues([](const std::string& v) { return v + "!"; })
      .to(input + "-out");
  return builder.build();
}

// a and b merged: one sub-topology reading both.
Topology merging(const std::string& a, const std::string& b) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>(a)
      .merge(builder.stream<std::string, std::string>(b))
      .to(a + "-" + b);
  return builder.build();
}

detail::NamedGraph named(const std::string& name, const Topology& t, const std::string& prefix) {
  return {name, detail::graph_of(t), prefix};
}

TEST(NamedTopologies, GroupTopicsCarryEachTopologysNameAndPrefix) {
  detail::Topologies both{named("q1", counting("a"), "_confluent-ksql-svcquery_Q1"),
                          named("q2", mapping("b"), "app-q2")};
  auto topics = detail::group_topics(both);
  ASSERT_EQ(topics.size(), 3u);  // q1: two sub-topologies around its repartition topic; q2: one
  EXPECT_EQ(topics[0].topology, "q1");
  EXPECT_EQ(topics[0].sources, std::vector<std::string>{"a"});
  EXPECT_EQ(topics[1].topology, "q1");
  EXPECT_EQ(topics[1].id, 1);
  ASSERT_EQ(topics[1].sources.size(), 1u);
  EXPECT_EQ(topics[1].sources[0], "_confluent-ksql-svcquery_Q1-counts-repartition");
  EXPECT_EQ(topics[1].changelogs,
            std::vector<std::string>{"_confluent-ksql-svcquery_Q1-counts-changelog"});
  EXPECT_EQ(topics[2].topology, "q2");
  EXPECT_EQ(topics[2].id, 0);  // each topology numbers its own sub-topologies
  EXPECT_EQ(topics[2].sources, std::vector<std::string>{"b"});
  EXPECT_NO_THROW(detail::check_named_topologies(both));
}

TEST(NamedTopologies, TheUnnamedTopologyKeepsTheApplicationIdAsPrefix) {
  auto single = detail::single_topology(detail::graph_of(counting("a")), "wc");
  auto topics = detail::group_topics(*single);
  ASSERT_EQ(topics.size(), 2u);
  EXPECT_EQ(topics[1].topology, "");
  EXPECT_EQ(topics[1].sources, std::vector<std::string>{"wc-counts-repartition"});
  EXPECT_EQ(topics[1].changelogs, std::vector<std::string>{"wc-counts-changelog"});
  EXPECT_EQ(detail::default_prefix("wc", "q1"), "wc-q1");
}

void expect_refused(const detail::Topologies& topologies, const std::string& part) {
  try {
    detail::check_named_topologies(topologies);
    FAIL() << "accepted; expected an error with: " << part;
  } catch (const TopologyException& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(NamedTopologies, TopologiesShareASourceTopicEachReadsAlone) {
  detail::Topologies sharing{named("q1", counting("a"), "p1"), named("q2", mapping("a"), "p2"),
                             named("q3", mapping("a"), "p3")};
  EXPECT_NO_THROW(detail::check_named_topologies(sharing));
  auto topics = detail::group_topics(sharing);
  EXPECT_EQ(topics[0].sources, std::vector<std::string>{"a"});
  EXPECT_EQ(topics[2].sources, std::vector<std::string>{"a"});
}

TEST(NamedTopologies, SharedSourcesReadBesideOthersNamesPrefixesAndGlobalTablesAreRefused) {
  expect_refused({named("q1", counting("a"), "p1"), named("q2", merging("a", "b"), "p2")},
                 "source topic a is read by named topologies 'q1' and 'q2', and 'q2' reads it "
                 "beside other topics");
  expect_refused({named("q2", merging("b", "a"), "p2"), named("q1", mapping("a"), "p1")},
                 "and 'q2' reads it beside other topics");
  expect_refused({named("q1", counting("a"), "p1"), named("q1", mapping("b"), "p2")},
                 "'q1' is added twice");
  expect_refused({named("q1", counting("a"), "p"), named("q2", mapping("b"), "p")},
                 "prefix 'p' is empty or another topology's");
  expect_refused({named("no/slash", counting("a"), "p")}, "named topology 'no/slash'");
  expect_refused({named("..", counting("a"), "p")}, "named topology '..'");
  StreamsBuilder builder;
  builder.globalTable<std::string, std::string>("g");
  builder.stream<std::string, std::string>("c").to("d");
  expect_refused({named("q3", builder.build(), "p3")}, "global tables");
}

class Recorder : public detail::RecordCollector {
 public:
  void send(const std::string& topic, const std::optional<std::string>&,
            const std::optional<std::string>&, int64_t, const Headers&, int32_t,
            int64_t*) override {
    topics.insert(topic);
  }
  int32_t partitions_of(const std::string&) override { return 1; }
  std::set<std::string> topics;
};

TEST(NamedTopologies, ANamedTopologysTasksWriteUnderItsPrefix) {
  auto graph = detail::graph_of(counting("a"));
  graph->validate();
  Recorder collector;
  detail::TaskConfig config;
  config.application_id = "_confluent-ksql-svcquery_Q1";  // the topology's prefix
  config.topology = "q1";
  config.cache_max_bytes = 0;
  auto dir =
      std::filesystem::temp_directory_path() / ("oxbow-named-task-" + std::to_string(::getpid()));
  config.state_root = dir.string();
  config.rocksdb_memory = std::make_shared<detail::RocksDbMemory>(16 << 20);
  detail::RawRecord raw;
  raw.key = "k";
  raw.value = "v";
  {
    detail::Task task(graph, graph->subtopologies().at(0), config, collector);
    raw.topic = "a";
    task.process(raw);
  }
  config.subtopology = 1;
  {
    detail::Task counter(graph, graph->subtopologies().at(1), config, collector);
    raw.topic = "_confluent-ksql-svcquery_Q1-counts-repartition";
    counter.process(raw);
    counter.flush();
    EXPECT_EQ(counter.id(), "q1__1_0");
  }
  EXPECT_EQ(collector.topics,
            (std::set<std::string>{"_confluent-ksql-svcquery_Q1-counts-repartition",
                                   "_confluent-ksql-svcquery_Q1-counts-changelog"}));
  EXPECT_TRUE(std::filesystem::exists(dir / "__q1__" / "1_0"));
  std::filesystem::remove_all(dir);
}

class KafkaStreamsNamed : public ::testing::Test {
 protected:
  std::map<std::string, std::string> config() const {
    return {{"application.id", "named-unit"},
            {"bootstrap.servers", "x:1"},
            {"state.dir", dir_.string()}};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("oxbow-named-unit-" + std::to_string(::getpid()));
};

TEST_F(KafkaStreamsNamed, AddNamedTopologyChecksBeforeStart) {
  KafkaStreams app(config());
  Topology q1 = counting("a");
  app.addNamedTopology("q1", q1);
  app.addNamedTopology("q2", mapping("b"), "_confluent-ksql-svcquery_Q2");
  ASSERT_NE(app.getTopologyByName("q1"), nullptr);
  EXPECT_EQ(app.getTopologyByName("q1")->describe().toString(), q1.describe().toString());
  EXPECT_EQ(app.getTopologyByName("q3"), nullptr);
  EXPECT_THROW(app.addNamedTopology("q3", merging("a", "e")), TopologyException);  // q1 reads a
  EXPECT_THROW(app.addNamedTopology("q1", mapping("c")), TopologyException);
  // q1's default prefix is named-unit-q1.
  EXPECT_THROW(app.addNamedTopology("q4", mapping("d"), "named-unit-q1"), TopologyException);
  EXPECT_EQ(app.getTopologyByName("q3"), nullptr);  // refused ones are not kept
}

TEST_F(KafkaStreamsNamed, NamedTopologiesNeedAnInstanceWithoutOne) {
  KafkaStreams single(mapping("a"), config());
  EXPECT_THROW(single.addNamedTopology("q1", mapping("b")), std::logic_error);
  EXPECT_THROW(single.removeNamedTopology("q1"), std::logic_error);
}

TEST_F(KafkaStreamsNamed, RemovedBeforeStartIsForgotten) {
  KafkaStreams app(config());
  app.addNamedTopology("q1", counting("a"));
  EXPECT_THROW(app.removeNamedTopology("q2"), std::invalid_argument);
  app.removeNamedTopology("q1");
  EXPECT_EQ(app.getTopologyByName("q1"), nullptr);
  app.addNamedTopology("q2", merging("a", "b"));  // q1 no longer reads a beside it
  EXPECT_THROW(app.removeNamedTopology("q1"), std::invalid_argument);
}

TEST_F(KafkaStreamsNamed, StartWithoutAnyTopologyIsRefused) {
  KafkaStreams app(config());
  EXPECT_THROW(app.start(), std::logic_error);
  EXPECT_EQ(app.state(), KafkaStreams::State::CREATED);
}

}  // namespace
}  // namespace oxbow::streams
