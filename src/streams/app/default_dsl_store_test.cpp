// A task's stores take their type from Materialized, else from default.dsl.store (Kafka's
// DslStoreSuppliers, KIP-954): which stores a task built from a topology keeps in RocksDB.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"
#include "streams/app/streams_config.h"
#include "streams/runtime/task.h"
#include "streams/state/rocksdb_store.h"
#include "streams/topology/graph_builder.h"

namespace oxbow::streams {
namespace {

using Config = std::map<std::string, std::string>;

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("oxbow-ops-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

class NullCollector : public detail::RecordCollector {
 public:
  void send(const std::string&, const std::optional<std::string>&,
            const std::optional<std::string>&, int64_t, const Headers&, int32_t,
            int64_t*) override {}
  int32_t partitions_of(const std::string&) override { return 1; }
};

// Which stores of a task with a state directory are persistent (RocksDB), by name.
std::map<std::string, bool> persistence(const Topology& topology, const Config& config) {
  TempDir dir;
  auto task_config = detail::task_config_from(config);
  task_config.state_root = dir.path();
  task_config.rocksdb_memory = std::make_shared<detail::RocksDbMemory>(16 << 20);
  NullCollector collector;
  std::map<std::string, bool> out;
  for (const auto& sub : detail::graph_of(topology)->subtopologies()) {
    task_config.subtopology = sub.id;
    detail::Task task(detail::graph_of(topology), sub, task_config, collector);
    for (const auto& s : task.store_snapshots()) out[s.name] = s.persistent;
  }
  return out;
}

TEST(OpsMaterialized, StoreTypeAndDefaultDslStore) {
  StreamsBuilder builder;
  auto grouped = builder.stream<std::string, std::string>("in").groupByKey();
  grouped.count(Materialized<std::string, int64_t>::as("plain"));
  grouped.count(
      Materialized<std::string, int64_t>::as("memory").withStoreType(store_type::IN_MEMORY));
  grouped.count(
      Materialized<std::string, int64_t>::as("rocks").withStoreType(store_type::ROCKS_DB));
  auto topology = builder.build();

  EXPECT_EQ((persistence(topology, {})),
            (std::map<std::string, bool>{{"memory", false}, {"plain", true}, {"rocks", true}}));
  EXPECT_EQ((persistence(topology, {{"default.dsl.store", "in_memory"}})),
            (std::map<std::string, bool>{{"memory", false}, {"plain", false}, {"rocks", true}}));
  EXPECT_THROW((TopologyTestDriver(topology, Config{{"default.dsl.store", "memory"}})),
               std::invalid_argument);

  // Whatever the store, the results are the same.
  TopologyTestDriver driver(topology, {{"default.dsl.store", "in_memory"}});
  driver.createInputTopic<std::string, std::string>("in").pipeInput("k", std::string("v"));
  for (const char* store : {"plain", "memory", "rocks"})
    EXPECT_EQ((driver.getKeyValueStore<std::string, int64_t>(store).get("k")), 1) << store;
  EXPECT_EQ(detail::Access::store_options(driver, "memory").type, store_type::IN_MEMORY);
}

}  // namespace
}  // namespace oxbow::streams
