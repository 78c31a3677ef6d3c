#include "streams/runtime/task.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "oxbow/streams/errors.h"
#include "streams/state/timestamped.h"

namespace oxbow::streams::detail {

namespace {

// A processing error the handler chose to fail on (Kafka's FailedProcessingException): the nodes
// upstream of the failing one pass it on rather than asking the handler again.
struct ProcessingFailed : StreamsException {
  using StreamsException::StreamsException;
};

}  // namespace

Task::Task(std::shared_ptr<const GraphBuilder> graph, const Subtopology& sub, TaskConfig config,
           RecordCollector& collector)
    : graph_(std::move(graph)), config_(std::move(config)), collector_(collector) {
  if (!config_.cache_budget) {
    config_.cache_budget = std::make_shared<CacheBudget>();
    config_.cache_budget->max_bytes = config_.cache_max_bytes;
  }
  std::map<size_t, size_t> local;  // graph index -> task index
  for (size_t i : sub.nodes) {
    local[i] = nodes_.size();
    nodes_.push_back(NodeRuntime{&graph_->nodes()[i], nullptr, {}});
  }
  for (auto& n : nodes_) {
    for (const auto& c : n.spec->children) n.children.push_back(local.at(graph_->index_of(c)));
    if (n.spec->kind == NodeDescription::Kind::kSource) {
      for (const auto& t : n.spec->topics) {
        std::string wire = n.spec->internal ? config_.application_id + "-" + t : t;
        sources_[wire] = static_cast<size_t>(&n - nodes_.data());
        input_topics_.push_back(wire);
      }
    } else {
      n.processor = n.spec->factory();
      bool changes = n.processor->takes_changes();
      if (changes != (n.spec->takes == Flow::kChanges))
        throw TopologyException(fmt::format("the processor of {} takes {}, not what the node takes",
                                            n.spec->name,
                                            changes ? "a table's changes" : "stream records"));
    }
  }
  source_buffers_.resize(nodes_.size());
  create_stores(sub);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i].processor) continue;
    current_ = i;
    nodes_[i].processor->init(*this);
  }
}

Task::~Task() {
  for (auto& n : nodes_)
    if (n.processor) n.processor->close();
}

std::string Task::changelog_topic(const std::string& store) const {
  const StoreSpec* spec = graph_->store(store);
  if (spec && !spec->source_topic.empty()) return spec->source_topic;
  return config_.application_id + "-" + store + "-changelog";
}

std::vector<std::pair<std::string, std::string>> Task::changelogs() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, store] : stores_) {
    const StoreSpec* spec = graph_->store(name);
    if (spec->options.logging || !spec->source_topic.empty())
      out.emplace_back(name, changelog_topic(name));
  }
  return out;
}

std::string Task::id() const {
  return TaskId{config_.subtopology, config_.partition, config_.topology}.toString();
}

std::optional<int64_t> Task::restore_from(const std::string& store) const {
  auto it = persistent_.find(store);
  if (it == persistent_.end()) return std::nullopt;
  return it->second->committed_offset();
}

void Task::wipe(const std::string& store) {
  if (auto it = persistent_.find(store); it != persistent_.end()) {
    spdlog::warn("task {}: local state of {} does not match its changelog; rebuilding it", id(),
                 store);
    it->second->wipe();
  }
}

void Task::restore(const std::string& store, std::string_view key,
                   std::optional<std::string_view> value, int64_t timestamp) {
  static const RecordContext kRestoring;
  ++counters_.restored;
  // The stamped value is built in a buffer kept for the next record: no allocation per record.
  if (value && graph_->store(store)->options.timestamped) {
    with_timestamp_into(timestamp, *value, restore_buffer_);
    value = restore_buffer_;
  }
  if (auto it = persistent_.find(store); it != persistent_.end())
    return it->second->restore(key, value);
  std::optional<std::string> copy;
  if (value) copy.emplace(*value);
  bottom_.at(store)->put(std::string(key), copy, kRestoring);
}

void Task::finish_restore(const std::string& store, int64_t next_offset) {
  if (auto it = persistent_.find(store); it != persistent_.end())
    it->second->finish_restore_batch(next_offset);
}

void Task::checkpoint(const std::map<std::string, int64_t>& next_input_offsets) {
  if (persistent_.empty()) return;
  TopicPartitionOffsets file;
  for (auto& [name, store] : persistent_) {
    std::optional<int64_t> next = store->committed_offset();
    const StoreSpec* spec = graph_->store(name);
    if (!spec->source_topic.empty()) {
      if (auto it = next_input_offsets.find(spec->source_topic); it != next_input_offsets.end())
        next = std::max(next.value_or(0), it->second);
    } else if (auto it = delivered_.find(name); it != delivered_.end() && *it->second >= 0) {
      next = std::max(next.value_or(0), *it->second + 1);
    }
    store->commit(next);
    if (next && (spec->options.logging || !spec->source_topic.empty()))
      file[{changelog_topic(name), config_.partition}] = *next;
  }
  directory_->checkpoint(file);
}

void Task::discard_uncommitted() {
  for (auto& [name, store] : persistent_) store->discard();
}

std::vector<StoreSnapshot> Task::store_snapshots() const {
  std::vector<StoreSnapshot> out;
  for (const auto& [name, store] : bottom_) {
    StoreSnapshot snap{name, false, store->approximate_num_entries(), 0, 0};
    if (auto it = persistent_.find(name); it != persistent_.end()) {
      snap.persistent = true;
      snap.memtable_bytes = it->second->memtable_bytes();
      snap.disk_bytes = it->second->disk_bytes();
    }
    out.push_back(std::move(snap));
  }
  return out;
}

void Task::lock_directory() {
  std::string path = task_directory(config_.state_root,
                                    {config_.subtopology, config_.partition, config_.topology});
  // The previous owner may be a thread of this process or another instance still closing the
  // task after a rebalance; it lets go within seconds.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(directory_ = TaskDirectory::lock(path))) {
    if (std::chrono::steady_clock::now() > deadline)
      throw StreamsException("task " + id() + ": the state directory " + path +
                             " is locked by another instance using the same state.dir");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::unique_ptr<KeyValueStore> Task::make_bottom_store(const StoreSpec& spec) {
  StoreType type =
      spec.options.type == StoreType::kDefault ? config_.default_store : spec.options.type;
  if (type == StoreType::kInMemory || !config_.rocksdb_memory)
    return make_in_memory_store(spec.name);
  if (!directory_) lock_directory();
  auto store = RocksDbStore::open(spec.name, directory_->store_path(spec.name),
                                  config_.rocksdb_memory, config_.exactly_once);
  persistent_[spec.name] = store.get();
  return store;
}

void Task::create_stores(const Subtopology& sub) {
  for (const auto& name : sub.stores) {
    const StoreSpec* spec = graph_->store(name);
    std::unique_ptr<KeyValueStore> store = make_bottom_store(*spec);
    bottom_[name] = store.get();
    if (spec->options.logging && spec->source_topic.empty()) {
      std::string topic = changelog_topic(name);
      int64_t* slot = collector_.delivery_slot(topic, config_.partition);
      if (slot) delivered_[name] = slot;
      store = make_logging_store(
          std::move(store),
          [this, topic, slot, timestamped = spec->options.timestamped](
              const std::string& key, const std::optional<std::string>& value, int64_t timestamp) {
            static const Headers kNoHeaders;
            if (auto split = timestamped ? split_timestamp(value) : std::nullopt) {
              collector_.send(topic, key, split->value, split->timestamp, kNoHeaders,
                              config_.partition, slot);
              return;
            }
            collector_.send(topic, key, value, timestamp, kNoHeaders, config_.partition, slot);
          });
    }
    if (spec->options.caching && config_.cache_max_bytes > 0) {
      auto cache = std::make_unique<CachingStore>(std::move(store), *config_.cache_budget);
      if (spec->options.retention_ms == 0 && !spec->options.session_layout)
        cache->forward_transient_deletes();
      store = std::move(cache);
    }
    stores_[name] = std::move(store);
    if (spec->options.retention_ms > 0)
      expiry_.add(*bottom_[name], *stores_[name], spec->options.retention_ms,
                  spec->options.session_layout);
  }
  // Caches flush in node order, so that what one flush forwards into another cache is flushed too.
  for (const auto& n : nodes_)
    for (const auto& s : n.spec->stores)
      if (std::find(flush_order_.begin(), flush_order_.end(), s) == flush_order_.end())
        flush_order_.push_back(s);
}

KeyValueStore& Task::store(const std::string& name) {
  if (KeyValueStore* s = find_store(name)) return *s;
  throw TopologyException("node " + nodes_[current_].spec->name + " has no store " + name);
}

KeyValueStore* Task::find_store(const std::string& name) {
  auto it = stores_.find(name);
  if (it != stores_.end()) return it->second.get();
  return config_.globals ? config_.globals->find(name) : nullptr;
}

bool Task::set_flush_listener(const std::string& name, FlushListener listener) {
  auto* cache = dynamic_cast<CachingStore*>(&store(name));
  if (!cache) return false;
  size_t owner = current_;
  cache->set_flush_listener([this, owner, l = std::move(listener)](
                                const std::string& k, const std::optional<std::string>& n,
                                const std::optional<std::string>& o, const RecordContext& rc) {
    size_t saved = current_;
    RecordContext saved_context = record_context_;
    current_ = owner;
    record_context_ = rc;
    l(k, n, o, rc);
    current_ = saved;
    record_context_ = saved_context;
  });
  cache_owner_[name] = owner;
  return true;
}

void Task::record_dropped(const char* reason) {
  ++counters_.dropped;
  spdlog::debug("task {}: {} dropped a record ({}) from {}-{} at offset {}", id(),
                nodes_[current_].spec->name, reason, record_context_.topic,
                record_context_.partition, record_context_.offset);
}

bool Task::decode(const NodeSpec& source, const RawRecord& raw, SourceBuffers& into) {
  const auto& consumed = source.consumed;
  try {
    if (raw.key)
      consumed.key_serde.deserialize_to(raw.topic, *raw.key, into.key);
    else
      into.key.reset();
    if (source.read_change) {
      into.change.new_value.reset();
      into.change.old_value.reset();
      if (raw.value) source.read_change(raw.topic, *raw.value, into.change);
    } else if (raw.value) {
      consumed.value_serde.deserialize_to(raw.topic, *raw.value, into.value);
    } else {
      into.value.reset();
    }
    return true;
  } catch (const std::exception& e) {
    if (config_.on_deserialization_error == DeserializationPolicy::kLogAndFail)
      throw StreamsException(fmt::format(
          "Deserialization exception handler is set to fail upon a deserialization error: "
          "topic {} partition {} offset {}: {}",
          raw.topic, raw.partition, raw.offset, e.what()));
    ++counters_.skipped_undecodable;
    spdlog::warn(
        "skipping record due to deserialization error: topic {} partition {} offset {}: {}",
        raw.topic, raw.partition, raw.offset, e.what());
    return false;
  }
}

void Task::process(const RawRecord& raw) {
  auto it = sources_.find(raw.topic);
  if (it == sources_.end()) return;
  size_t source = it->second;
  const NodeSpec& spec = *nodes_[source].spec;
  record_context_ =
      RecordContext{it->first, raw.partition, raw.offset, raw.timestamp, &raw.headers};
  SourceBuffers& buffers = source_buffers_[source];
  if (!decode(spec, raw, buffers)) return;
  Record record{Datum::lend(buffers.key), Datum::lend(buffers.value), raw.timestamp, raw.headers};
  if (spec.consumed.timestamp_extractor)
    record.timestamp = spec.consumed.timestamp_extractor(record, record_context_, stream_time_);
  if (record.timestamp < 0) {
    ++counters_.skipped_timestamp;
    spdlog::warn("skipping record with invalid timestamp {}: topic {} partition {} offset {}",
                 record.timestamp, raw.topic, raw.partition, raw.offset);
    return;
  }
  record_context_.timestamp = record.timestamp;
  previous_stream_time_ = stream_time_;
  stream_time_ = std::max(stream_time_, record.timestamp);
  ++counters_.processed;
  current_ = source;
  if (spec.forwards == Flow::kChanges)
    return forward_change(ChangeRecord{
        std::move(record.key),
        Change{Datum::lend(buffers.change.new_value), Datum::lend(buffers.change.old_value)},
        record.timestamp, std::move(record.headers)});
  forward(record);
}

void Task::run(size_t node, const Record& record) {
  size_t saved = current_;
  current_ = node;
  try {
    nodes_[node].processor->process(record);
  } catch (...) {
    on_processing_exception(node, &record);
  }
  current_ = saved;
}

void Task::run_change(size_t node, const ChangeRecord& change) {
  size_t saved = current_;
  current_ = node;
  try {
    nodes_[node].processor->process_change(change);
  } catch (...) {
    // The handler sees the update as a record of its key and new value.
    Record record{Datum::lend(change.key), Datum::lend(change.change.new_value), change.timestamp,
                  change.headers};
    on_processing_exception(node, &record);
  }
  current_ = saved;
}

void Task::on_processing_exception(size_t node, const Record* record) {
  try {
    throw;
  } catch (const ProcessingFailed&) {
    throw;
  } catch (const TaskFatalError&) {
    throw;
  } catch (const std::exception& e) {
    decide(node, record, e);
  } catch (...) {
    decide(node, record, std::runtime_error("an exception not derived from std::exception"));
  }
}

void Task::decide(size_t node, const Record* record, const std::exception& error) {
  const std::string& name = nodes_[node].spec->name;
  std::string task = id();
  ErrorHandlerContext context(record_context_.topic, record_context_.partition,
                              record_context_.offset, record_context_.headers, name, task,
                              record_context_.timestamp);
  auto where = [&] {
    return fmt::format("task {}, processor {}, topic '{}', partition {}, offset {}", task, name,
                       record_context_.topic, record_context_.partition, record_context_.offset);
  };
  ProcessingExceptionHandlerResponse response;
  try {
    const auto& handler = config_.on_processing_error;
    response = handler ? handler(context, record, error)
                       : LogAndFailProcessingExceptionHandler(context, record, error);
  } catch (const std::exception& fatal) {
    throw ProcessingFailed(fmt::format("{} (the processing exception handler threw: {}; {})",
                                       error.what(), fatal.what(), where()));
  }
  // The message starts with the original's, as before the handler existed, and the original is
  // kept inside (std::rethrow_if_nested), as Kafka's StreamsException keeps its cause.
  if (response != ProcessingExceptionHandlerResponse::CONTINUE)
    std::throw_with_nested(ProcessingFailed(
        fmt::format("{} (processing exception handler: FAIL; {})", error.what(), where())));
  ++counters_.dropped;
}

void Task::forward(const Record& record) {
  for (size_t child : nodes_[current_].children) run(child, record);
}

void Task::forward_change(const ChangeRecord& change) {
  size_t saved = current_;
  for (size_t child : nodes_[saved].children) run_change(child, change);
}

void Task::forward(const Record& record, const std::string& child) {
  for (size_t c : nodes_[current_].children)
    if (nodes_[c].spec->name == child) return run(c, record);
  throw StreamsException("node " + nodes_[current_].spec->name + " has no child " + child);
}

void Task::flush() {
  for (const auto& name : flush_order_) stores_.at(name)->flush();
  expiry_.expire(stream_time_);
}

std::shared_ptr<bool> Task::schedule(int64_t interval_ms, bool wall_clock, Punctuator punctuator) {
  if (interval_ms < 1)
    throw std::invalid_argument("a punctuation interval must be at least 1 ms, not " +
                                std::to_string(interval_ms));
  auto cancelled = std::make_shared<bool>(false);
  // Stream time: aligned to 0, so the first record punctuates. Wall clock: one interval from now.
  int64_t next = wall_clock ? wall_clock_ms() + interval_ms : 0;
  punctuations_.push_back(
      {current_, interval_ms, next, wall_clock, std::move(punctuator), cancelled});
  return cancelled;
}

int64_t Task::wall_clock_ms() const {
  if (config_.clock) return config_.clock();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Task::punctuation_due(bool wall_clock, int64_t now) const {
  if (!wall_clock && stream_time_ < 0) return false;
  for (const auto& p : punctuations_)
    if (p.wall_clock == wall_clock && !*p.cancelled && p.next <= now) return true;
  return false;
}

void Task::punctuate(bool wall_clock, int64_t now) {
  if (!wall_clock && stream_time_ < 0) return;
  while (true) {
    Punctuation* due = nullptr;
    for (auto& p : punctuations_)
      if (p.wall_clock == wall_clock && !*p.cancelled && p.next <= now &&
          (!due || p.next < due->next))
        due = &p;
    if (!due) break;
    // The next time: one interval on, or, when intervals were missed, the first one ahead.
    int64_t next = due->next + due->interval;
    if (now >= next) next = due->next + ((now - due->next) / due->interval + 1) * due->interval;
    due->next = next;
    Punctuator run = due->run;  // the punctuator may schedule more, moving the vector
    size_t saved = current_;
    RecordContext saved_context = record_context_;
    size_t node = due->node;
    current_ = node;
    record_context_ = RecordContext{"", -1, -1, now, nullptr};
    try {
      run(now);
    } catch (...) {
      on_processing_exception(node, nullptr);
    }
    current_ = saved;
    record_context_ = saved_context;
  }
  punctuations_.erase(std::remove_if(punctuations_.begin(), punctuations_.end(),
                                     [](const Punctuation& p) { return *p.cancelled; }),
                      punctuations_.end());
}

}  // namespace oxbow::streams::detail
