#include "sql/server/command_follower.h"
#include "rdkafka/offsets.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace oxbow::sql::server {

namespace {

constexpr int kPollMs = 100;
constexpr int kTimeoutMs = 10'000;

}  // namespace

CommandFollower::CommandFollower(const ClientConfig& config, std::string topic)
    : topic_(std::move(topic)),
      // Assigned, never subscribed: every server reads the whole topic, no group shares it.
      consumer_(new_kafka_client(RD_KAFKA_CONSUMER, config,
                                 {{"group.id", "oxbow-sql-command-runner"},
                                  {"enable.auto.commit", "false"},
                                  {"enable.auto.offset.store", "false"},
                                  // Committed transactions only; their markers take offsets
                                  // too, so the end reached says how far the topic is read.
                                  {"isolation.level", "read_committed"},
                                  {"enable.partition.eof", "true"},
                                  {"fetch.wait.max.ms", "50"}})) {
  rd_kafka_poll_set_consumer(consumer_);
}

CommandFollower::~CommandFollower() {
  stop();
  rd_kafka_consumer_close(consumer_);
  rd_kafka_destroy(consumer_);
}

void CommandFollower::start() {
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic_.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(consumer_, list);
  rd_kafka_topic_partition_list_destroy(list);
  fetcher_ = std::thread([this] { fetch(); });
}

void CommandFollower::follow(std::function<void()> apply) {
  applier_ = std::thread([this, apply = std::move(apply)] { apply_loop(apply); });
}

void CommandFollower::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (fetcher_.joinable()) fetcher_.join();
  if (applier_.joinable()) applier_.join();
}

int64_t CommandFollower::last_offset() {
  int64_t low = 0, high = 0;
  if (auto err = rdkafka::query_watermarks(consumer_, topic_, 0, &low, &high, kTimeoutMs))
    throw CommandWaitTimeout("reading the end of " + topic_ + ": " + rd_kafka_err2str(err));
  return high - 1;
}

void CommandFollower::fetch() {
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_, kPollMs);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      std::lock_guard lock(mutex_);
      fetched_ = std::max(fetched_, m->offset - 1);
      changed_.notify_all();
    } else if (m->err) {
      spdlog::warn("sql-server: reading {}: {}", topic_, rd_kafka_message_errstr(m));
    } else {
      std::string key(static_cast<const char*>(m->key), m->key ? m->key_len : 0);
      std::string value(static_cast<const char*>(m->payload), m->payload ? m->len : 0);
      std::lock_guard lock(mutex_);
      try {
        queue_.push_back(parse_command(key, value, m->offset));
      } catch (const std::exception& e) {
        spdlog::error("sql-server: {}: {}, skipped", topic_, e.what());
      }
      fetched_ = m->offset;
      changed_.notify_all();
    }
    rd_kafka_message_destroy(m);
  }
}

void CommandFollower::apply_loop(const std::function<void()>& apply) {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
    }
    try {
      apply();
    } catch (const std::exception& e) {
      spdlog::error("sql-server: applying {}: {}", topic_, e.what());
    }
  }
}

std::vector<Command> CommandFollower::take(int64_t through, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [&] { return stopping_ || fetched_ >= through; }) ||
      fetched_ < through)
    throw CommandWaitTimeout("the command topic " + topic_ + " was not read up to offset " +
                             std::to_string(through) + " in " + std::to_string(timeout.count()) +
                             " ms");
  std::vector<Command> out(queue_.begin(), queue_.end());
  queue_.clear();
  return out;
}

std::vector<Command> CommandFollower::take_ready() {
  std::lock_guard lock(mutex_);
  std::vector<Command> out(queue_.begin(), queue_.end());
  queue_.clear();
  return out;
}

}  // namespace oxbow::sql::server
