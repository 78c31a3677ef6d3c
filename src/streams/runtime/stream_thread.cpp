#include "streams/runtime/stream_thread.h"

#include <spdlog/spdlog.h>

#include <set>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

StreamThread::StreamThread(std::shared_ptr<const Topologies> topologies, ThreadConfig config)
    : topologies_(std::move(topologies)), config_(std::move(config)) {
  metrics_->thread_id = config_.client_id;
}

StreamThread::~StreamThread() {
  request_stop();
  join();
}

void StreamThread::start() {
  const auto& app_id = config_.task.application_id;
  // Oxbow's own member (GroupMembership) takes part in the group; the consumer is assigned its
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
  rd_kafka_poll_set_consumer(consumer_.get());
  set_offset_reset_policies();
  producer_ = std::make_unique<StreamsProducer>(config_, *metrics_);
  // Sink topics' metadata now, not on the producer's first send (librdkafka would hold the first
  // records for up to a second while it fetches it).
  for (const auto& topology : *topologies_) prefetch_sink_metadata(topology);
  reader_ = std::make_unique<ChangelogReader>(config_, consumer_.get(), *metrics_,
                                              [this](Task* task) { tasks_->on_restored(task); });
  membership_ = std::make_unique<GroupMembership>(topologies_, config_, producer_->handle());
  tasks_ = std::make_unique<TaskManager>(topologies_, config_, consumer_.get(), *producer_,
                                         *reader_, *membership_, *metrics_);
  membership_->start();
  running_ = true;
  thread_ = std::thread([this] { run(); });
}

void StreamThread::set_topologies(std::shared_ptr<const Topologies> next) {
  std::lock_guard lock(pending_mutex_);
  pending_topologies_ = std::move(next);
  ++topologies_requested_;
}

// On the thread: an added topology's sources get their offset reset policies and its sinks their
// metadata; a removed one's tasks are closed; then the group rebalances.
void StreamThread::apply_topologies() {
  std::shared_ptr<const Topologies> next;
  uint64_t taken = 0;
  {
    std::lock_guard lock(pending_mutex_);
    next = std::move(pending_topologies_);
    taken = topologies_requested_;
  }
  if (!next) {
    topologies_applied_ = taken;
    return;
  }
  std::set<std::string> known;
  for (const auto& t : *topologies_) known.insert(t.name);
  for (const auto& t : *next)
    if (!known.count(t.name)) {
      set_offset_reset_policies(*t.graph);
      prefetch_sink_metadata(t);
    }
  tasks_->set_topologies(next);
  membership_->set_topologies(next);
  topologies_ = std::move(next);
  topologies_applied_ = taken;
}

void StreamThread::prefetch_sink_metadata(const NamedGraph& topology) {
  for (const auto& n : topology.graph->nodes())
    if (n.kind == NodeDescription::Kind::kSink && !n.dynamic_topic)
      for (const auto& t : n.topics)
        producer_->partitions_of(n.internal ? topology.prefix + "-" + t : t);
}

void StreamThread::join() {
  if (thread_.joinable()) thread_.join();
}

// Consumed::withOffsetResetPolicy: where a source topic starts without a committed offset, for
// that topic alone (the consumer's auto.offset.reset, earliest by default, for the others).
void StreamThread::set_offset_reset_policies() {
  for (const auto& topology : *topologies_) set_offset_reset_policies(*topology.graph);
}

void StreamThread::set_offset_reset_policies(const GraphBuilder& graph) {
  for (const auto& n : graph.nodes()) {
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

void StreamThread::run() {
  try {
    loop();
    if (!failed_) tasks_->commit();
  } catch (const std::exception& e) {
    failure_ = e.what();
    failed_ = true;
    spdlog::error("stream thread {} failed: {}", config_.client_id, e.what());
    producer_->abort_transaction();
  }
  // Leaves the group (a static member stays until its session times out).
  membership_->stop();
  tasks_->close_standbys();  // made durable and closed; queries find none
  rd_kafka_consumer_close(consumer_.get());
  reader_->close();
  tasks_->close_active();
  producer_->close(10000);
  running_ = false;
}

void StreamThread::loop() {
  int unserved = 0;  // records processed since the producer's callbacks were last served
  while (!stop_) {
    try {
      turn(unserved);
    } catch (const TasksMigrated& e) {
      // Exactly-once's transaction was aborted (a write timed out, the broker bumped the epoch):
      // the tasks go back to their last commit and the thread goes on, as Kafka Streams does.
      tasks_->restart_tasks_from_last_commit(e.what());
    }
  }
}

// One pass of the loop: poll, process, restore, serve the group and the producer, punctuate,
// commit.
void StreamThread::turn(int& unserved) {
  if (topologies_requested_ != topologies_applied_) apply_topologies();
  bool buffering = tasks_->process_buffered();
  int timeout_ms = reader_->restoring()           ? 0
                   : buffering                    ? 5
                   : fetch_restarter_->watching() ? 1
                                                  : 100;
  // Owned, so that a record whose processing throws is still given back: librdkafka's
  // rd_kafka_destroy() waits for every message it handed out.
  PartitionGroup::Message m(rd_kafka_consumer_poll(consumer_.get(), timeout_ms));
  bool idle = !m;
  if (idle && !reader_->restoring() && fetch_restarter_->idle([this](const char* topic, int32_t p) {
        return tasks_->paused_by_us(topic, p);
      }))
    metrics_->fetch_restarts.add();
  if (m) {
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      fetch_restarter_->got_record(m->key_len + m->len);
      tasks_->add_record(std::move(m));
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
      tasks_->all_restored();
      publish_metrics();
    }
    now = last_restore_step_ms_ = now_ms();
  }
  if (idle || now - last_group_poll_ms_ >= 10) {
    last_group_poll_ms_ = now;
    membership_->poll(*tasks_);
  }
  // Delivery reports are served every 64 records, when the input is idle and at least every
  // 10 ms: once per record, the call was 3.5% of a stateless application's CPU.
  if (idle || ++unserved >= 64 || now - last_served_ms_ >= 10) {
    producer_->serve_delivery_reports();
    unserved = 0;
    last_served_ms_ = now;
  }
  producer_->throw_if_failed();
  // Wall-clock punctuators are looked at once per millisecond of the loop's clock.
  if (now != last_wall_punctuation_ms_) {
    last_wall_punctuation_ms_ = now;
    tasks_->punctuate();
  }
  if (tasks_->commit_needed(now)) tasks_->commit();
  if (now - last_metrics_ms_ >= 1000) publish_metrics();
}

void StreamThread::publish_metrics() {
  last_metrics_ms_ = now_ms();
  tasks_->publish_metrics();
}

}  // namespace oxbow::streams::detail
