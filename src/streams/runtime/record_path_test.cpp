// Heap allocations on a task's record path, counted by replacing the global operator new for this
// test binary: a regression that boxes, copies or re-serializes per record fails here rather than
// only slowing a benchmark. What librdkafka allocates (with malloc, outside these counts) is the
// client's, and the same for the raw pipe the benchmarks compare with.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <new>
#include <string>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/topology.h"
#include "streams/runtime/task.h"

namespace {

thread_local bool counting = false;
thread_local int64_t allocations = 0;

}  // namespace

// GCC pairs the replacements' malloc and free with the new and delete expressions it inlines them
// into, and warns of a mismatch that is not one.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

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

// Allocations per record once the task is warm, over `records` records of a key of 10 bytes and
// a value of 100 (both past std::string's 15 inline characters where it matters: the value).
double allocations_per_record(const Topology& topology, int records) {
  auto graph = topology.graph();
  graph->validate();
  DiscardingCollector collector;
  detail::TaskConfig config;
  config.application_id = "alloc";
  config.cache_max_bytes = 0;
  detail::Task task(graph, graph->subtopologies().at(0), config, collector);
  std::string key = "key-000001";
  std::string value(100, 'v');
  detail::RawRecord raw;
  raw.topic = "streams-plaintext-input";
  raw.key = key;
  raw.value = value;
  for (int i = 0; i < 100; ++i) task.process(raw);  // warm: buffers reach their size
  allocations = 0;
  counting = true;
  for (int i = 0; i < records; ++i) {
    raw.offset = i;
    raw.timestamp = i;
    task.process(raw);
  }
  counting = false;
  EXPECT_EQ(collector.sent, 100 + records);
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

TEST(RecordPath, FilterAllocatesNothing) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("streams-plaintext-input")
      .filter([](const std::string& k, const std::string&) { return !k.empty(); })
      .to("streams-plaintext-output");
  double per_record = allocations_per_record(builder.build(), 1000);
  std::printf("source -> filter -> sink: %.2f allocations per record\n", per_record);
  EXPECT_LE(per_record, 0.0);
}

}  // namespace
}  // namespace oxbow::streams
