// The public API's callables are typed (Kafka's TimestampExtractor and StreamPartitioner with the
// stream's K and V), erased inside; what an application sees carries no graph nodes or options.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

// What an application must not reach: the DSL's graph nodes, groupings, options and the
// library's constructors. Making any of them public again fails this test's build.
template <class T>
concept HasNode = requires(const T& t) {
  t.node();
};
template <class T>
concept HasOptions = requires(const T& t) {
  t.options();
};
template <class T>
concept HasGrouping = requires(const T& t) {
  t.grouping();
};
template <class T>
concept HasGraph = requires(const T& t) {
  t.graph();
};
static_assert(!HasNode<KStream<std::string, std::string>>);
static_assert(!HasNode<KTable<std::string, std::string>>);
static_assert(!HasNode<GlobalKTable<std::string, std::string>>);
static_assert(!HasGrouping<KGroupedStream<std::string, std::string>>);
static_assert(!HasOptions<Consumed<std::string, std::string>>);
static_assert(!HasOptions<Produced<std::string, std::string>>);
static_assert(!HasOptions<Materialized<std::string, int64_t>>);
static_assert(!HasOptions<Suppressed<std::string>>);
static_assert(!HasOptions<StoreBuilder<std::string, int64_t>>);
static_assert(!HasGraph<Topology>);
static_assert(!std::is_constructible_v<KStream<std::string, std::string>, detail::Node>);
static_assert(!std::is_constructible_v<KTable<std::string, std::string>, detail::Node>);

TEST(TypedOptions, TimestampExtractorSeesTypedKeyAndValue) {
  StreamsBuilder builder;
  builder
      .stream<std::string, int64_t>(
          "in", Consumed<std::string, int64_t>::with(serdes::String(), serdes::Int64())
                    .withTimestampExtractor([](const std::string& key, const int64_t& value,
                                               const RecordContext& record, int64_t) -> int64_t {
                      // the value is the event time; key "late" takes the record's own
                      return key == "late" ? record.timestamp : value;
                    }))
      .to("out");
  TopologyTestDriver driver(builder.build());
  auto in = driver.createInputTopic<std::string, int64_t>("in");
  in.pipeInput("a", 500, 1);
  in.pipeInput("late", 7, 42);
  in.pipeInput("b", -3, 2);  // invalid: skipped
  auto out = driver.createOutputTopic<std::string, int64_t>("out").readRecordsToList();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].timestamp, 500);
  EXPECT_EQ(out[1].timestamp, 42);
  EXPECT_EQ(driver.skippedRecords(), 1);
}

std::optional<int32_t> partition_of(const StreamPartitioner& p, const std::string& key,
                                    const Datum& value, int32_t partitions) {
  return p("topic", Datum(key), value, partitions);
}

TEST(TypedOptions, PartitionersTakeTypedKeysAndValues) {
  auto by_value = [](const std::string& topic, const std::string& key, const int64_t& value,
                     int32_t partitions) -> std::optional<int32_t> {
    if (key.empty()) return std::nullopt;  // the default partitioner
    return static_cast<int32_t>((value + static_cast<int64_t>(topic.size())) % partitions);
  };
  auto produced = Produced<std::string, int64_t>::with(serdes::String(), serdes::Int64())
                      .withStreamPartitioner(by_value);
  const auto& p = detail::options_of(produced).partitioner;
  EXPECT_EQ(partition_of(p, "k", Datum(int64_t{9}), 4), 2);  // (9 + 5) % 4
  EXPECT_EQ(partition_of(p, "", Datum(int64_t{9}), 4), std::nullopt);

  auto repartitioned = Repartitioned<std::string, int64_t>::as("r").withStreamPartitioner(by_value);
  EXPECT_EQ(partition_of(detail::options_of(repartitioned).partitioner, "k", Datum(int64_t{2}), 4),
            3);

  // A foreign-key join's partitioners see keys only: three arguments, or four with a Void value.
  auto joined = TableJoined<std::string, int32_t>::with(
      [](const std::string&, const std::string& key, int32_t n) -> std::optional<int32_t> {
        return static_cast<int32_t>(key.size()) % n;
      },
      [](const std::string&, const int32_t& key, const Void&, int32_t n) -> std::optional<int32_t> {
        return key % n;
      });
  EXPECT_EQ(partition_of(detail::options_of(joined).partitioner, "abcde", Datum(), 3), 2);
  EXPECT_EQ(detail::options_of(joined).other_partitioner("t", Datum(int32_t{7}), Datum(), 4), 3);
}

TEST(TypedOptions, UntypedCallablesStillServeTopologiesComposedAtRunTime) {
  StreamPartitioner untyped = [](const std::string&, const Datum& key, const Datum&,
                                 int32_t partitions) -> std::optional<int32_t> {
    return static_cast<int32_t>(datum_cast<std::string>(&key)->size()) % partitions;
  };
  auto produced = Produced<std::string, std::string>().withStreamPartitioner(untyped);
  EXPECT_EQ(partition_of(detail::options_of(produced).partitioner, "abc", Datum(), 2), 1);
}

}  // namespace
}  // namespace oxbow::streams
