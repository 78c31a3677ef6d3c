#include "common/metrics.h"

#include <cmath>
#include <cstdio>

namespace oxbow::metrics {

size_t this_thread_shard() {
  static std::atomic<size_t> next{0};
  thread_local size_t shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

uint64_t Counter::value() const {
  uint64_t total = 0;
  for (const auto& s : shards_) total += s.value.load(std::memory_order_relaxed);
  return total;
}

std::span<const double> latency_buckets() {
  static const double bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                  0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return bounds;
}

std::span<const double> size_buckets() {
  static const double bounds[] = {100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
  return bounds;
}

Histogram::Histogram(std::span<const double> bounds) : bounds_(bounds.begin(), bounds.end()) {
  for (auto& shard : shards_)
    shard.buckets = std::vector<std::atomic<uint64_t>>(bounds_.size() + 1);
}

void Histogram::observe(double value) {
#ifndef OXBOW_NO_METRICS
  auto& shard = shards_[this_thread_shard()];
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  shard.buckets[i].fetch_add(1, std::memory_order_relaxed);
  shard.sum.fetch_add(value, std::memory_order_relaxed);
#else
  (void)value;
#endif
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  std::vector<uint64_t> counts(bounds_.size() + 1, 0);
  for (const auto& shard : shards_) {
    for (size_t i = 0; i < counts.size(); ++i)
      counts[i] += shard.buckets[i].load(std::memory_order_relaxed);
    s.sum += shard.sum.load(std::memory_order_relaxed);
  }
  uint64_t running = 0;
  for (uint64_t c : counts) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.count = running;
  return s;
}

std::string escape_label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

namespace {

std::string format_value(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buffer[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buffer, sizeof(buffer), "%.0f", v);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  }
  return buffer;
}

std::string format_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first + "=\"" + escape_label_value(labels[i].second) + "\"";
  }
  return out + "}";
}

}  // namespace

void PrometheusWriter::family(const std::string& name, const char* type, const std::string& help) {
  out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void PrometheusWriter::sample(const std::string& name, const Labels& labels, double value) {
  out_ += name + format_labels(labels) + " " + format_value(value) + "\n";
}

void PrometheusWriter::histogram(const std::string& name, const Labels& labels,
                                 const Histogram::Snapshot& s) {
  for (size_t i = 0; i <= s.bounds.size(); ++i) {
    Labels with_le = labels;
    with_le.emplace_back("le", i < s.bounds.size() ? format_value(s.bounds[i]) : "+Inf");
    sample(name + "_bucket", with_le, static_cast<double>(s.cumulative[i]));
  }
  sample(name + "_sum", labels, s.sum);
  sample(name + "_count", labels, static_cast<double>(s.count));
}

}  // namespace oxbow::metrics
