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

// The loop's clock for intervals (commits, metrics, purges, serving delivery reports), read once
// per record: the coarse monotonic clock (a few ms of resolution, no timestamp-counter read) is
// enough for them, and clock reads were 11% of a stateless application's CPU samples.
int64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::optional<std::string_view> view_of(const void* data, size_t size) {
  if (!data) return std::nullopt;
  return std::string_view(static_cast<const char*>(data), size);
}

std::optional<std::string> bytes_of(const void* data, size_t size) {
  if (!data) return std::nullopt;
  return std::string(static_cast<const char*>(data), size);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  auto* cconf = client_conf(
      config_.app, ClientRole::kConsumer,
      {{"group.id", app_id},
       {"client.id", config_.client_id + "-consumer"},
       {"enable.auto.commit", "false"},
       {"partition.assignment.strategy", "cooperative-sticky"},
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
  // Static membership (KIP-345), as Kafka Streams offers it: with group.instance.id set, thread n
  // joins as "<id>-<n>", so that an instance restarted within the session timeout takes its
  // place back without a rebalance, with the same tasks.
  for (const char* key : {"group.instance.id", "consumer.group.instance.id"}) {
    auto it = config_.app.find(key);
    if (it == config_.app.end() || it->second.empty()) continue;
    std::string id = it->second + "-" + std::to_string(config_.thread_index);
    char error[512];
    if (rd_kafka_conf_set(cconf, "group.instance.id", id.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(cconf);
      throw std::invalid_argument(std::string(key) + ": " + error);
    }
    break;
  }
  rd_kafka_conf_set_rebalance_cb(cconf, &StreamThread::rebalance);
  rd_kafka_conf_set_opaque(cconf, this);
  consumer_ = make_client(RD_KAFKA_CONSUMER, cconf);
  rd_kafka_poll_set_consumer(consumer_.get());
  set_offset_reset_policies();
  // murmur2 on the key bytes, as Java's producer: Java consumers and Kafka Streams agree on
  // where a key lives.
  auto* pconf = client_conf(config_.app, ClientRole::kProducer,
                            {{"client.id", config_.client_id + "-producer"},
                             {"partitioner", "murmur2_random"},
                             {"acks", "all"},
                             {"enable.idempotence", "true"},
                             {"linger.ms", "5"},
                             {"allow.auto.create.topics", "false"}});
  if (config_.exactly_once) {
    // As Kafka Streams: a short transaction timeout, so that a crashed thread's open transaction
    // stops holding back read_committed readers within seconds.
    char error[512];
    if (rd_kafka_conf_set(pconf, "transactional.id", config_.transactional_id.c_str(), error,
                          sizeof error) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(pconf, "transaction.timeout.ms", "10000", error, sizeof error) !=
            RD_KAFKA_CONF_OK)
      throw std::invalid_argument(error);
  }
  rd_kafka_conf_set_dr_msg_cb(pconf, &StreamThread::delivered);
  rd_kafka_conf_set_opaque(pconf, this);
  producer_ = make_client(RD_KAFKA_PRODUCER, pconf);
  if (config_.exactly_once)
    throw_on_error(rd_kafka_init_transactions(producer_.get(), 60000), "init_transactions");
  purge_results_.reset(rd_kafka_queue_new(producer_.get()));
  for (const auto& spec : graph_->internal_topics())
    repartition_topics_.insert(app_id + "-" + spec.name);
  // Sink topics' metadata now, not on the producer's first send (librdkafka would hold the first
  // records for up to a second while it fetches it).
  for (const auto& n : graph_->nodes())
    if (n.kind == NodeDescription::Kind::kSink && !n.dynamic_topic)
      for (const auto& t : n.topics) partitions_of(n.internal ? app_id + "-" + t : t);

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
      if (anchor == anchor_of_.end() || partitions_of(t) > partitions_of(anchor->second))
        anchor_of_[sub.id] = t;
    }
  }
  auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(anchor_of_.size()));
  for (const auto& [sub, t] : anchor_of_) rd_kafka_topic_partition_list_add(list, t.c_str(), -1);
  auto err = rd_kafka_subscribe(consumer_.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err) throw std::runtime_error(std::string("subscribe: ") + rd_kafka_err2str(err));
  running_ = true;
  thread_ = std::thread([this] { run(); });
}

// Consumed::withOffsetResetPolicy: where a source topic starts without a committed offset, for
// that topic alone (the consumer's auto.offset.reset, earliest by default, for the others).
void StreamThread::set_offset_reset_policies() {
  for (const auto& n : graph_->nodes()) {
    if (n.kind != NodeDescription::Kind::kSource || n.internal) continue;
    if (n.consumed.offset_reset == AutoOffsetReset::kDefault) continue;
    const char* policy =
        n.consumed.offset_reset == AutoOffsetReset::kLatest ? "latest" : "earliest";
    for (const auto& topic : n.topics) {
      // The consumer's topic settings, with this one changed.
      rd_kafka_topic_conf_t* conf = rd_kafka_default_topic_conf_dup(consumer_.get());
      char error[512] = "librdkafka refused the topic name";
      if (rd_kafka_topic_conf_set(conf, "auto.offset.reset", policy, error, sizeof error) !=
              RD_KAFKA_CONF_OK ||
          !consumer_topics_.get(consumer_.get(), topic, conf))
        throw StreamsException("offset reset policy of " + topic + ": " + error);
    }
  }
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
    if (in_transaction_) {
      if (auto* error = rd_kafka_abort_transaction(producer_.get(), 30000))
        rd_kafka_error_destroy(error);
      in_transaction_ = false;
    }
  }
  // Leaves the group (revoking the tasks, which commits unless the thread failed).
  rd_kafka_consumer_close(consumer_.get());
  if (restorer_) rd_kafka_consumer_close(restorer_.get());
  tasks_.clear();
  by_input_.clear();
  route_ = {};
  rd_kafka_flush(producer_.get(), 10000);
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
    PartitionGroup::Message m(rd_kafka_consumer_poll(consumer_.get(), !restoring_.empty() ? 0
                                                                      : buffering         ? 5
                                                                                          : 100));
    bool idle = !m;
    if (m) {
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        dispatch(std::move(m));
      } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        spdlog::warn("stream thread {}: consumer: {}", config_.client_id,
                     rd_kafka_message_errstr(m.get()));
      }
    }
    if (!restoring_.empty()) restore_step();
    int64_t now = now_ms();
    // Delivery reports are served every 64 records, when the input is idle and at least every
    // 10 ms: once per record, the call was 3.5% of a stateless application's CPU.
    if (idle || ++unserved >= 64 || now - last_served_ms_ >= 10) {
      rd_kafka_poll(producer_.get(), 0);
      unserved = 0;
      last_served_ms_ = now;
    }
    if (!send_error_.empty()) throw StreamsException("a write failed: " + send_error_);
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
  std::lock_guard lock(metrics_->mutex);
  metrics_->tasks = std::move(tasks);
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

void StreamThread::dispatch(PartitionGroup::Message m) {
  ActiveTask* active = route(m.get());
  if (!active) return;
  if (!pending_stores_.empty() && pending_stores_.count(active->task.get())) {
    auto [slot, fresh] = seek_on_resume_.try_emplace({route_.topic, m->partition}, m->offset);
    if (!fresh) slot->second = std::min(slot->second, m->offset);
    return;
  }
  if (!active->group) return process(m.get());
  std::string topic = route_.topic;
  int32_t partition = m->partition;
  active->fetched_next[topic] = m->offset + 1;
  active->group->add(topic, std::move(m));
  if (active->group->buffered(topic) > PartitionGroup::kMaxBufferedPerPartition &&
      active->full.insert(topic).second) {
    auto* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
    rd_kafka_pause_partitions(consumer_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
  }
  drain(*active);
}

void StreamThread::drain(ActiveTask& active) {
  auto caught_up = [this, &active](const std::string& topic) {
    return this->caught_up(active, topic);
  };
  while (auto m = active.group->next(caught_up)) process(m.get());
  resume_drained(active);
}

// A paused partition whose buffer has drained to half resumes from the record after the last one
// it buffered (records librdkafka held when the pause took effect may have been dropped).
void StreamThread::resume_drained(ActiveTask& active) {
  for (auto it = active.full.begin(); it != active.full.end();) {
    if (active.group->buffered(*it) > PartitionGroup::kMaxBufferedPerPartition / 2) {
      ++it;
      continue;
    }
    auto* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, it->c_str(), active.task->task_partition_id())->offset =
        active.fetched_next[*it];
    if (auto* error = rd_kafka_seek_partitions(consumer_.get(), list, 10000))
      rd_kafka_error_destroy(error);
    rd_kafka_resume_partitions(consumer_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
    it = active.full.erase(it);
  }
}

bool StreamThread::caught_up(ActiveTask& active, const std::string& topic) {
  int32_t partition = active.task->task_partition_id();
  int64_t low = -1, high = -1;
  if (rd_kafka_get_watermark_offsets(consumer_.get(), topic.c_str(), partition, &low, &high) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      high < 0) {
    // Not fetched yet (librdkafka may take a second to start fetching a partition added to the
    // assignment): its end is asked once, rather than holding the task back until then.
    auto [end, fresh] = active.queried_ends.try_emplace(topic, -1);
    if (fresh && rd_kafka_query_watermark_offsets(consumer_.get(), topic.c_str(), partition, &low,
                                                  &end->second, 5000) != RD_KAFKA_RESP_ERR_NO_ERROR)
      end->second = -1;
    high = end->second;
    if (high < 0) return false;
    low = std::max<int64_t>(low, 0);
  }
  // Where the consumer stands: past the last record it gave (and any transaction markers after
  // it), or, before it gave any, where the input starts.
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
  rd_kafka_position(consumer_.get(), list);
  int64_t position = list->elems[0].offset;
  rd_kafka_topic_partition_list_destroy(list);
  if (position < 0) {
    auto [start, fresh] = active.start_offsets.try_emplace(topic, 0);
    if (fresh) start->second = committed_offset(topic, partition);
    position = std::max(start->second, low);
  }
  return position >= high;
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
  begin_transaction_if_needed();
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

void StreamThread::throw_on_error(rd_kafka_error_t* error, const char* step) {
  if (!error) return;
  std::string text = std::string(step) + ": " + rd_kafka_error_string(error);
  bool abortable = rd_kafka_error_txn_requires_abort(error);
  rd_kafka_error_destroy(error);
  if (abortable && in_transaction_) {
    // The transaction's output and offsets are dropped; the stores are ahead of what is committed,
    // so the thread fails and its tasks start again from the last commit.
    if (auto* e = rd_kafka_abort_transaction(producer_.get(), 30000)) rd_kafka_error_destroy(e);
    in_transaction_ = false;
  }
  throw StreamsException(text);
}

void StreamThread::begin_transaction_if_needed() {
  if (!config_.exactly_once || in_transaction_) return;
  throw_on_error(rd_kafka_begin_transaction(producer_.get()), "begin_transaction");
  in_transaction_ = true;
}

// Wall-clock punctuators, checked once per millisecond of the loop's clock; the time they see is
// the task's clock (the system's).
void StreamThread::punctuate_wall_clock(int64_t loop_now) {
  last_wall_punctuation_ms_ = loop_now;
  for (auto& [id, t] : tasks_) {
    Task& task = *t.task;
    if (!task.has_punctuators() || pending_stores_.count(&task)) continue;
    int64_t wall = task.wall_clock_ms();
    if (!task.punctuation_due(true, wall)) continue;
    begin_transaction_if_needed();
    task.punctuate(true, wall);
    if (task.take_commit_request()) commit_requested_ = true;
  }
}

void StreamThread::commit() {
  commit_requested_ = false;
  last_commit_ms_ = now_ms();
  if (tasks_.empty()) return;
  if (config_.exactly_once && !in_transaction_) return;  // nothing processed since the last one
  auto start = std::chrono::steady_clock::now();
  commit_tasks();
  metrics_->commits.add();
  metrics_->commit_latency.observe(seconds_since(start));
}

void StreamThread::commit_tasks() {
  for (auto& [id, t] : tasks_) t.task->flush();  // under EOS, inside the open transaction
  auto* offsets = rd_kafka_topic_partition_list_new(0);
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
    rd_kafka_consumer_group_metadata_t* group = rd_kafka_consumer_group_metadata(consumer_.get());
    rd_kafka_error_t* error = nullptr;
    if (offsets->cnt > 0)
      error = rd_kafka_send_offsets_to_transaction(producer_.get(), offsets, group, 60000);
    rd_kafka_consumer_group_metadata_destroy(group);
    rd_kafka_topic_partition_list_destroy(offsets);
    throw_on_error(error, "send_offsets_to_transaction");
    throw_on_error(rd_kafka_commit_transaction(producer_.get(), 60000), "commit_transaction");
    in_transaction_ = false;
    if (!send_error_.empty()) throw StreamsException("a write failed: " + send_error_);
    checkpoint_tasks();
    purge_repartition_topics();
    return;
  }
  // At least once: everything the tasks wrote is acknowledged before their input is committed.
  while (rd_kafka_outq_len(producer_.get()) > 0 && send_error_.empty())
    rd_kafka_flush(producer_.get(), 1000);
  if (!send_error_.empty()) {
    rd_kafka_topic_partition_list_destroy(offsets);
    throw StreamsException("a write failed: " + send_error_);
  }
  if (offsets->cnt > 0) {
    auto err = rd_kafka_commit(consumer_.get(), offsets, 0);
    if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
      spdlog::warn("stream thread {}: commit failed: {}", config_.client_id, rd_kafka_err2str(err));
  }
  rd_kafka_topic_partition_list_destroy(offsets);
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
  serve_purge_results();
  auto* committed = rd_kafka_topic_partition_list_new(0);
  for (auto& [id, t] : tasks_)
    for (auto& [topic, offset] : t.next_offsets)
      if (repartition_topics_.count(topic))
        rd_kafka_topic_partition_list_add(committed, topic.c_str(), id.second)->offset = offset;
  if (committed->cnt > 0) {
    rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(committed);
    rd_kafka_DeleteRecords(producer_.get(), &request, 1, nullptr, purge_results_.get());
    rd_kafka_DeleteRecords_destroy(request);
  }
  rd_kafka_topic_partition_list_destroy(committed);
}

void StreamThread::serve_purge_results() {
  while (rd_kafka_event_t* event = rd_kafka_queue_poll(purge_results_.get(), 0)) {
    const rd_kafka_topic_partition_list_t* parts = nullptr;
    if (rd_kafka_event_error(event)) {
      spdlog::warn("stream thread {}: purging repartition topics failed: {}", config_.client_id,
                   rd_kafka_event_error_string(event));
    } else if (const auto* result = rd_kafka_event_DeleteRecords_result(event)) {
      parts = rd_kafka_DeleteRecords_result_offsets(result);
      for (int i = 0; parts && i < parts->cnt; ++i)
        if (parts->elems[i].err)
          spdlog::warn("stream thread {}: purging {}-{} failed: {}", config_.client_id,
                       parts->elems[i].topic, parts->elems[i].partition,
                       rd_kafka_err2str(parts->elems[i].err));
    }
    rd_kafka_event_destroy(event);
  }
}

void StreamThread::checkpoint_tasks() {
  // Every delivery report served, so each changelog's slot holds its last written offset.
  for (int i = 0; i < 1000 && rd_kafka_outq_len(producer_.get()) > 0; ++i)
    rd_kafka_poll(producer_.get(), 10);
  for (auto& [id, t] : tasks_) t.task->checkpoint(t.next_offsets);
}

int64_t* StreamThread::delivery_slot(const std::string& topic, int32_t partition) {
  return &delivered_offsets_.try_emplace({topic, partition}, -1).first->second;
}

void StreamThread::rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                             rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* self = static_cast<StreamThread*>(opaque);
  bool assigning = err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS;
  rd_kafka_topic_partition_list_t* inputs = nullptr;
  bool applied = false;
  try {
    if (assigning) {
      self->rebalancing_ = true;
      inputs = self->on_assigned(partitions);
      self->throw_on_error(rd_kafka_incremental_assign(rk, inputs), "incremental_assign");
      applied = true;
      for (auto& [task, n] : self->pending_stores_) {
        auto* paused = self->input_partitions(task);
        rd_kafka_pause_partitions(rk, paused);
        rd_kafka_topic_partition_list_destroy(paused);
      }
      self->rebalancing_ = !self->pending_stores_.empty();
    } else {
      inputs = self->on_revoked(partitions, rd_kafka_assignment_lost(rk));
      self->throw_on_error(rd_kafka_incremental_unassign(rk, inputs), "incremental_unassign");
      applied = true;
    }
  } catch (const std::exception& e) {
    self->failure_ = e.what();
    self->failed_ = true;
    self->stop_ = true;
    spdlog::error("stream thread {} failed in a rebalance: {}", self->config_.client_id, e.what());
    // The group's rebalance still has to complete, so that the thread can leave the group.
    if (!applied && assigning)
      if (auto* error = rd_kafka_incremental_assign(rk, partitions)) rd_kafka_error_destroy(error);
    if (!applied && !assigning) {
      if (auto* error = rd_kafka_incremental_unassign(rk, inputs ? inputs : partitions))
        rd_kafka_error_destroy(error);
    }
  }
  if (inputs) rd_kafka_topic_partition_list_destroy(inputs);
}

rd_kafka_topic_partition_list_t* StreamThread::on_assigned(
    const rd_kafka_topic_partition_list_t* anchors) {
  auto* inputs = rd_kafka_topic_partition_list_new(anchors->cnt);
  std::vector<Task*> created;
  for (int i = 0; i < anchors->cnt; ++i) {
    auto sub_it = subtopology_of_.find(anchors->elems[i].topic);
    if (sub_it == subtopology_of_.end()) continue;
    int32_t partition = anchors->elems[i].partition;
    std::pair<int, int32_t> id{sub_it->second, partition};
    if (tasks_.count(id)) continue;
    const Subtopology* sub = nullptr;
    for (const auto& s : subtopologies_)
      if (s.id == id.first) sub = &s;
    if (!sub) continue;
    TaskConfig tc = config_.task;
    tc.subtopology = sub->id;
    tc.partition = partition;
    auto& active = tasks_[id];
    active.task = std::make_unique<Task>(graph_, *sub, tc, *this);
    created.push_back(active.task.get());
    std::vector<std::string> read;
    for (const auto& t : active.task->input_topics()) {
      if (partition >= partitions_of(t)) continue;
      by_input_[{t, partition}] = &active;
      route_ = {};
      rd_kafka_topic_partition_list_add(inputs, t.c_str(), partition);
      read.push_back(t);
    }
    if (read.size() > 1) {
      active.group = std::make_unique<PartitionGroup>(read);
      ++grouped_tasks_;
    }
    spdlog::info("stream thread {}: task {} assigned", config_.client_id, active.task->id());
  }
  resume_stream_times(inputs);
  start_restoration(created);
  return inputs;
}

// New tasks start from the stream time their inputs' last commit carries, so that windows closed
// before a restart stay closed after it. One OffsetFetch per assignment; a task whose inputs have
// no commit (or none of Kafka's format) starts from nothing, as in Kafka.
void StreamThread::resume_stream_times(const rd_kafka_topic_partition_list_t* inputs) {
  if (inputs->cnt == 0) return;
  auto* committed = rd_kafka_topic_partition_list_copy(inputs);
  auto err = rd_kafka_committed(consumer_.get(), committed, 10000);
  if (err) {
    rd_kafka_topic_partition_list_destroy(committed);
    throw StreamsException(std::string("committed offsets of the assigned tasks: ") +
                           rd_kafka_err2str(err));
  }
  for (int i = 0; i < committed->cnt; ++i) {
    const auto& p = committed->elems[i];
    auto it = by_input_.find({p.topic, p.partition});
    if (it == by_input_.end() || !p.metadata) continue;
    if (auto time = decode_partition_time(
            std::string_view(static_cast<const char*>(p.metadata), p.metadata_size)))
      it->second->task->resume_stream_time(*time);
  }
  rd_kafka_topic_partition_list_destroy(committed);
}

rd_kafka_topic_partition_list_t* StreamThread::on_revoked(
    const rd_kafka_topic_partition_list_t* anchors, bool lost) {
  if (lost) {
    // The group has moved on without this member: its commit would be refused, and an open
    // transaction's output must not be committed by anyone. The tasks' inputs are processed again
    // from the last commit, wherever they land.
    if (in_transaction_) {
      if (auto* e = rd_kafka_abort_transaction(producer_.get(), 30000)) rd_kafka_error_destroy(e);
      in_transaction_ = false;
    }
  } else {
    try {
      // All tasks commit, as Kafka Streams does: a commit covers the thread's whole transaction.
      // A failed thread commits nothing: what it processed since its last commit is redone.
      if (!failed_) commit();
    } catch (const std::exception& e) {
      spdlog::warn("stream thread {}: commit on revocation failed: {}", config_.client_id,
                   e.what());
    }
  }
  // Every input partition of the revoked tasks that the consumer holds.
  std::set<std::pair<int, int32_t>> revoked;
  for (int i = 0; i < anchors->cnt; ++i) {
    auto sub = subtopology_of_.find(anchors->elems[i].topic);
    if (sub != subtopology_of_.end()) revoked.emplace(sub->second, anchors->elems[i].partition);
  }
  auto* inputs = rd_kafka_topic_partition_list_new(0);
  rd_kafka_topic_partition_list_t* held = nullptr;
  if (rd_kafka_assignment(consumer_.get(), &held) == RD_KAFKA_RESP_ERR_NO_ERROR && held) {
    for (int i = 0; i < held->cnt; ++i) {
      auto sub = subtopology_of_.find(held->elems[i].topic);
      if (sub != subtopology_of_.end() && revoked.count({sub->second, held->elems[i].partition}))
        rd_kafka_topic_partition_list_add(inputs, held->elems[i].topic, held->elems[i].partition);
    }
  }
  if (held) rd_kafka_topic_partition_list_destroy(held);
  for (const auto& id : revoked) close_task(id);
  rebalancing_ = !pending_stores_.empty();
  return inputs;
}

void StreamThread::close_task(std::pair<int, int32_t> id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return;
  Task* task = it->second.task.get();
  bool was_restoring = false;
  for (auto r = restoring_.begin(); r != restoring_.end();) {
    if (r->second.task == task) {
      r = restoring_.erase(r);
      was_restoring = true;
    } else {
      ++r;
    }
  }
  pending_stores_.erase(task);
  for (const auto& t : task->input_topics()) {
    seek_on_resume_.erase({t, id.second});
    by_input_.erase({t, id.second});
  }
  route_ = {};
  spdlog::info("stream thread {}: task {} revoked", config_.client_id, task->id());
  if (it->second.group) --grouped_tasks_;
  tasks_.erase(it);
  if (was_restoring) assign_restorer();
}

void StreamThread::assign_restorer() {
  if (!restorer_) return;
  auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(restoring_.size()));
  for (const auto& [tp, target] : restoring_)
    rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = target.position;
  rd_kafka_assign(restorer_.get(), list->cnt > 0 ? list : nullptr);
  rd_kafka_topic_partition_list_destroy(list);
}

void StreamThread::start_restoration(const std::vector<Task*>& tasks) {
  if (restoring_.empty()) {
    restore_started_ = std::chrono::steady_clock::now();
    restored_ = to_restore_ = 0;
    restore_stores_ = 0;
  }
  std::vector<std::tuple<Task*, std::string, std::string>> work;  // task, store, topic
  for (Task* t : tasks)
    for (auto& [store, topic] : t->changelogs()) work.emplace_back(t, store, topic);
  if (work.empty() && restoring_.empty() && !tasks.empty()) {
    spdlog::info("stream thread {}: restored 0 records into 0 stores in 0 ms", config_.client_id);
    return;
  }
  if (work.empty()) return;
  if (!restorer_) {
    auto* conf = client_conf(config_.app, ClientRole::kRestoreConsumer,
                             {{"client.id", config_.client_id + "-restore-consumer"},
                              {"group.id", config_.task.application_id + "-restore"},
                              {"enable.auto.commit", "false"},
                              {"enable.partition.eof", "true"},
                              {"isolation.level", "read_committed"},
                              // A local offset past the log's end is reported, not skipped.
                              {"auto.offset.reset", "error"},
                              // The end of a caught-up changelog is known after one fetch.
                              {"fetch.wait.max.ms", "50"}},
                             // Restoration reads as fast as the log allows: keep prefetching
                             // (bounded as the main consumer's, see there).
                             {{"queued.min.messages", "200000"}});
    restorer_ = make_client(RD_KAFKA_CONSUMER, conf);
  }
  size_t restoring_before = restoring_.size();
  for (auto& [task, store, topic] : work) {
    int32_t partition = task->task_partition_id();
    int64_t low = 0, high = 0;
    auto err = rd_kafka_query_watermark_offsets(restorer_.get(), topic.c_str(), partition, &low,
                                                &high, 10000);
    if (err) {
      throw StreamsException("restoring from " + topic + ": " + rd_kafka_err2str(err));
    }
    // A table whose source topic is its changelog is restored up to the input's committed
    // offset only, as Kafka does: past it are updates the task has yet to process, against the
    // old values they replace.
    const auto& inputs = task->input_topics();
    bool source_table = std::find(inputs.begin(), inputs.end(), topic) != inputs.end();
    if (source_table) high = std::min(high, committed_offset(topic, partition));
    // -1: no local state to start from.
    int64_t from = task->restore_from(store).value_or(-1);
    // Under exactly-once, `high` is the last stable offset: an open transaction of a dead
    // owner holds it back, possibly before records a later owner committed (and this store may
    // already hold). Such a changelog is read to its true end, known once fetched (restore_step);
    // a local offset past that end shows up as out of range there.
    bool verify_end = config_.exactly_once && !source_table;
    if (from >= 0 && ((from > high && !verify_end) || from < low)) {
      task->wipe(store);  // the changelog was deleted, truncated or recreated
      from = -1;
    }
    if (high <= std::max({low, from, int64_t{0}}) && !verify_end) {
      if (from != high) task->finish_restore(store, high);  // so its checkpoint names the end
      spdlog::info("stream thread {}: task {}: store {} is up to date with {} at offset {}",
                   config_.client_id, task->id(), store, topic, high);
      continue;
    }
    to_restore_ += std::max<int64_t>(0, high - std::max({low, from, int64_t{0}}));
    restoring_[{topic, partition}] = {task, store, from >= 0 ? from : RD_KAFKA_OFFSET_BEGINNING,
                                      source_table ? high : -1};
    ++pending_stores_[task];
    ++restore_stores_;
  }
  if (restoring_.size() != restoring_before) assign_restorer();
  if (restoring_.empty())
    spdlog::info("stream thread {}: restored 0 records into 0 stores in 0 ms", config_.client_id);
}

void StreamThread::finish_store_restoration(const std::pair<std::string, int32_t>& partition,
                                            int64_t next_offset) {
  auto it = restoring_.find(partition);
  RestoreTarget target = it->second;
  restoring_.erase(it);
  waiting_on_transaction_.erase(partition);
  target.task->finish_restore(target.store, next_offset);
  if (--pending_stores_[target.task] == 0) finish_task_restoration(target.task);
}

// The group's committed offset of an input partition, 0 when there is none.
int64_t StreamThread::committed_offset(const std::string& topic, int32_t partition) {
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
  auto err = rd_kafka_committed(consumer_.get(), list, 10000);
  int64_t offset = list->elems[0].offset;
  if (!err) err = list->elems[0].err;
  rd_kafka_topic_partition_list_destroy(list);
  if (err)
    throw StreamsException("committed offset of " + topic + "-" + std::to_string(partition) + ": " +
                           rd_kafka_err2str(err));
  return std::max<int64_t>(offset, 0);
}

void StreamThread::restore_step() {
  auto slice_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  for (int n = 0; n < 50000 && !restoring_.empty(); ++n) {
    std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> m(
        rd_kafka_consumer_poll(restorer_.get(), n == 0 ? 20 : 0), &rd_kafka_message_destroy);
    if (!m) break;
    std::pair<std::string, int32_t> tp{m->rkt ? rd_kafka_topic_name(m->rkt) : "", m->partition};
    auto it = restoring_.find(tp);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (it != restoring_.end() && !open_transaction_ahead(tp, m->offset))
        finish_store_restoration(tp, m->offset);
    } else if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET && it != restoring_.end()) {
      // The local state is ahead of the changelog: it was deleted, truncated or recreated.
      it->second.task->wipe(it->second.store);
      it->second.position = RD_KAFKA_OFFSET_BEGINNING;
      assign_restorer();
    } else if (!m->err && it != restoring_.end() && it->second.end >= 0 &&
               m->offset >= it->second.end) {
      finish_store_restoration(tp, it->second.end);
    } else if (m->err) {
      throw StreamsException("restoring from " + tp.first + ": " +
                             rd_kafka_message_errstr(m.get()));
    } else if (it != restoring_.end()) {
      auto key = bytes_of(m->key, m->key_len);
      if (key)
        it->second.task->restore(it->second.store, *key, bytes_of(m->payload, m->len),
                                 rd_kafka_message_timestamp(m.get(), nullptr));
      it->second.position = m->offset + 1;
      ++restored_;
      metrics_->restored.add();
    }
    if ((n & 1023) == 0 && std::chrono::steady_clock::now() > slice_end) break;
  }
  {
    std::lock_guard lock(metrics_->mutex);
    metrics_->restore_remaining =
        restoring_.empty() ? 0 : std::max<int64_t>(0, to_restore_ - restored_);
  }
  if (!restoring_.empty()) return;
  rd_kafka_assign(restorer_.get(), nullptr);
  spdlog::info("stream thread {}: restored {} records into {} stores in {} ms", config_.client_id,
               restored_, restore_stores_,
               static_cast<int64_t>(seconds_since(restore_started_) * 1000));
  rebalancing_ = false;
  publish_metrics();
}

// Under exactly-once the restorer's end is the last stable offset. Past it, until an open
// transaction (a dead owner's, which the broker aborts after its timeout) ends, may lie records a
// later owner committed: restoration waits for them rather than start from an older state than
// the committed input offsets reflect.
bool StreamThread::open_transaction_ahead(const std::pair<std::string, int32_t>& tp, int64_t end) {
  if (!config_.exactly_once) return false;
  int64_t low = -1, high = -1;
  if (rd_kafka_get_watermark_offsets(restorer_.get(), tp.first.c_str(), tp.second, &low, &high) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      high <= end)
    return false;
  if (waiting_on_transaction_.insert(tp).second)
    spdlog::info(
        "stream thread {}: {}-{} has records up to offset {} behind an open transaction at {}; "
        "restoration waits for it to end",
        config_.client_id, tp.first, tp.second, high, end);
  return true;
}

rd_kafka_topic_partition_list_t* StreamThread::input_partitions(Task* task) const {
  auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(task->input_topics().size()));
  for (const auto& t : task->input_topics())
    rd_kafka_topic_partition_list_add(list, t.c_str(), task->task_partition_id());
  return list;
}

void StreamThread::finish_task_restoration(Task* task) {
  pending_stores_.erase(task);
  auto* list = input_partitions(task);
  // Records fetched before the pause took effect were not processed: read them again.
  auto* seeks = rd_kafka_topic_partition_list_new(0);
  for (int i = 0; i < list->cnt; ++i) {
    auto it = seek_on_resume_.find({list->elems[i].topic, list->elems[i].partition});
    if (it == seek_on_resume_.end()) continue;
    rd_kafka_topic_partition_list_add(seeks, it->first.first.c_str(), it->first.second)->offset =
        it->second;
    seek_on_resume_.erase(it);
  }
  if (seeks->cnt > 0)
    if (auto* error = rd_kafka_seek_partitions(consumer_.get(), seeks, 10000))
      rd_kafka_error_destroy(error);
  rd_kafka_topic_partition_list_destroy(seeks);
  rd_kafka_resume_partitions(consumer_.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  spdlog::info("stream thread {}: task {} restored, processing", config_.client_id, task->id());
}

void StreamThread::send(const std::string& topic, const std::optional<std::string>& key,
                        const std::optional<std::string>& value, int64_t timestamp,
                        const Headers& headers, int32_t partition, int64_t* delivered) {
  rd_kafka_headers_t* hdrs = headers.empty() ? nullptr : rd_kafka_headers_new(headers.size());
  for (const auto& h : headers)
    rd_kafka_header_add(hdrs, h.key.data(), static_cast<ssize_t>(h.key.size()),
                        h.value ? h.value->data() : nullptr,
                        h.value ? static_cast<ssize_t>(h.value->size()) : 0);
  const void* key_data = key ? key->data() : nullptr;
  size_t key_size = key ? key->size() : 0;
  void* value_data = value ? const_cast<char*>(value->data()) : nullptr;
  size_t value_size = value ? value->size() : 0;
  int32_t target = partition < 0 ? RD_KAFKA_PARTITION_UA : partition;
  rd_kafka_topic_t* handle = producer_topics_.get(producer_.get(), topic);
  auto produce = [&] {
    if (hdrs)
      return rd_kafka_producev(
          producer_.get(), RD_KAFKA_V_RKT(handle), RD_KAFKA_V_PARTITION(target),
          RD_KAFKA_V_KEY(key_data, key_size), RD_KAFKA_V_VALUE(value_data, value_size),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp),
          RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(delivered), RD_KAFKA_V_END);
    return rd_kafka_producev(
        producer_.get(), RD_KAFKA_V_RKT(handle), RD_KAFKA_V_PARTITION(target),
        RD_KAFKA_V_KEY(key_data, key_size), RD_KAFKA_V_VALUE(value_data, value_size),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp),
        RD_KAFKA_V_OPAQUE(delivered), RD_KAFKA_V_END);
  };
  rd_kafka_resp_err_t err = handle ? produce() : rd_kafka_last_error();
  while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
    rd_kafka_poll(producer_.get(), 10);
    err = produce();
  }
  if (!err) return;
  if (hdrs) rd_kafka_headers_destroy(hdrs);
  write_failed({topic, partition, key, value, rd_kafka_err2str(err)}, delivered != nullptr, true);
  if (!send_error_.empty()) throw StreamsException("cannot send to " + send_error_);
}

void StreamThread::delivered(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* self = static_cast<StreamThread*>(opaque);
  if (!m->err && m->_private) {
    auto* slot = static_cast<int64_t*>(m->_private);
    *slot = std::max(*slot, m->offset);
  }
  if (m->err)
    self->write_failed({rd_kafka_topic_name(m->rkt), m->partition, bytes_of(m->key, m->key_len),
                        bytes_of(m->payload, m->len), rd_kafka_err2str(m->err)},
                       m->_private != nullptr, false);
}

bool StreamThread::production_handler_continues(const ProductionError& failure) {
  try {
    return config_.production_handler(failure) == ProductionExceptionHandlerResponse::CONTINUE;
  } catch (const std::exception& e) {
    spdlog::error("stream thread {}: the production exception handler threw: {}", config_.client_id,
                  e.what());
    return false;
  }
}

void StreamThread::write_failed(const ProductionError& failure, bool changelog, bool refused) {
  // Under exactly-once a write the broker failed has made its transaction abortable: the thread
  // fails whatever the handler would say, and its input is processed again.
  if (config_.production_handler && !changelog && (refused || !config_.exactly_once) &&
      production_handler_continues(failure)) {
    metrics_->production_skipped.add();
    spdlog::warn(
        "stream thread {}: skipping a record the production exception handler lets go: "
        "topic {} partition {}: {}",
        config_.client_id, failure.topic, failure.partition, failure.error);
    return;
  }
  if (send_error_.empty()) send_error_ = failure.topic + ": " + failure.error;
}

int32_t StreamThread::partitions_of(const std::string& topic) {
  auto it = partition_counts_.find(topic);
  if (it != partition_counts_.end()) return it->second;
  int32_t n = std::max(1, partition_count(producer_.get(), topic));
  partition_counts_[topic] = n;
  return n;
}

}  // namespace oxbow::streams::detail
