#pragma once
// metrics.listener: the Prometheus text of one KafkaStreams instance over HTTP (GET /metrics),
// on a thread of its own, so that a busy or stuck stream thread never delays a scrape.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "streams/runtime/thread_metrics.h"

namespace oxbow::streams::detail {

class RocksDbMemory;

// Everything a scrape reports, gathered by the KafkaStreams instance.
struct MetricsView {
  std::string application_id;
  std::string state;
  std::vector<std::shared_ptr<ThreadMetrics>> threads;
  const RocksDbMemory* rocksdb_memory = nullptr;
};

std::string prometheus_text(const MetricsView& view);

class MetricsServer {
 public:
  // `listener`: HOST:PORT (port 0 picks a free one). Throws std::invalid_argument when it cannot
  // listen there.
  MetricsServer(const std::string& listener, std::function<std::string()> render);
  ~MetricsServer();
  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::streams::detail
