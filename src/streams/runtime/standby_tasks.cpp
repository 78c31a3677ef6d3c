#include "streams/runtime/standby_tasks.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

namespace {

std::optional<std::string> bytes_of_message(const void* data, size_t size) {
  if (!data) return std::nullopt;
  return std::string(static_cast<const char*>(data), size);
}

}  // namespace

StandbyTasks::StandbyTasks(Config app, std::string client_id,
                           std::function<std::unique_ptr<Task>(TaskKey)> make_task,
                           std::function<void()> on_applied)
    : app_(std::move(app)),
      client_id_(std::move(client_id)),
      make_task_(std::move(make_task)),
      on_applied_(std::move(on_applied)) {}

StandbyTasks::~StandbyTasks() {
  std::set<TaskKey> all = keys();
  for (const auto& key : all) close(key);
  if (consumer_) rd_kafka_consumer_close(consumer_.get());
}

const std::set<StandbyTasks::TaskKey> StandbyTasks::keys() const {
  std::set<TaskKey> out;
  for (const auto& [key, s] : tasks_) out.insert(key);
  return out;
}

void StandbyTasks::assign(const std::set<TaskKey>& wanted) {
  bool changed = false;
  for (const auto& key : keys())
    if (!wanted.count(key)) {
      close(key);
      changed = true;
    }
  for (const auto& key : wanted)
    if (!tasks_.count(key)) {
      open(key);
      changed = true;
    }
  if (changed) assign_consumer();
}

void StandbyTasks::release(TaskKey key) {
  if (!tasks_.count(key)) return;
  close(key);
  assign_consumer();
}

void StandbyTasks::open(TaskKey key) {
  auto task = make_task_(key);
  Task* t = task.get();
  if (t->changelogs().empty()) return;  // nothing to keep
  Standby standby;
  for (const auto& [store, topic] : t->changelogs()) {
    int64_t from = t->restore_from(store).value_or(-1);
    positions_[{topic, key.partition}] = {t, standby.lock.get(), store,
                                          from >= 0 ? from : RD_KAFKA_OFFSET_BEGINNING};
  }
  spdlog::info("stream thread {}: standby task {} opened", client_id_, t->id());
  standby.task = std::move(task);
  fresh_.insert(key);
  std::unique_lock lock(tasks_mutex_);
  tasks_[key] = std::move(standby);
}

void StandbyTasks::close(TaskKey key) {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return;
  Task* t = it->second.task.get();
  for (auto p = positions_.begin(); p != positions_.end();) {
    if (p->second.task != t) {
      ++p;
      continue;
    }
    if (p->second.next >= 0) {
      std::unique_lock lock(*p->second.lock);
      t->finish_restore(p->second.store, p->second.next);
    }
    p = positions_.erase(p);
  }
  spdlog::info("stream thread {}: standby task {} closed", client_id_, t->id());
  fresh_.erase(key);
  std::unique_lock lock(tasks_mutex_);  // waits for queries reading it
  tasks_.erase(it);
}

void StandbyTasks::assign_consumer() {
  if (!consumer_ && positions_.empty()) return;
  if (!consumer_) {
    auto* conf = client_conf(app_, ClientRole::kRestoreConsumer,
                             {{"client.id", client_id_ + "-standby-consumer"},
                              {"group.id", app_.at("application.id") + "-standby"},
                              {"enable.auto.commit", "false"},
                              {"isolation.level", "read_committed"},
                              // Local state past the changelog's end is reported, not skipped.
                              {"auto.offset.reset", "error"}});
    consumer_ = make_client(RD_KAFKA_CONSUMER, conf);
  }
  auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(positions_.size()));
  for (const auto& [tp, p] : positions_)
    rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = p.next;
  rd_kafka_assign(consumer_.get(), list->cnt > 0 ? list : nullptr);
  if (list->cnt > 0) learn_leaders(consumer_.get());
  rd_kafka_topic_partition_list_destroy(list);
}

void StandbyTasks::step(int budget_ms) {
  if (!consumer_ || positions_.empty()) return;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget_ms);
  for (int n = 0; n < 100000; ++n) {
    std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> m(
        rd_kafka_consumer_poll(consumer_.get(), 0), &rd_kafka_message_destroy);
    if (!m) break;
    std::pair<std::string, int32_t> tp{m->rkt ? rd_kafka_topic_name(m->rkt) : "", m->partition};
    auto it = positions_.find(tp);
    if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET && it != positions_.end()) {
      // The local state is ahead of the changelog (deleted, truncated or recreated): rebuilt.
      it->second.task->wipe(it->second.store);
      it->second.next = RD_KAFKA_OFFSET_BEGINNING;
      assign_consumer();
      return;
    }
    if (m->err) {
      if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
        spdlog::warn("stream thread {}: standby consumer: {}", client_id_,
                     rd_kafka_message_errstr(m.get()));
      continue;
    }
    if (it == positions_.end()) continue;
    if (auto key = bytes_of_message(m->key, m->key_len)) {
      std::unique_lock lock(*it->second.lock);
      it->second.task->restore(it->second.store, *key, bytes_of_message(m->payload, m->len),
                               rd_kafka_message_timestamp(m.get(), nullptr));
    }
    it->second.next = m->offset + 1;
    if (on_applied_) on_applied_();
    if ((n & 255) == 0 && std::chrono::steady_clock::now() > until) break;
  }
}

void StandbyTasks::checkpoint() {
  for (const auto& [tp, p] : positions_)
    if (p.next >= 0) {
      std::unique_lock lock(*p.lock);
      p.task->finish_restore(p.store, p.next);
    }
}

std::vector<StandbyTasks::StorePosition> StandbyTasks::positions() const {
  std::vector<StorePosition> out;
  for (const auto& [tp, p] : positions_) {
    int64_t low = -1, high = -1;
    if (consumer_)
      rd_kafka_get_watermark_offsets(consumer_.get(), tp.first.c_str(), tp.second, &low, &high);
    out.push_back({p.store, tp.first, tp.second, std::max<int64_t>(p.next, 0), high});
  }
  return out;
}

int StandbyTasks::read_store(const std::string& topology, const std::string& name,
                             std::optional<int32_t> partition,
                             const std::function<bool(KeyValueStore&)>& read, bool& stop) const {
  std::shared_lock tasks_lock(tasks_mutex_);
  int found = 0;
  for (const auto& [key, s] : tasks_) {
    if (key.topology != topology || (partition && key.partition != *partition)) continue;
    KeyValueStore* store = s.task->own_store(name);
    if (!store) continue;
    std::shared_lock lock(*s.lock);
    ++found;
    if (!read(*store)) {
      stop = true;
      break;
    }
  }
  return found;
}

std::map<StandbyTasks::TaskKey, int64_t> StandbyTasks::offset_sums() const {
  std::map<TaskKey, int64_t> out;
  for (const auto& [key, s] : tasks_) {
    int64_t sum = 0;
    for (const auto& [tp, p] : positions_)
      if (p.task == s.task.get() && p.next > 0) sum += p.next;
    out[key] = sum;
  }
  return out;
}

int64_t StandbyTasks::task_lag(TaskKey key) const {
  const Task* t = tasks_.at(key).task.get();
  int64_t lag = 0;
  for (const auto& [tp, p] : positions_) {
    if (p.task != t) continue;
    int64_t low = -1, high = -1;
    if (rd_kafka_get_watermark_offsets(consumer_.get(), tp.first.c_str(), tp.second, &low, &high) !=
            RD_KAFKA_RESP_ERR_NO_ERROR ||
        high < 0)
      return -1;
    lag += std::max<int64_t>(0, high - std::max<int64_t>(p.next, 0));
  }
  return lag;
}

bool StandbyTasks::warmups_caught_up(int64_t acceptable_lag) {
  if (!consumer_ || fresh_.empty()) return false;
  for (const auto& key : fresh_) {
    if (!tasks_.count(key)) continue;
    int64_t lag = task_lag(key);
    if (lag < 0 || lag > acceptable_lag) return false;
  }
  fresh_.clear();  // they ask for a hand-over once
  return true;
}

}  // namespace oxbow::streams::detail
