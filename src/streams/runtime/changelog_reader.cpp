#include "streams/runtime/changelog_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <tuple>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

ChangelogReader::ChangelogReader(const ThreadConfig& config, rd_kafka_t* main_consumer,
                                 ThreadMetrics& metrics, std::function<void(Task*)> on_restored)
    : config_(config),
      main_consumer_(main_consumer),
      metrics_(metrics),
      on_restored_(std::move(on_restored)) {}

ChangelogReader::~ChangelogReader() = default;

void ChangelogReader::close() {
  if (restorer_) rd_kafka_consumer_close(restorer_.get());
}

void ChangelogReader::reassign() {
  if (!restorer_) return;
  auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(restoring_.size()));
  for (const auto& [tp, target] : restoring_)
    rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = target.position;
  rd_kafka_assign(restorer_.get(), list->cnt > 0 ? list : nullptr);
  if (list->cnt > 0) learn_leaders(restorer_.get());
  rd_kafka_topic_partition_list_destroy(list);
}

void ChangelogReader::register_tasks(const std::vector<Task*>& tasks) {
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
    restarter_ = std::make_unique<FetchRestarter>(restorer_.get());
  }
  size_t restoring_before = restoring_.size();
  for (auto& [task, store, topic] : work) {
    int32_t partition = task->task_partition_id();
    int64_t low = 0, high = 0;
    auto err = query_watermarks(restorer_.get(), topic, partition, &low, &high, 10000);
    if (err) {
      throw StreamsException("restoring from " + topic + ": " + rd_kafka_err2str(err));
    }
    // A table whose source topic is its changelog is restored up to the input's committed
    // offset only, as Kafka does: past it are updates the task has yet to process, against the
    // old values they replace.
    const auto& inputs = task->input_topics();
    bool source_table = std::find(inputs.begin(), inputs.end(), topic) != inputs.end();
    if (source_table) high = std::min(high, committed_offset(main_consumer_, topic, partition));
    // -1: no local state to start from.
    int64_t from = task->restore_from(store).value_or(-1);
    // Under exactly-once, `high` is the last stable offset: an open transaction of a dead
    // owner holds it back, possibly before records a later owner committed (and this store may
    // already hold). Such a changelog is read to its true end, known once fetched (restore());
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
  if (restoring_.size() != restoring_before) reassign();
  if (restoring_.empty())
    spdlog::info("stream thread {}: restored 0 records into 0 stores in 0 ms", config_.client_id);
}

bool ChangelogReader::unregister(Task* task) {
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
  return was_restoring;
}

std::vector<Task*> ChangelogReader::restoring_tasks() const {
  std::vector<Task*> out;
  for (const auto& [task, n] : pending_stores_) out.push_back(task);
  return out;
}

std::optional<int64_t> ChangelogReader::position(const std::string& topic,
                                                 int32_t partition) const {
  auto r = restoring_.find({topic, partition});
  if (r == restoring_.end()) return std::nullopt;
  return std::max<int64_t>(r->second.position, 0);
}

void ChangelogReader::finish_store_restoration(const std::pair<std::string, int32_t>& partition,
                                               int64_t next_offset) {
  auto it = restoring_.find(partition);
  RestoreTarget target = it->second;
  restoring_.erase(it);
  waiting_on_transaction_.erase(partition);
  target.task->finish_restore(target.store, next_offset);
  if (--pending_stores_[target.task] == 0) {
    pending_stores_.erase(target.task);
    on_restored_(target.task);
  }
}

bool ChangelogReader::restore() {
  auto slice_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRestoreTurnMs);
  for (int n = 0; n < 50000 && !restoring_.empty(); ++n) {
    std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> m(
        rd_kafka_consumer_poll(restorer_.get(), n == 0 && !restarter_->watching() ? 20 : 0),
        &rd_kafka_message_destroy);
    if (!m) {
      if (restarter_->idle([](const char*, int32_t) { return false; }))
        metrics_.fetch_restarts.add();
      break;
    }
    if (!m->err) restarter_->got_record(m->key_len + m->len);
    std::pair<std::string, int32_t> tp{m->rkt ? rd_kafka_topic_name(m->rkt) : "", m->partition};
    auto it = restoring_.find(tp);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (it != restoring_.end() && !open_transaction_ahead(tp, m->offset))
        finish_store_restoration(tp, m->offset);
    } else if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET && it != restoring_.end()) {
      // The local state is ahead of the changelog: it was deleted, truncated or recreated.
      it->second.task->wipe(it->second.store);
      it->second.position = RD_KAFKA_OFFSET_BEGINNING;
      reassign();
    } else if (!m->err && it != restoring_.end() && it->second.end >= 0 &&
               m->offset >= it->second.end) {
      finish_store_restoration(tp, it->second.end);
    } else if (m->err) {
      throw StreamsException("restoring from " + tp.first + ": " +
                             rd_kafka_message_errstr(m.get()));
    } else if (it != restoring_.end()) {
      // Read in place: restoring copies each record once, into the store's write batch.
      if (m->key) {
        std::optional<std::string_view> value;
        if (m->payload) value.emplace(static_cast<const char*>(m->payload), m->len);
        it->second.task->restore(it->second.store, {static_cast<const char*>(m->key), m->key_len},
                                 value, rd_kafka_message_timestamp(m.get(), nullptr));
      }
      it->second.position = m->offset + 1;
      ++restored_;
      metrics_.restored.add();
    }
    if ((n & 1023) == 0 && std::chrono::steady_clock::now() > slice_end) break;
  }
  {
    std::lock_guard lock(metrics_.mutex);
    metrics_.restore_remaining =
        restoring_.empty() ? 0 : std::max<int64_t>(0, to_restore_ - restored_);
  }
  if (!restoring_.empty()) return false;
  rd_kafka_assign(restorer_.get(), nullptr);
  spdlog::info("stream thread {}: restored {} records into {} stores in {} ms", config_.client_id,
               restored_, restore_stores_,
               static_cast<int64_t>(seconds_since(restore_started_) * 1000));
  return true;
}

// Under exactly-once the restorer's end is the last stable offset. Past it, until an open
// transaction (a dead owner's, which the broker aborts after its timeout) ends, may lie records a
// later owner committed: restoration waits for them rather than start from an older state than
// the committed input offsets reflect.
bool ChangelogReader::open_transaction_ahead(const std::pair<std::string, int32_t>& tp,
                                             int64_t end) {
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

}  // namespace oxbow::streams::detail
