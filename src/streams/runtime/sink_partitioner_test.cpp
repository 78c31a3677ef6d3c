// A sink writes each record to the partition its StreamPartitioner picks, the typed one an
// application gives Produced or Repartitioned, with the topic's partition count; nullopt leaves
// the record to the default partitioner (murmur2 of the key bytes, partition -1 here).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/topology.h"
#include "streams/runtime/task.h"

namespace oxbow::streams {
namespace {

class PartitionRecorder : public detail::RecordCollector {
 public:
  void send(const std::string& topic, const std::optional<std::string>& key,
            const std::optional<std::string>&, int64_t, const Headers&, int32_t partition,
            int64_t*) override {
    sent.push_back({topic, key.value_or(""), partition});
  }
  int32_t partitions_of(const std::string& topic) override { return topic == "out" ? 4 : 3; }
  struct Sent {
    std::string topic, key;
    int32_t partition;
    bool operator==(const Sent&) const = default;
  };
  std::vector<Sent> sent;
};

std::vector<PartitionRecorder::Sent> run(const Topology& topology,
                                         const std::vector<std::string>& keys) {
  auto graph = detail::graph_of(topology);
  graph->validate();
  PartitionRecorder collector;
  detail::TaskConfig config;
  config.application_id = "app";
  config.cache_max_bytes = 0;
  detail::Task task(graph, graph->subtopologies().at(0), config, collector);
  detail::RawRecord raw;
  raw.topic = "in";
  for (const auto& key : keys) {
    raw.key = key;
    raw.value = key + "-value";
    task.process(raw);
    ++raw.offset;
  }
  return collector.sent;
}

TEST(SinkPartitioner, TypedPartitionerPicksThePartitionOfEachRecord) {
  auto by_length = [](const std::string& topic, const std::string& key, const std::string& value,
                      int32_t partitions) -> std::optional<int32_t> {
    if (key == "default") return std::nullopt;
    EXPECT_EQ(value, key + "-value");
    return static_cast<int32_t>((key.size() + topic.size()) % partitions);
  };
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in").to(
      "out", Produced<std::string, std::string>::with(serdes::String(), serdes::String())
                 .withStreamPartitioner(by_length));
  using Sent = PartitionRecorder::Sent;
  EXPECT_EQ(run(builder.build(), {"a", "bb", "ccc", "default"}),
            (std::vector<Sent>{
                {"out", "a", 0}, {"out", "bb", 1}, {"out", "ccc", 2}, {"out", "default", -1}}));
}

TEST(SinkPartitioner, RepartitionTopicUsesTheTypedPartitioner) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .repartition(Repartitioned<std::string, std::string>::as("by-first")
                       .withStreamPartitioner([](const std::string&, const std::string& key,
                                                 const std::string&, int32_t partitions) {
                         return std::optional<int32_t>((key[0] - 'a') % partitions);
                       }))
      .to("out");
  auto sent = run(builder.build(), {"a", "b", "c", "d"});
  ASSERT_EQ(sent.size(), 4u);
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].topic, "app-by-first-repartition");
    EXPECT_EQ(sent[i].partition, static_cast<int32_t>(i % 3)) << sent[i].key;
  }
}

}  // namespace
}  // namespace oxbow::streams
