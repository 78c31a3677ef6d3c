#pragma once
// Storage metrics, updated where the work happens and read when /metrics is scraped.
#include "common/metrics.h"

namespace oxbow::storage {

struct StorageProbe {
  metrics::Histogram flush_seconds{metrics::latency_buckets()};  // one partition's fdatasync
  metrics::Counter flushes;
  metrics::Counter recovered_bytes_truncated;
  metrics::Counter cleaner_runs;  // compaction passes that rewrote a log
  metrics::Counter cleaner_bytes_read;
  metrics::Counter cleaner_bytes_written;
  metrics::Counter cleaner_records_removed;
  metrics::Histogram cleaner_seconds{metrics::latency_buckets()};
};

StorageProbe& probe();

}  // namespace oxbow::storage
