#include "oxbow/streams/test_driver.h"

#include <algorithm>
#include <deque>
#include <set>
#include <stdexcept>

#include "streams/app/streams_config.h"
#include "streams/runtime/global_updater.h"
#include "streams/runtime/task.h"
#include "streams/state/timestamped.h"
#include "streams/state/window_key.h"
#include "streams/state/window_queries.h"

namespace oxbow::streams {

using detail::RawRecord;

class TopologyTestDriver::Core : public detail::RecordCollector {
 public:
  Core(const Topology& topology, const std::map<std::string, std::string>& config,
       const int64_t* wall_clock_ms)
      : graph_(detail::graph_of(topology)) {
    graph_->validate();
    auto task_config = detail::task_config_from(config);
    task_config.clock = [wall_clock_ms] { return *wall_clock_ms; };
    if (!graph_->global_tables().empty()) {
      globals_ = std::make_shared<detail::GlobalStores>();
      for (const auto& g : graph_->global_tables()) globals_->store(g.store);
      task_config.globals = globals_;
      global_updater_ = std::make_unique<detail::GlobalStateUpdater>(
          graph_, globals_, task_config.on_deserialization_error, task_config.application_id);
    }
    // The driver runs its tasks as one stream thread does: one cache budget for all of them.
    task_config.cache_budget = std::make_shared<detail::CacheBudget>();
    task_config.cache_budget->max_bytes = task_config.cache_max_bytes;
    for (const auto& sub : graph_->subtopologies()) {
      task_config.subtopology = sub.id;
      tasks_.push_back(std::make_unique<detail::Task>(graph_, sub, task_config, *this));
    }
  }

  void send(const std::string& topic, const std::optional<std::string>& key,
            const std::optional<std::string>& value, int64_t timestamp, const Headers& headers,
            int32_t, int64_t*) override {
    ProducedRecord r{topic, key, value, timestamp, headers};
    outputs_[topic].push_back(r);
    produced_.insert(topic);
    if (read_by_a_task(topic)) pending_.push_back(std::move(r));
  }
  int32_t partitions_of(const std::string&) override { return 1; }

  void pipe(RawRecord record) {
    // A global table's topic goes straight into its store, as Kafka's driver does.
    if (graph_->global_table_of(record.topic)) return global_updater_->apply(record);
    // As Kafka's driver: each record, the one piped in and then each the topology wrote to a
    // topic it reads (in the order written), is processed and then committed, which flushes
    // the caches.
    deliver(record);
    commit();
    process_pending();
  }

  // As Kafka's driver: the wall-clock punctuators due, then a commit, then what they wrote.
  void advance_wall_clock(int64_t now) {
    for (auto& t : tasks_)
      if (t->has_punctuators()) t->punctuate(true, now);
    commit();
    process_pending();
  }

  std::optional<ProducedRecord> read(const std::string& topic) {
    auto it = outputs_.find(topic);
    if (it == outputs_.end() || it->second.empty()) return std::nullopt;
    auto r = std::move(it->second.front());
    it->second.pop_front();
    return r;
  }
  size_t queue_size(const std::string& topic) const {
    auto it = outputs_.find(topic);
    return it == outputs_.end() ? 0 : it->second.size();
  }
  std::vector<std::string> produced() const { return {produced_.begin(), produced_.end()}; }

  detail::KeyValueStore& store(const std::string& name) {
    for (auto& t : tasks_)
      if (auto* s = t->find_store(name)) return *s;
    throw std::invalid_argument("no store named " + name);
  }
  const detail::StoreOptions& store_options(const std::string& name) const {
    const auto* spec = graph_->store(name);
    if (!spec) throw std::invalid_argument("no store named " + name);
    return spec->options;
  }
  void set_processing_handler(const ProcessingExceptionHandler& handler) {
    for (auto& t : tasks_) t->set_processing_exception_handler(handler);
  }
  int64_t dropped() const {
    int64_t n = 0;
    for (const auto& t : tasks_) n += t->counters().dropped;
    return n;
  }
  int64_t skipped() const {
    int64_t n = 0;
    for (const auto& t : tasks_)
      n += t->counters().skipped_undecodable + t->counters().skipped_timestamp;
    return n;
  }

 private:
  bool read_by_a_task(const std::string& topic) const {
    for (const auto& t : tasks_)
      if (t->reads(topic)) return true;
    return false;
  }
  void commit() {
    for (auto& t : tasks_) t->flush();
  }
  void process_pending() {
    while (!pending_.empty()) {
      auto r = std::move(pending_.front());
      pending_.pop_front();
      deliver(RawRecord{r.topic, 0, offsets_[r.topic]++, r.timestamp, r.key, r.value, r.headers});
      commit();
    }
  }
  // Each record, then the stream-time punctuators it made due (Kafka's driver punctuates after
  // every record).
  void deliver(const RawRecord& record) {
    for (auto& t : tasks_) {
      if (!t->reads(record.topic)) continue;
      t->process(record);
      if (t->has_punctuators()) t->punctuate(false, t->stream_time());
    }
  }

  std::shared_ptr<const detail::GraphBuilder> graph_;
  std::vector<std::unique_ptr<detail::Task>> tasks_;
  std::shared_ptr<detail::GlobalStores> globals_;
  std::unique_ptr<detail::GlobalStateUpdater> global_updater_;
  std::map<std::string, std::deque<ProducedRecord>> outputs_;
  std::set<std::string> produced_;
  std::deque<ProducedRecord> pending_;
  std::map<std::string, int64_t> offsets_;
};

TopologyTestDriver::TopologyTestDriver(const Topology& topology,
                                       std::map<std::string, std::string> config,
                                       int64_t wall_clock_ms)
    : wall_clock_ms_(wall_clock_ms) {
  core_ = std::make_unique<Core>(topology, config, &wall_clock_ms_);
}

void TopologyTestDriver::advanceWallClockTime(std::chrono::milliseconds by) {
  wall_clock_ms_ += by.count();
  core_->advance_wall_clock(wall_clock_ms_);
}

TopologyTestDriver::~TopologyTestDriver() = default;

void TopologyTestDriver::setProcessingExceptionHandler(ProcessingExceptionHandler handler) {
  core_->set_processing_handler(handler);
}

void TopologyTestDriver::pipe(const std::string& topic, std::optional<std::string> key,
                              std::optional<std::string> value, int64_t timestamp,
                              Headers headers) {
  core_->pipe(
      RawRecord{topic, 0, input_offsets_[topic]++, timestamp, key, value, std::move(headers)});
}

std::optional<ProducedRecord> TopologyTestDriver::read(const std::string& topic) {
  return core_->read(topic);
}

size_t TopologyTestDriver::queueSize(const std::string& topic) const {
  return core_->queue_size(topic);
}

std::vector<std::string> TopologyTestDriver::producedTopicNames() const {
  return core_->produced();
}

const detail::StoreOptions& TopologyTestDriver::storeOptions(const std::string& store) const {
  return core_->store_options(store);
}

// Values as the application wrote them: a timestamped store's timestamps left out, as Kafka's
// driver's getKeyValueStore() does.
std::optional<std::string> TopologyTestDriver::storeGet(const std::string& store,
                                                        const std::string& key) {
  auto bytes = core_->store(store).get(key);
  if (!core_->store_options(store).timestamped) return bytes;
  auto split = detail::split_timestamp(bytes);
  return split ? std::optional<std::string>(std::move(split->value)) : std::nullopt;
}

std::vector<std::pair<std::string, std::string>> TopologyTestDriver::storeAll(
    const std::string& store) {
  auto all = core_->store(store).all();
  if (core_->store_options(store).timestamped)
    for (auto& [key, value] : all) value = detail::split_timestamp(value)->value;
  return all;
}

detail::CursorPtr TopologyTestDriver::storeScan(const std::string& store,
                                                const detail::KeyRange& range) {
  return detail::store_scan(core_->store(store), range);
}

detail::CursorPtr TopologyTestDriver::windowScan(const std::string& store,
                                                 const detail::WindowScan& scan) {
  auto range = detail::window_range(scan);
  if (!range) return detail::CursorPtr(detail::vector_cursor({}, detail::KeyRange()).release());
  auto& bytes_store = core_->store(store);
  return detail::CursorPtr(detail::window_cursor(bytes_store.scan(*range), scan).release());
}

// The store's serde writes a key with its window; the window's bytes (a window's start and
// sequence number, a session's end and start) are cut off.
std::string TopologyTestDriver::windowKeyBytes(const std::string& store, const Datum& key) const {
  const auto& options = core_->store_options(store);
  std::string bytes = options.key_serde.serialize(store, Datum(detail::WindowedDatum{key, {}}));
  size_t suffix = options.session_layout ? detail::kSessionKeySuffix : detail::kWindowKeySuffix;
  bytes.resize(bytes.size() - std::min(suffix, bytes.size()));
  return bytes;
}

int64_t TopologyTestDriver::droppedRecords() const {
  return core_->dropped();
}
int64_t TopologyTestDriver::skippedRecords() const {
  return core_->skipped();
}

}  // namespace oxbow::streams
