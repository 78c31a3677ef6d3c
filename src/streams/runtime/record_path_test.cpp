// Heap allocations on a task's record path, counted by replacing the global operator new for this
// test binary: a regression that boxes, copies or re-serializes per record fails here rather than
// only slowing a benchmark. What librdkafka allocates (with malloc, outside these counts) is the
// client's, and the same for the raw pipe the benchmarks compare with.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "common/allocation_counter.h"
#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/topology.h"
#include "streams/runtime/task.h"

namespace oxbow::streams {
namespace {

class DiscardingCollector : public detail::RecordCollector {
 public:
  void send(const std::string&, const std::optional<std::string>&,
            const std::optional<std::string>&, int64_t, const Headers&, int32_t,
            int64_t*) override {
    ++sent;
  }
  int32_t partitions_of(const std::string&) override { return 1; }
  int64_t sent = 0;
};

struct Input {
  std::string topic = "streams-plaintext-input";
  std::string key = "key-000001";
  std::string value = std::string(100, 'v');
  size_t subtopology = 0;
  int64_t cache_max_bytes = 0;  // the stores' caches: none
  int64_t first_timestamp = 0;  // the records' timestamps: one millisecond on each
};

// Allocations per record once the task is warm, over `records` records of `input` (by default a
// key of 10 bytes and a value of 100: past std::string's 15 inline characters where it matters).
double allocations_per_record(const Topology& topology, int records, const Input& input = {}) {
  auto graph = detail::graph_of(topology);
  graph->validate();
  DiscardingCollector collector;
  detail::TaskConfig config;
  config.application_id = "alloc";
  config.cache_max_bytes = input.cache_max_bytes;
  detail::Task task(graph, graph->subtopologies().at(input.subtopology), config, collector);
  detail::RawRecord raw;
  raw.topic = input.topic;
  raw.key = input.key;
  raw.value = input.value;
  raw.timestamp = input.first_timestamp;
  for (int i = 0; i < 100; ++i) task.process(raw);  // warm: buffers reach their size
  int64_t sent = collector.sent;
  oxbow::testing::start_counting_allocations();
  for (int i = 0; i < records; ++i) {
    raw.offset = i;
    raw.timestamp = input.first_timestamp + i;
    task.process(raw);
  }
  int64_t allocations = oxbow::testing::stop_counting_allocations();
  task.flush();  // what a cache holds is sent as it flushes
  EXPECT_GT(collector.sent, sent);
  return static_cast<double>(allocations) / records;
}

TEST(RecordPath, StatelessMapValuesAllocatesOnlyWhatTheMapperMakes) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("streams-plaintext-input")
      .mapValues<std::string>([](const std::string& v) {
        std::string upper = v;  // the one allocation the application makes per record
        for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return upper;
      })
      .to("streams-plaintext-output");
  double per_record = allocations_per_record(builder.build(), 1000);
  RecordProperty("allocations_per_record", std::to_string(per_record));
  std::printf("source -> mapValues -> sink: %.2f allocations per record\n", per_record);
  EXPECT_LE(per_record, 1.0);
}

// What a flatMapValues mapper returns by value is moved into the records it forwards: values
// past std::string's inline size cost their own allocation once, in the mapper.
TEST(RecordPath, FlatMapValuesMovesWhatTheMapperReturns) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("streams-plaintext-input")
      .flatMapValues([](const std::string& v) {
        // the mapper's allocations: the vector and four strings of 25 characters
        std::vector<std::string> parts;
        parts.reserve(4);
        for (size_t i = 0; i < 4; ++i) parts.push_back(v.substr(i * 25, 25));
        return parts;
      })
      .to("streams-plaintext-output");
  double per_record = allocations_per_record(builder.build(), 1000);
  std::printf("source -> flatMapValues(4 values) -> sink: %.2f allocations per record\n",
              per_record);
  // The mapper's five and the list of four records forwarded; copying the values would add four.
  EXPECT_LE(per_record, 6.0);
}

TEST(RecordPath, FilterAllocatesNothing) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("streams-plaintext-input")
      .filter([](const std::string& k, const std::string&) { return !k.empty(); })
      .to("streams-plaintext-output");
  double per_record = allocations_per_record(builder.build(), 1000);
  std::printf("source -> filter -> sink: %.2f allocations per record\n", per_record);
  EXPECT_LE(per_record, 0.0);
}

// Word count as the example builds it (examples/wordcount), each sub-topology alone: lines split
// into words and sent to the repartition topic, then words counted (an in-memory store here, no
// cache, as the example runs).
Topology word_count() {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("streams-plaintext-input")
      .flatMapValues<std::string>([](const std::string& line) {
        std::vector<std::string> words;
        size_t start = 0;
        while (start < line.size()) {
          size_t end = line.find(' ', start);
          if (end == std::string::npos) end = line.size();
          if (end > start) words.emplace_back(line, start, end - start);
          start = end + 1;
        }
        return words;
      })
      .groupBy<std::string>([](const std::string&, const std::string& word) { return word; })
      .count(Materialized<std::string, int64_t>::as("counts-store"))
      .toStream()
      .to("streams-wordcount-output");
  return builder.build();
}

TEST(RecordPath, WordCountSplitting) {
  Input line;
  line.value = "the quick brown fox jumps over the lazy dog again";  // ten words
  double per_line = allocations_per_record(word_count(), 1000, line);
  std::printf("word count, lines to the repartition topic: %.2f allocations per word\n",
              per_line / 10);
  // 0.5 are the mapper's own (its vector growing to ten words), 0.1 the list of words the DSL
  // forwards from, one per line.
  EXPECT_LE(per_line / 10, 0.6);
}

// Counting through the store's cache, as applications count by default: a word the cache holds is
// found once for its read and its write, and written in place.
TEST(RecordPath, WordCountCountingThroughTheCache) {
  Input word;
  word.topic = "alloc-counts-store-repartition";
  word.key = word.value = "quick";
  word.subtopology = 1;
  word.cache_max_bytes = 1 << 20;
  double per_word = allocations_per_record(word_count(), 1000, word);
  std::printf("word count through the cache: %.2f allocations per word\n", per_word);
  // As without the cache: the count is read into the aggregation's buffer and the entry's buffers
  // take the new value, neither allocating.
  EXPECT_LE(per_word, 0.0);
}

TEST(RecordPath, WordCountCounting) {
  Input word;
  word.topic = "alloc-counts-store-repartition";
  word.key = word.value = "quick";
  word.subtopology = 1;
  double per_word = allocations_per_record(word_count(), 1000, word);
  std::printf("word count, words counted: %.2f allocations per word\n", per_word);
  // The count is read into the aggregation's buffer (1.0 when the store returned a new string of
  // 16 bytes, past std::string's inline 15), the value written is built in its own buffers (2.0
  // when it was a new string per word) and the change is forwarded unboxed (3.0 when it rode in
  // the value's Datum).
  EXPECT_LE(per_word, 0.0);
}

// A table's updates pass between table nodes as changes of their own (ChangeRecord), never boxed
// in a value, and the row read is lent to them rather than copied: a table read, mapped and turned
// back into a stream allocates only for what its store keeps. A change boxed in a value again would
// cost one more per table node, a copied row one more.
TEST(RecordPath, TableMapValuesToStream) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("table-input")
      .mapValues([](const std::string& v) { return static_cast<int64_t>(v.size()); })
      .toStream()
      .to("table-output");
  Input row;
  row.topic = "table-input";
  double per_update = allocations_per_record(builder.build(), 1000, row);
  std::printf("table source -> mapValues -> toStream -> sink: %.2f allocations per update\n",
              per_update);
  // The store's: the row serialized, then with its timestamp in front.
  EXPECT_LE(per_update, 2.0);
}

// A re-grouped table's count, as it reads its changes back from the repartition topic: the change
// read into the source's buffers and lent on, the old value subtracted and the new one added.
TEST(RecordPath, RegroupedTableCount) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("table-input")
      .groupBy([](const std::string&, const std::string& v) {
        return KeyValue<std::string, std::string>{v, v};
      })
      .count(Materialized<std::string, int64_t>::as("regrouped"))
      .toStream()
      .to("table-output");
  Input change;
  change.topic = "alloc-regrouped-repartition";
  change.key = "quick";
  // Both values present (flags 3), the new one 5 bytes long: "quick" replaced by "quick".
  change.value = std::string("\x03\0\0\0\x05quickquick", 15);
  change.subtopology = 1;
  double per_update = allocations_per_record(builder.build(), 1000, change);
  std::printf("re-grouped table count: %.2f allocations per change\n", per_update);
  // The store's, as for a stream's count.
  EXPECT_LE(per_update, 2.0);
}

// Counts per key and time window, as the windowed benchmarks count, each record's timestamp one
// millisecond on.
Topology windowed_count(int64_t size_ms, int64_t advance_ms) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("events")
      .groupByKey()
      .windowedBy(TimeWindows::ofSizeWithNoGrace(std::chrono::milliseconds(size_ms))
                      .advanceBy(std::chrono::milliseconds(advance_ms)))
      .count(Materialized<std::string, int64_t>::as("windowed-counts"))
      .toStream()
      .to("windowed-output");
  return builder.build();
}

// A window's update builds its store key in the aggregation's buffer and forwards its windowed
// key lent, not boxed (a windowed key is past a Datum's inline bytes), and the sink writes that
// key into its own buffer: 5.0 allocations per update before (the list of windows, the store key,
// the boxed key, the sink's key bytes).
TEST(RecordPath, TumblingCount) {
  Input event;
  event.topic = "events";
  double per_update = allocations_per_record(windowed_count(1000, 1000), 1000, event);
  std::printf("tumbling count: %.2f allocations per window update\n", per_update);
  // Left: the changelog's copy of the store key into the collector's optional key (the store read
  // goes into the aggregation's buffer).
  EXPECT_LE(per_update, 1.0);
}

// A count over keys past std::string's inline 15 bytes: the store key is serialized into the
// aggregation's buffer (a new string per record before), and the sink writes the windowed key
// through the application's serdes::TimeWindowed into its own buffer (a new string for the inner
// key's bytes and one for the windowed bytes per record before).
TEST(RecordPath, CountsOfLongKeysBuildTheirKeysInBuffers) {
  Input event;
  event.topic = "events";
  event.key = "a key longer than fifteen bytes";
  StreamsBuilder unwindowed;
  unwindowed.stream<std::string, std::string>("events")
      .groupByKey()
      .count(Materialized<std::string, int64_t>::as("counts"))
      .toStream()
      .to("output", Produced<std::string, int64_t>::with(serdes::String(), serdes::Int64()));
  double per_update = allocations_per_record(unwindowed.build(), 1000, event);
  StreamsBuilder windowed;
  windowed.stream<std::string, std::string>("events")
      .groupByKey()
      .windowedBy(TimeWindows::ofSizeWithNoGrace(std::chrono::seconds(1)))
      .count(Materialized<std::string, int64_t>::as("windowed-counts"))
      .toStream()
      .to("output", Produced<Windowed<std::string>, int64_t>::with(
                        serdes::TimeWindowed(serdes::String(), 1000), serdes::Int64()));
  double per_window_update = allocations_per_record(windowed.build(), 1000, event);
  std::printf("counts of long keys: %.2f allocations per update, %.2f per window update\n",
              per_update, per_window_update);
  // Left, unwindowed: the changelog's copy of the key. Windowed: the changelog's copy of the store
  // key, and the typed Windowed<std::string> the sink's serde reads (its key a copy).
  EXPECT_LE(per_update, 1.0);
  EXPECT_LE(per_window_update, 2.0);
}

// Ten windows per record (10 s advancing by 1 s), through a cache so small that it writes each
// update down at once and forwards it: the flush reads each window's key into a Datum it keeps
// rather than a new boxed one.
TEST(RecordPath, HoppingCountThroughTheCache) {
  Input event;
  event.topic = "events";
  event.cache_max_bytes = 1;
  event.first_timestamp = 10000;  // every record in ten windows
  double per_record = allocations_per_record(windowed_count(10000, 1000), 1000, event);
  std::printf("hopping count through the cache: %.2f allocations per window update\n",
              per_record / 10);
  // Left, each of a string: the cache's copy of what it read below (the old value it forwards),
  // the cache's new entry (its node, its key, its value), and the changelog's copy of the key.
  EXPECT_LE(per_record / 10, 5.0);
}

}  // namespace
}  // namespace oxbow::streams
