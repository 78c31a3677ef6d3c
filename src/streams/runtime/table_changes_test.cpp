// A task runs only processors that take what their node is wired to take: a table's changes or a
// stream's records (the topology refuses edges between the two; ProcessorApi tests that).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "oxbow/streams/errors.h"
#include "streams/runtime/task.h"

namespace oxbow::streams {
namespace {

class NoCollector : public detail::RecordCollector {
 public:
  void send(const std::string&, const std::optional<std::string>&,
            const std::optional<std::string>&, int64_t, const Headers&, int32_t,
            int64_t*) override {}
  int32_t partitions_of(const std::string&) override { return 1; }
};

class TakesChanges : public detail::TableProcessor {
 public:
  void process_change(const detail::ChangeRecord&) override {}
};

class TakesRecords : public detail::Processor {
 public:
  void process(const Record&) override {}
};

// A source of records, then `node`.
std::shared_ptr<detail::GraphBuilder> graph_with(detail::NodeSpec node) {
  auto graph = std::make_shared<detail::GraphBuilder>();
  detail::NodeSpec source;
  source.name = "source";
  source.kind = NodeDescription::Kind::kSource;
  source.topics = {"in"};
  source.consumed.key_serde = source.consumed.value_serde = detail::default_serde<std::string>();
  graph->add_node(std::move(source));
  node.parents = {"source"};
  graph->add_node(std::move(node));
  return graph;
}

std::string task_error(const std::shared_ptr<detail::GraphBuilder>& graph) {
  NoCollector collector;
  detail::TaskConfig config;
  config.application_id = "wiring";
  try {
    detail::Task task(graph, graph->subtopologies().at(0), config, collector);
  } catch (const TopologyException& e) {
    return e.what();
  }
  return "";
}

TEST(TableChanges, ATaskRefusesAProcessorThatTakesWhatItsNodeIsNotGiven) {
  detail::NodeSpec lying;
  lying.name = "lying";
  lying.factory = [] { return std::make_unique<TakesChanges>(); };  // the node takes records
  EXPECT_NE(task_error(graph_with(lying))
                .find("the processor of lying takes a table's changes, not what the node takes"),
            std::string::npos);

  detail::NodeSpec honest;
  honest.name = "honest";
  honest.factory = [] { return std::make_unique<TakesRecords>(); };
  EXPECT_EQ(task_error(graph_with(honest)), "");
}

TEST(TableChanges, EachKindOfNodeRefusesTheOtherKindOfInput) {
  TakesChanges table_node;
  TakesRecords stream_node;
  EXPECT_THROW(table_node.process(Record{}), std::logic_error);
  EXPECT_THROW(stream_node.process_change(detail::ChangeRecord{}), std::logic_error);
}

}  // namespace
}  // namespace oxbow::streams
