#include "streams/runtime/stream_thread.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>

#include "oxbow/streams/errors.h"
#include "streams/runtime/partition_time.h"

namespace oxbow::streams::detail {

namespace {

std::optional<std::string_view> view_of(const void* data, size_t size) {
  if (!data) return std::nullopt;
  return std::string_view(static_cast<const char*>(data), size);
}

}  // namespace

StreamThread::StreamThread(std::shared_ptr<const GraphBuilder> graph, ThreadConfig config)
    : graph_(std::move(graph)),
      subtopologies_(graph_->subtopologies()),
      config_(std::move(config)) {
  metrics_->thread_id = config_.client_id;
}

StreamThread::~StreamThread() {
  request_stop();
  join();
}

void StreamThread::start() {
  const auto& app_id = config_.task.application_id;
  // Oxbow's own member (membership.cpp) takes part in the group; the consumer is assigned its
  // tasks' partitions and reads their committed offsets under the group's id.
  auto* cconf = client_conf(
      config_.app, ClientRole::kConsumer,
      {{"group.id", app_id},
       {"client.id", config_.client_id + "-consumer"},
       {"enable.auto.commit", "false"},
       {"isolation.level", config_.exactly_once ? "read_committed" : "read_uncommitted"}},
      // librdkafka's default refills its prefetch queue below 100,000 messages, which stalls
      // fetching at Streams' rates. Not more: each queued message costs ~250 bytes beyond its
      // payload, which queued.max.messages.kbytes does not count (5 M-key test: 1 M queued
      // messages took the RSS from 186 to 471 MiB).
      {{"queued.min.messages", "200000"},
       // Kafka Streams' default, which the application may change (also unprefixed, as there).
       {"auto.offset.reset", config_.app.count("auto.offset.reset")
                                 ? config_.app.at("auto.offset.reset")
                                 : "earliest"}});
  rd_kafka_conf_set_opaque(cconf, this);
  consumer_ = make_client(RD_KAFKA_CONSUMER, cconf);
  fetch_restarter_ = std::make_unique<FetchRestarter>(consumer_.get());
  reader_ = std::make_unique<ChangelogReader>(
      config_, consumer_.get(), *metrics_, [this](Task* task) { finish_task_restoration(task); });
  rd_kafka_poll_set_consumer(consumer_.get());
  set_offset_reset_policies();
  producer_ = std::make_unique<StreamsProducer>(config_, *metrics_);
  for (const auto& spec : graph_->internal_topics())
    repartition_topics_.insert(app_id + "-" + spec.name);
  // Sink topics' metadata now, not on the producer's first send (librdkafka would hold the first
  // records for up to a second while it fetches it).
  for (const auto& n : graph_->nodes())
    if (n.kind == NodeDescription::Kind::kSink && !n.dynamic_topic)
      for (const auto& t : n.topics) producer_->partitions_of(n.internal ? app_id + "-" + t : t);

  // The group sees one anchor topic per sub-topology, the source topic with the most partitions
  // (as Kafka, a sub-topology has as many tasks as its widest input; task p reads partition p of
  // each input that has one), so the anchor's partitions name the sub-topology's tasks.
  for (const auto& sub : subtopologies_) {
    std::set<std::string> sources;
    for (const auto& t : sub.source_topics)
      sources.insert(graph_->is_internal_topic(t) ? app_id + "-" + t : t);
    for (const auto& t : sources) {
      subtopology_of_[t] = sub.id;
      auto anchor = anchor_of_.find(sub.id);
      if (anchor == anchor_of_.end() ||
          producer_->partitions_of(t) > producer_->partitions_of(anchor->second))
        anchor_of_[sub.id] = t;
    }
  }
  start_membership();
  running_ = true;
  thread_ = std::thread([this] { run(); });
}

void StreamThread::join() {
  if (thread_.joinable()) thread_.join();
}

void StreamThread::run() {
  try {
    loop();
    if (!failed_) commit();
  } catch (const std::exception& e) {
    failure_ = e.what();
    failed_ = true;
    spdlog::error("stream thread {} failed: {}", config_.client_id, e.what());
    producer_->abort_transaction();
  }
  // Leaves the group (a static member stays until its session times out).
  if (member_) member_->stop();
  if (standbys_) standbys_->assign({});  // made durable and closed; queries find none
  rd_kafka_consumer_close(consumer_.get());
  reader_->close();
  {
    std::unique_lock lock(tasks_mutex_);
    tasks_.clear();
  }
  by_input_.clear();
  route_ = {};
  producer_->close(10000);
  running_ = false;
}

void StreamThread::loop() {
  last_commit_ms_ = now_ms();
  int unserved = 0;  // records processed since the producer's callbacks were last served
  while (!stop_) {
    // Owned, so that a record whose processing throws is still given back: librdkafka's
    // rd_kafka_destroy() waits for every message it handed out.
    bool buffering = false;
    if (grouped_tasks_ > 0)
      for (auto& [id, t] : tasks_)
        if (t.group && t.group->buffered() > 0) {
          drain(t);  // a partition it waited for may have caught up
          buffering = buffering || t.group->buffered() > 0;
        }
    int timeout_ms = reader_->restoring()           ? 0
                     : buffering                    ? 5
                     : fetch_restarter_->watching() ? 1
                                                    : 100;
    PartitionGroup::Message m(rd_kafka_consumer_poll(consumer_.get(), timeout_ms));
    bool idle = !m;
    if (idle && !reader_->restoring() &&
        fetch_restarter_->idle(
            [this](const char* topic, int32_t p) { return paused_by_us(topic, p); }))
      metrics_->fetch_restarts.add();
    if (m) {
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        fetch_restarter_->got_record(m->key_len + m->len);
        dispatch(std::move(m));
      } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        spdlog::warn("stream thread {}: consumer: {}", config_.client_id,
                     rd_kafka_message_errstr(m.get()));
      }
    }
    int64_t now = now_ms();
    // Restoration and the ready tasks' records take turns of about 50 ms each while both have
    // work: a slice of restoration after every record would leave those tasks ~20 records/s.
    if (reader_->restoring() &&
        (idle || now - last_restore_step_ms_ >= ChangelogReader::kRestoreTurnMs)) {
      if (reader_->restore()) {
        rebalancing_ = false;
        publish_metrics();
      }
      now = last_restore_step_ms_ = now_ms();
    }
    if (idle || now - last_group_poll_ms_ >= 10) {
      last_group_poll_ms_ = now;
      poll_group();
    }
    // Delivery reports are served every 64 records, when the input is idle and at least every
    // 10 ms: once per record, the call was 3.5% of a stateless application's CPU.
    if (idle || ++unserved >= 64 || now - last_served_ms_ >= 10) {
      producer_->serve_delivery_reports();
      unserved = 0;
      last_served_ms_ = now;
    }
    producer_->throw_if_failed();
    if (now != last_wall_punctuation_ms_) punctuate_wall_clock(now);
    if (commit_requested_ || now - last_commit_ms_ >= config_.commit_interval_ms) commit();
    if (now - last_metrics_ms_ >= 1000) publish_metrics();
  }
}

void StreamThread::publish_metrics() {
  last_metrics_ms_ = now_ms();
  std::vector<TaskSnapshot> tasks;
  for (auto& [id, t] : tasks_) {
    TaskSnapshot snap{t.task->id(), t.task->counters(), t.task->store_snapshots(), {}};
    for (const auto& topic : t.task->input_topics()) {
      int64_t low = 0, high = 0;
      auto next = t.next_offsets.find(topic);
      if (next == t.next_offsets.end() ||
          rd_kafka_get_watermark_offsets(consumer_.get(), topic.c_str(), id.second, &low, &high) !=
              RD_KAFKA_RESP_ERR_NO_ERROR ||
          high < 0)
        continue;
      snap.lags.push_back({topic, id.second, std::max<int64_t>(0, high - next->second)});
    }
    tasks.push_back(std::move(snap));
  }
  std::vector<StorePosition> positions;
  for (auto& [id, t] : tasks_)
    for (const auto& [store, topic] : t.task->changelogs()) {
      int64_t position = reader_->position(topic, id.second).value_or(-1);
      positions.push_back({store, topic, id.second, position, -1, false});
    }
  int standby_count = 0;
  if (standbys_) {
    standby_count = static_cast<int>(standbys_->size());
    for (const auto& p : standbys_->positions())
      positions.push_back({p.store, p.topic, p.partition, p.next, p.end, true});
  }
  std::lock_guard lock(metrics_->mutex);
  metrics_->tasks = std::move(tasks);
  metrics_->positions = std::move(positions);
  metrics_->standby_tasks = standby_count;
}

StreamThread::ActiveTask* StreamThread::route(const rd_kafka_message_t* m) {
  // Records come in runs from one partition: the last one's route saves looking up the task and
  // the offset slot of each.
  if (m->rkt != route_.rkt || m->partition != route_.partition) {
    std::string topic = rd_kafka_topic_name(m->rkt);
    auto it = by_input_.find({topic, m->partition});
    if (it == by_input_.end()) return nullptr;
    route_ = {m->rkt, m->partition, it->second, std::move(topic), nullptr};
  }
  return route_.task;
}

void StreamThread::process(const rd_kafka_message_t* m) {
  ActiveTask& active = *route(m);
  RawRecord raw;
  raw.topic = route_.topic;
  raw.partition = m->partition;
  raw.offset = m->offset;
  raw.timestamp = rd_kafka_message_timestamp(m, nullptr);
  raw.key = view_of(m->key, m->key_len);
  raw.value = view_of(m->payload, m->len);
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name;
    const void* value;
    size_t size;
    for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == 0; ++i)
      raw.headers.push_back({name, bytes_of(value, size)});
  }
  producer_->begin_transaction_if_needed();
  // Latency of one record in 16: two clock reads per record cost more than the histogram shows.
  bool timed = (++processed_ & 15) == 0;
  auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  active.task->process(raw);
  // Made on the first record processed: an entry commits its offset.
  if (!route_.next_offset) route_.next_offset = &active.next_offsets[route_.topic];
  *route_.next_offset = m->offset + 1;
  if (active.task->has_punctuators()) {
    Task& task = *active.task;
    if (task.punctuation_due(false, task.stream_time())) task.punctuate(false, task.stream_time());
  }
  if (active.task->take_commit_request()) commit_requested_ = true;
  metrics_->processed.add();
  if (timed) {
    double seconds = seconds_since(start);
    metrics_->process_latency.observe(seconds);
    active.task->record_latency(seconds);
  }
}

// Wall-clock punctuators, checked once per millisecond of the loop's clock; the time they see is
// the task's clock (the system's).
void StreamThread::punctuate_wall_clock(int64_t loop_now) {
  last_wall_punctuation_ms_ = loop_now;
  for (auto& [id, t] : tasks_) {
    Task& task = *t.task;
    if (!task.has_punctuators() || reader_->restoring(&task)) continue;
    int64_t wall = task.wall_clock_ms();
    if (!task.punctuation_due(true, wall)) continue;
    producer_->begin_transaction_if_needed();
    std::unique_lock lock(t.lock);
    task.punctuate(true, wall);
    if (task.take_commit_request()) commit_requested_ = true;
  }
}

void StreamThread::commit() {
  commit_requested_ = false;
  last_commit_ms_ = now_ms();
  if (standbys_ && !standbys_->empty()) {
    standbys_->checkpoint();
    publish_group_snapshot();
  }
  if (tasks_.empty()) return;
  if (config_.exactly_once && !producer_->in_transaction())
    return;  // nothing processed since the last one
  auto start = std::chrono::steady_clock::now();
  try {
    commit_tasks();
  } catch (const TasksMigrated& e) {
    restart_tasks_from_last_commit(e.what());
    return;
  }
  metrics_->commits.add();
  metrics_->commit_latency.observe(seconds_since(start));
}

void StreamThread::commit_tasks() {
  for (auto& [id, t] : tasks_) {
    std::unique_lock lock(t.lock);
    t.task->flush();  // under EOS, inside the open transaction
  }
  std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)>
      list(rd_kafka_topic_partition_list_new(0), &rd_kafka_topic_partition_list_destroy);
  auto* offsets = list.get();
  for (auto& [id, t] : tasks_) {
    std::string time = encode_partition_time(t.task->stream_time());
    for (auto& [topic, offset] : t.next_offsets) {
      auto* p = rd_kafka_topic_partition_list_add(offsets, topic.c_str(), id.second);
      p->offset = offset;
      // The list owns (and frees) its metadata.
      p->metadata = std::malloc(time.size());
      std::memcpy(p->metadata, time.data(), time.size());
      p->metadata_size = time.size();
    }
  }
  if (config_.exactly_once) {
    producer_->commit_transaction(offsets, group_metadata());
  } else {
    // At least once: everything the tasks wrote is acknowledged before their input is committed.
    producer_->flush();
    if (offsets->cnt > 0) commit_offsets(offsets);
  }
  list.reset();
  checkpoint_tasks();
  purge_repartition_topics();
}

// Repartition topics keep records forever (retention.ms -1, as Kafka creates them), so that none
// ages out while the application is down; as Kafka Streams, the thread deletes what it has
// committed from them every repartition.purge.interval.ms. Asynchronous: a purge that fails
// (an older broker, an ACL) is logged and retried with the next.
void StreamThread::purge_repartition_topics() {
  if (repartition_topics_.empty()) return;
  int64_t now = now_ms();
  if (now - last_purge_ms_ < config_.repartition_purge_interval_ms) return;
  last_purge_ms_ = now;
  auto* committed = rd_kafka_topic_partition_list_new(0);
  for (auto& [id, t] : tasks_)
    for (auto& [topic, offset] : t.next_offsets)
      if (repartition_topics_.count(topic))
        rd_kafka_topic_partition_list_add(committed, topic.c_str(), id.second)->offset = offset;
  producer_->delete_records(committed);
  rd_kafka_topic_partition_list_destroy(committed);
}

void StreamThread::checkpoint_tasks() {
  producer_->await_delivery_reports();
  for (auto& [id, t] : tasks_) {
    std::unique_lock lock(t.lock);
    t.task->checkpoint(t.next_offsets);
  }
}

rd_kafka_topic_partition_list_t* StreamThread::input_partitions(Task* task) const {
  auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(task->input_topics().size()));
  for (const auto& t : task->input_topics())
    rd_kafka_topic_partition_list_add(list, t.c_str(), task->task_partition_id());
  return list;
}

void StreamThread::set_queryable(Task* task) {
  for (auto& [id, t] : tasks_)
    if (t.task.get() == task) {
      std::unique_lock lock(t.lock);
      t.queryable = true;
    }
}

int StreamThread::read_store(const std::string& name, std::optional<int32_t> partition, bool stale,
                             const std::function<bool(KeyValueStore&)>& read, int& restoring,
                             bool& stop) const {
  std::shared_lock tasks_lock(tasks_mutex_);
  int found = 0;
  for (const auto& [id, t] : tasks_) {
    if (partition && id.second != *partition) continue;
    KeyValueStore* store = t.task->own_store(name);
    if (!store) continue;
    std::shared_lock lock(t.lock);
    if (!t.queryable) {
      ++restoring;
      continue;
    }
    ++found;
    if (!read(*store)) {
      stop = true;
      break;
    }
  }
  // standbys_ is made before the thread starts and lives as long as the thread object.
  if (stale && !stop && standbys_ && !(partition && found > 0))
    found += standbys_->read_store(name, partition, read, stop);
  return found;
}

}  // namespace oxbow::streams::detail
