#include "streams/runtime/global_thread.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <set>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

GlobalThread::GlobalThread(std::shared_ptr<const GraphBuilder> graph, Config app,
                           bool read_committed, DeserializationPolicy policy,
                           std::shared_ptr<GlobalStores> stores)
    : graph_(std::move(graph)),
      app_(std::move(app)),
      read_committed_(read_committed),
      policy_(policy),
      stores_(std::move(stores)) {}

GlobalThread::~GlobalThread() {
  stop();
}

void GlobalThread::start() {
  std::string id = app_.count("application.id") ? app_.at("application.id") : "streams";
  auto* conf =
      client_conf(app_, ClientRole::kConsumer,
                  {{"client.id", id + "-global-consumer"},
                   {"group.id", id + "-global"},
                   {"enable.auto.commit", "false"},
                   {"enable.partition.eof", "true"},
                   {"isolation.level", read_committed_ ? "read_committed" : "read_uncommitted"},
                   {"fetch.wait.max.ms", "100"}});
  consumer_ = make_client(RD_KAFKA_CONSUMER, conf);
  updater_ = std::make_unique<GlobalStateUpdater>(graph_, stores_, policy_, id);
  auto* list = rd_kafka_topic_partition_list_new(0);
  std::set<std::pair<std::string, int32_t>> reading;
  for (const auto& g : graph_->global_tables()) {
    stores_->store(g.store);
    int32_t n = partition_count(consumer_.get(), g.topic);
    if (n == 0) {
      rd_kafka_topic_partition_list_destroy(list);
      throw StreamsException("MissingSourceTopicException: source topics do not exist: " + g.topic);
    }
    for (int32_t p = 0; p < n; ++p) {
      rd_kafka_topic_partition_list_add(list, g.topic.c_str(), p)->offset =
          RD_KAFKA_OFFSET_BEGINNING;
      reading.insert({g.topic, p});
    }
  }
  rd_kafka_assign(consumer_.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  auto started = std::chrono::steady_clock::now();
  int64_t records = 0;
  while (!reading.empty() && !stop_) {
    std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> m(
        rd_kafka_consumer_poll(consumer_.get(), 100), &rd_kafka_message_destroy);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      reading.erase({rd_kafka_topic_name(m->rkt), m->partition});
    } else if (m->err) {
      throw StreamsException(std::string("reading a global table: ") +
                             rd_kafka_message_errstr(m.get()));
    } else {
      apply(m.get());
      ++records;
    }
  }
  spdlog::info("global thread: restored {} records into {} global stores in {} ms", records,
               graph_->global_tables().size(),
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - started)
                   .count());
  thread_ = std::thread([this] { run(); });
}

void GlobalThread::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (consumer_) {
    rd_kafka_consumer_close(consumer_.get());
    consumer_.reset();
  }
}

void GlobalThread::run() {
  try {
    while (!stop_) {
      std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> m(
          rd_kafka_consumer_poll(consumer_.get(), 100), &rd_kafka_message_destroy);
      if (!m || m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) continue;
      if (m->err) {
        spdlog::warn("global thread: {}", rd_kafka_message_errstr(m.get()));
        continue;
      }
      apply(m.get());
    }
  } catch (const std::exception& e) {
    failure_ = e.what();
    failed_ = true;
    spdlog::error("global thread failed: {}", e.what());
  }
}

void GlobalThread::apply(const rd_kafka_message_t* m) {
  updater_->apply(raw_record(m, rd_kafka_topic_name(m->rkt)));
}

}  // namespace oxbow::streams::detail
