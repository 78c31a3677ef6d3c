#include "streams/app/metrics_server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

#include "common/properties.h"
#include "http/admin_server.h"
#include "streams/state/rocksdb_store.h"

namespace oxbow::streams::detail {

namespace {

using metrics::Labels;
using metrics::PrometheusWriter;

void thread_families(PrometheusWriter& w, const MetricsView& view) {
  w.family("oxbow_streams_thread_process_records_total", "counter",
           "Records a stream thread processed.");
  for (const auto& t : view.threads)
    w.sample("oxbow_streams_thread_process_records_total", {{"thread_id", t->thread_id}},
             static_cast<double>(t->processed.value()));
  w.family("oxbow_streams_thread_process_latency_seconds", "histogram",
           "Time to process one record through its task.");
  for (const auto& t : view.threads)
    w.histogram("oxbow_streams_thread_process_latency_seconds", {{"thread_id", t->thread_id}},
                t->process_latency.snapshot());
  w.family("oxbow_streams_thread_commit_total", "counter", "Commits of a stream thread.");
  for (const auto& t : view.threads)
    w.sample("oxbow_streams_thread_commit_total", {{"thread_id", t->thread_id}},
             static_cast<double>(t->commits.value()));
  w.family("oxbow_streams_thread_commit_latency_seconds", "histogram",
           "Time of a commit: caches flushed, writes acknowledged, offsets (or the transaction) "
           "committed, stores checkpointed.");
  for (const auto& t : view.threads)
    w.histogram("oxbow_streams_thread_commit_latency_seconds", {{"thread_id", t->thread_id}},
                t->commit_latency.snapshot());
  w.family("oxbow_streams_thread_production_errors_skipped_total", "counter",
           "Output records the production-exception handler skipped after the broker rejected "
           "them.");
  for (const auto& t : view.threads)
    w.sample("oxbow_streams_thread_production_errors_skipped_total", {{"thread_id", t->thread_id}},
             static_cast<double>(t->production_skipped.value()));
  w.family("oxbow_streams_thread_restored_records_total", "counter",
           "Changelog records a stream thread restored into its stores.");
  for (const auto& t : view.threads)
    w.sample("oxbow_streams_thread_restored_records_total", {{"thread_id", t->thread_id}},
             static_cast<double>(t->restored.value()));
  w.family("oxbow_streams_thread_fetch_restarts_total", "counter",
           "Times a stream thread restarted its consumers' fetching, stalled by librdkafka 2.0.2 "
           "after a full prefetch queue.");
  for (const auto& t : view.threads)
    w.sample("oxbow_streams_thread_fetch_restarts_total", {{"thread_id", t->thread_id}},
             static_cast<double>(t->fetch_restarts.value()));
  w.family("oxbow_streams_thread_redelivered_records_skipped_total", "counter",
           "Input records librdkafka 2.0.2 handed a stream thread again after a fetch restarted "
           "from an older offset, skipped as already processed.");
  for (const auto& t : view.threads)
    w.sample("oxbow_streams_thread_redelivered_records_skipped_total",
             {{"thread_id", t->thread_id}}, static_cast<double>(t->redelivered_skipped.value()));
}

void task_families(PrometheusWriter& w, const MetricsView& view) {
  struct Row {
    std::string thread;
    TaskSnapshot task;
  };
  std::vector<Row> rows;
  std::vector<std::pair<std::string, int64_t>> remaining;
  for (const auto& t : view.threads) {
    std::lock_guard lock(t->mutex);
    for (const auto& task : t->tasks) rows.push_back({t->thread_id, task});
    remaining.emplace_back(t->thread_id, t->restore_remaining);
  }
  w.family("oxbow_streams_standby_tasks", "gauge", "Standby tasks a stream thread keeps.");
  for (const auto& t : view.threads) {
    std::lock_guard lock(t->mutex);
    w.sample("oxbow_streams_standby_tasks", {{"thread_id", t->thread_id}},
             static_cast<double>(t->standby_tasks));
  }
  w.family("oxbow_streams_standby_records_total", "counter",
           "Changelog records a stream thread wrote into its standby tasks' stores.");
  for (const auto& t : view.threads)
    w.sample("oxbow_streams_standby_records_total", {{"thread_id", t->thread_id}},
             static_cast<double>(t->standby_applied.value()));
  w.family("oxbow_streams_standby_lag_records", "gauge",
           "How far a standby store is behind its changelog partition's end.");
  for (const auto& t : view.threads) {
    std::lock_guard lock(t->mutex);
    for (const auto& p : t->positions)
      if (p.standby && p.end >= 0)
        w.sample("oxbow_streams_standby_lag_records",
                 {{"thread_id", t->thread_id},
                  {"store", p.store},
                  {"partition", std::to_string(p.partition)}},
                 static_cast<double>(std::max<int64_t>(0, p.end - p.position)));
  }
  w.family("oxbow_streams_restore_remaining_records", "gauge",
           "Changelog records a stream thread has yet to restore.");
  for (const auto& [thread, n] : remaining)
    w.sample("oxbow_streams_restore_remaining_records", {{"thread_id", thread}},
             static_cast<double>(n));
  auto per_task = [&](const char* name, const char* type, const char* help, auto value) {
    w.family(name, type, help);
    for (const auto& r : rows)
      w.sample(name, {{"thread_id", r.thread}, {"task_id", r.task.id}},
               static_cast<double>(value(r.task.counters)));
  };
  per_task("oxbow_streams_task_process_records_total", "counter", "Records a task processed.",
           [](const TaskCounters& c) { return c.processed; });
  per_task("oxbow_streams_task_restored_records_total", "counter",
           "Changelog records restored into a task's stores.",
           [](const TaskCounters& c) { return c.restored; });
  per_task("oxbow_streams_task_dropped_records_total", "counter",
           "Records a task's operators could not use (a null key where one is needed, ...).",
           [](const TaskCounters& c) { return c.dropped; });
  // Kafka's task-level process-latency-avg and -max, over the records the thread times.
  w.family("oxbow_streams_task_process_latency_seconds", "summary",
           "Time a task took to process a record, sampled over one record in sixteen.");
  for (const auto& r : rows) {
    Labels l{{"thread_id", r.thread}, {"task_id", r.task.id}};
    w.sample("oxbow_streams_task_process_latency_seconds_sum", l,
             r.task.counters.latency_sampled_seconds);
    w.sample("oxbow_streams_task_process_latency_seconds_count", l,
             static_cast<double>(r.task.counters.latency_samples));
  }
  per_task("oxbow_streams_task_process_latency_max_seconds", "gauge",
           "The longest a task took to process one of the records timed.",
           [](const TaskCounters& c) { return c.latency_max_seconds; });
  w.family("oxbow_streams_task_skipped_records_total", "counter",
           "Input records skipped: undecodable (deserialization handler) or with an invalid "
           "timestamp.");
  for (const auto& r : rows) {
    Labels l{{"thread_id", r.thread}, {"task_id", r.task.id}};
    l.push_back({"reason", "deserialization"});
    w.sample("oxbow_streams_task_skipped_records_total", l,
             static_cast<double>(r.task.counters.skipped_undecodable));
    l.back().second = "timestamp";
    w.sample("oxbow_streams_task_skipped_records_total", l,
             static_cast<double>(r.task.counters.skipped_timestamp));
  }
  w.family("oxbow_streams_records_lag", "gauge",
           "Records between a task's position and the end of its input partition.");
  for (const auto& r : rows)
    for (const auto& lag : r.task.lags)
      w.sample("oxbow_streams_records_lag",
               {{"task_id", r.task.id},
                {"topic", lag.topic},
                {"partition", std::to_string(lag.partition)}},
               static_cast<double>(lag.lag));
  auto per_store = [&](const char* name, const char* help, auto value) {
    w.family(name, "gauge", help);
    for (const auto& r : rows)
      for (const auto& s : r.task.stores)
        w.sample(name, {{"task_id", r.task.id}, {"store", s.name}}, static_cast<double>(value(s)));
  };
  per_store("oxbow_streams_store_entries", "Entries of a store (RocksDB's estimate).",
            [](const StoreSnapshot& s) { return s.entries; });
  per_store("oxbow_streams_store_memtable_bytes", "Bytes of a RocksDB store's memtables.",
            [](const StoreSnapshot& s) { return s.memtable_bytes; });
  per_store("oxbow_streams_store_disk_bytes", "Bytes of a RocksDB store's SST files.",
            [](const StoreSnapshot& s) { return s.disk_bytes; });
}

}  // namespace

std::string prometheus_text(const MetricsView& view) {
  PrometheusWriter w;
  w.family("oxbow_streams_client_state", "gauge",
           "1 for the instance's state (CREATED, RUNNING, REBALANCING, ...).");
  w.sample("oxbow_streams_client_state",
           {{"application_id", view.application_id}, {"state", view.state}}, 1);
  w.family("oxbow_streams_alive_stream_threads", "gauge", "Stream threads running.");
  w.sample("oxbow_streams_alive_stream_threads", {}, static_cast<double>(view.threads.size()));
  if (view.rocksdb_memory) {
    w.family("oxbow_streams_rocksdb_memory_budget_bytes", "gauge",
             "rocksdb.memory.max.bytes: what all RocksDB stores of the instance may use.");
    w.sample("oxbow_streams_rocksdb_memory_budget_bytes", {},
             static_cast<double>(view.rocksdb_memory->max_bytes()));
    w.family("oxbow_streams_rocksdb_memory_bytes", "gauge",
             "Bytes the shared block cache holds now, memtable reservations included.");
    w.sample("oxbow_streams_rocksdb_memory_bytes", {},
             static_cast<double>(view.rocksdb_memory->usage()));
  }
  thread_families(w, view);
  task_families(w, view);
  return w.text();
}

struct MetricsServer::Impl {
  boost::asio::io_context context;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{
      context.get_executor()};
  std::unique_ptr<http::AdminServer> server;
  std::thread thread;
};

MetricsServer::MetricsServer(const std::string& listener, std::function<std::string()> render)
    : impl_(std::make_unique<Impl>()) {
  auto colon = listener.rfind(':');
  auto port = colon == std::string::npos ? std::nullopt : parse_int64(listener.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535)
    throw std::invalid_argument("metrics.listener: '" + listener + "' is not HOST:PORT");
  std::string host = listener.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  impl_->server = std::make_unique<http::AdminServer>(
      impl_->context, [render = std::move(render)](const http::Request& request) {
        if (request.path != "/metrics")
          return http::Response{404, "text/plain", "not found: try /metrics\n"};
        return http::Response{200, "text/plain; version=0.0.4; charset=utf-8", render()};
      });
  std::string error;
  if (!impl_->server->listen(host, static_cast<uint16_t>(*port), error))
    throw std::invalid_argument("metrics.listener: cannot listen on " + listener + ": " + error);
  impl_->thread = std::thread([this] { impl_->context.run(); });
}

MetricsServer::~MetricsServer() {
  impl_->server->close();
  impl_->work.reset();
  impl_->context.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

uint16_t MetricsServer::port() const {
  return impl_->server->port();
}

}  // namespace oxbow::streams::detail
