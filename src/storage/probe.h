#pragma once
// Storage metrics, updated where the work happens and read when /metrics is scraped.
#include "common/metrics.h"

namespace oxbow::storage {

struct StorageProbe {
  metrics::Histogram flush_seconds{metrics::latency_buckets()};  // one partition's fdatasync
  metrics::Counter flushes;
  metrics::Counter recovered_bytes_truncated;
};

StorageProbe& probe();

}  // namespace oxbow::storage
