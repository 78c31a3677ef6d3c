#pragma once
// Metrics primitives and their Prometheus text exposition.
//
// Counters and histograms are sharded by thread: an update is one relaxed atomic add on a cache
// line that the updating thread (almost always) has to itself, and the shards are summed only
// when /metrics is scraped. Histograms have fixed bucket bounds chosen at construction.
// Building with -DOXBOW_NO_METRICS turns every update into nothing (for measuring their cost).
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace oxbow::metrics {

inline constexpr size_t kShards = 16;
size_t this_thread_shard();

class Counter {
 public:
  void add(uint64_t n = 1) {
#ifndef OXBOW_NO_METRICS
    shards_[this_thread_shard()].value.fetch_add(n, std::memory_order_relaxed);
#else
    (void)n;
#endif
  }
  uint64_t value() const;

 private:
  struct alignas(64) Shard {
    std::atomic<uint64_t> value{0};
  };
  std::array<Shard, kShards> shards_;
};

// Bucket bounds for latencies in seconds (0.1 ms .. 10 s) and sizes in bytes (100 B .. 100 MB).
std::span<const double> latency_buckets();
std::span<const double> size_buckets();

class Histogram {
 public:
  explicit Histogram(std::span<const double> bounds);
  void observe(double value);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    uint64_t count = 0;
    double sum = 0;
  };
  Snapshot snapshot() const;

 private:
  struct alignas(64) Shard {
    std::vector<std::atomic<uint64_t>> buckets;  // bounds.size() + 1
    std::atomic<double> sum{0};
  };
  std::vector<double> bounds_;
  std::array<Shard, kShards> shards_;
};

using Labels = std::vector<std::pair<std::string, std::string>>;

// Builds the text exposition format (version 0.0.4): one family at a time, then its samples.
class PrometheusWriter {
 public:
  void family(const std::string& name, const char* type, const std::string& help);
  void sample(const std::string& name, const Labels& labels, double value);
  void histogram(const std::string& name, const Labels& labels,
                 const Histogram::Snapshot& snapshot);
  const std::string& text() const { return out_; }

 private:
  std::string out_;
};

std::string escape_label_value(const std::string& value);

}  // namespace oxbow::metrics
