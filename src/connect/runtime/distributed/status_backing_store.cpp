#include "connect/runtime/distributed/status_backing_store.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace oxbow::connect::runtime::distributed {

namespace {

TopicSettings statusTopic(TopicSettings topic) {
  if (topic.workerProperty.empty()) topic.workerProperty = "status.storage.topic";
  if (topic.purpose.empty()) topic.purpose = "connector and task statuses";
  return topic;
}

bool canWriteSafely(const std::optional<StatusRecord>& known, const StatusRecord& status) {
  return !known || known->workerId == status.workerId || known->generation <= status.generation;
}

void logFailure(const std::string& key, const std::string& error) {
  if (!error.empty()) spdlog::error("connect: failed to write status update {}: {}", key, error);
}

}  // namespace

StatusBackingStore::StatusBackingStore(const WorkerConfig& worker, TopicSettings topic)
    : log_(worker, statusTopic(std::move(topic)), "connect-statuses-",
           [this](const std::string& key, const std::optional<std::string>& value, int32_t,
                  int64_t) { consumed(key, value); }) {}

void StatusBackingStore::start() {
  log_.start();
}

void StatusBackingStore::stop() {
  log_.stop();
}

void StatusBackingStore::flush() {
  log_.flush();
}

void StatusBackingStore::put(const std::string& key, Entry& entry, const StatusRecord& status,
                             bool safe) {
  // Under mutex_. librdkafka retries a write until it is acknowledged (the producer has no
  // delivery timeout), so a failure reported here is final.
  if (safe && !canWriteSafely(entry.value, status)) {
    spdlog::debug("connect: not writing status {} over {}'s of generation {}", key,
                  entry.value->workerId, entry.value->generation);
    return;
  }
  std::optional<std::string> value;
  if (status.state != "DESTROYED") value = status_records::statusValue(status);
  log_.send(key, value, [key](const std::string& error) { logFailure(key, error); });
}

void StatusBackingStore::putConnector(const std::string& name, const StatusRecord& status) {
  std::lock_guard lock(mutex_);
  put(status_records::connectorKey(name), connectors_[name], status, false);
}

void StatusBackingStore::putTask(const std::string& connector, int task,
                                 const StatusRecord& status) {
  std::lock_guard lock(mutex_);
  put(status_records::taskKey(connector, task), tasks_[connector][task], status, false);
}

void StatusBackingStore::putConnectorSafe(const std::string& name, const StatusRecord& status) {
  std::lock_guard lock(mutex_);
  put(status_records::connectorKey(name), connectors_[name], status, true);
}

void StatusBackingStore::putTaskSafe(const std::string& connector, int task,
                                     const StatusRecord& status) {
  std::lock_guard lock(mutex_);
  put(status_records::taskKey(connector, task), tasks_[connector][task], status, true);
}

std::optional<StatusRecord> StatusBackingStore::connector(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = connectors_.find(name);
  return it == connectors_.end() ? std::nullopt : it->second.value;
}

std::map<int, StatusRecord> StatusBackingStore::tasks(const std::string& connector) const {
  std::lock_guard lock(mutex_);
  std::map<int, StatusRecord> out;
  auto it = tasks_.find(connector);
  if (it == tasks_.end()) return out;
  for (const auto& [task, entry] : it->second) {
    if (entry.value) out.emplace(task, *entry.value);
  }
  return out;
}

std::vector<std::string> StatusBackingStore::connectors() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, entry] : connectors_) {
    if (entry.value) out.push_back(name);
  }
  return out;
}

void StatusBackingStore::deleteConnector(const std::string& name) {
  std::vector<KafkaBasedLog::Record> records;
  {
    std::lock_guard lock(mutex_);
    if (auto it = tasks_.find(name); it != tasks_.end()) {
      for (const auto& [task, entry] : it->second) {
        records.emplace_back(status_records::taskKey(name, task), std::nullopt);
      }
    }
    if (auto it = topics_.find(name); it != topics_.end()) {
      for (const auto& [topic, status] : it->second) {
        records.emplace_back(status_records::topicKey(topic, name), std::nullopt);
      }
    }
  }
  records.emplace_back(status_records::connectorKey(name), std::nullopt);
  for (const auto& [key, value] : records) {
    log_.send(key, value, [key = key](const std::string& error) { logFailure(key, error); });
  }
}

void StatusBackingStore::putTopic(const std::string& connector, const std::string& topic,
                                  int task) {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  std::string key = status_records::topicKey(topic, connector);
  log_.send(key, status_records::topicValue({topic, connector, task, now}),
            [key](const std::string& error) { logFailure(key, error); });
}

std::vector<std::string> StatusBackingStore::topics(const std::string& connector) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  if (auto it = topics_.find(connector); it != topics_.end()) {
    for (const auto& [topic, status] : it->second) out.push_back(topic);
  }
  return out;
}

void StatusBackingStore::resetTopics(const std::string& connector) {
  for (const std::string& topic : topics(connector)) {
    std::string key = status_records::topicKey(topic, connector);
    log_.send(key, std::nullopt, [key](const std::string& error) { logFailure(key, error); });
  }
}

void StatusBackingStore::consumed(const std::string& key, const std::optional<std::string>& value) {
  auto parsed = status_records::parseKey(key);
  if (!parsed) return;
  if (parsed->kind == StatusKey::Kind::TASK) return readTask(*parsed, value);
  if (parsed->kind == StatusKey::Kind::TOPIC) return readTopic(*parsed, value);
  if (!value) {
    // The connector is gone: so are its tasks' statuses.
    std::lock_guard lock(mutex_);
    connectors_.erase(parsed->connector);
    tasks_.erase(parsed->connector);
    return;
  }
  auto status = status_records::parseStatus(*value);
  if (!status) return;
  std::lock_guard lock(mutex_);
  connectors_[parsed->connector].value = std::move(*status);
}

void StatusBackingStore::readTask(const StatusKey& key, const std::optional<std::string>& value) {
  if (!value) {
    std::lock_guard lock(mutex_);
    if (auto it = tasks_.find(key.connector); it != tasks_.end()) it->second.erase(key.task);
    return;
  }
  auto status = status_records::parseStatus(*value);
  if (!status) return;
  std::lock_guard lock(mutex_);
  Entry& entry = tasks_[key.connector][key.task];
  // A worker that missed a newer RUNNING during a rebalance may still write UNASSIGNED of the
  // same or an older generation: the RUNNING one stands, as Kafka reads it.
  if (status->state == "UNASSIGNED" && entry.value && entry.value->state == "RUNNING" &&
      entry.value->generation >= status->generation) {
    return;
  }
  entry.value = std::move(*status);
}

void StatusBackingStore::readTopic(const StatusKey& key, const std::optional<std::string>& value) {
  if (!value) {
    std::lock_guard lock(mutex_);
    if (auto it = topics_.find(key.connector); it != topics_.end()) it->second.erase(key.topic);
    return;
  }
  auto status = status_records::parseTopic(*value);
  if (!status) return;
  std::lock_guard lock(mutex_);
  topics_[key.connector][key.topic] = std::move(*status);
}

}  // namespace oxbow::connect::runtime::distributed
