#include "common/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace oxbow::metrics {

TEST(Metrics, CounterSumsShardsFromManyThreads) {
  Counter c;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&c] {
      for (int i = 0; i < 10000; ++i) c.add();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 80000u);
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  const double bounds[] = {1, 10};
  Histogram h(bounds);
  h.observe(0.5);
  h.observe(1);
  h.observe(5);
  h.observe(50);
  auto s = h.snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.sum, 56.5);
}

TEST(Metrics, PrometheusTextFormat) {
  PrometheusWriter w;
  w.family("oxbow_requests_total", "counter", "Requests.");
  w.sample("oxbow_requests_total", {{"api", "Produce"}, {"odd", "a\"b\\c"}}, 3);
  const double bounds[] = {0.5};
  Histogram h(bounds);
  h.observe(0.25);
  w.family("oxbow_latency_seconds", "histogram", "Latency.");
  w.histogram("oxbow_latency_seconds", {}, h.snapshot());
  EXPECT_EQ(w.text(),
            "# HELP oxbow_requests_total Requests.\n# TYPE oxbow_requests_total counter\n"
            "oxbow_requests_total{api=\"Produce\",odd=\"a\\\"b\\\\c\"} 3\n"
            "# HELP oxbow_latency_seconds Latency.\n# TYPE oxbow_latency_seconds histogram\n"
            "oxbow_latency_seconds_bucket{le=\"0.5\"} 1\n"
            "oxbow_latency_seconds_bucket{le=\"+Inf\"} 1\n"
            "oxbow_latency_seconds_sum 0.25\n"
            "oxbow_latency_seconds_count 1\n");
}

}  // namespace oxbow::metrics
