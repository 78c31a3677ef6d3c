#pragma once
// Per-partition log settings: Kafka's topic-level configs, resolved against broker defaults.
#include <cstdint>
#include <limits>

#include "protocol/compression.h"

namespace oxbow::storage {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

inline constexpr int kProducerCompression = -1;

struct LogConfig {
  int64_t segment_bytes = 1073741824;             // segment.bytes / log.segment.bytes
  int64_t segment_ms = 7LL * 24 * 3600 * 1000;    // segment.ms / log.roll.ms
  int64_t retention_ms = 7LL * 24 * 3600 * 1000;  // retention.ms / log.retention.ms; -1 = forever
  int64_t retention_bytes = -1;                   // retention.bytes / log.retention.bytes
  int64_t flush_messages = kNever;                // flush.messages / log.flush.interval.messages
  int64_t flush_ms = kNever;                      // flush.ms / log.flush.interval.ms
  int32_t index_interval_bytes = 4096;            // index.interval.bytes
  int32_t max_message_bytes = 1048588;            // max.message.bytes / message.max.bytes
  int32_t min_insync_replicas = 1;                // min.insync.replicas: for acks=all produce
  bool log_append_time = false;                   // message.timestamp.type=LogAppendTime
  int64_t timestamp_difference_max_ms = kNever;   // message.timestamp.difference.max.ms
  bool delete_policy = true;                      // cleanup.policy includes "delete"
  bool compact = false;                           // cleanup.policy includes "compact"
  double min_cleanable_dirty_ratio = 0.5;         // min.cleanable.dirty.ratio
  int64_t min_compaction_lag_ms = 0;              // min.compaction.lag.ms
  int64_t max_compaction_lag_ms = kNever;         // max.compaction.lag.ms
  int64_t delete_retention_ms = 86400000;         // delete.retention.ms (tombstones, markers)
  // message.downconversion.enable: whether Fetch v0-v3 may have the records converted to their
  // older formats. Not the log's business; carried here as the topic's resolved setting.
  bool message_downconversion = true;
  // compression.type as a codec number: the codec Produce stores batches in (0 uncompressed), or
  // kProducerCompression to keep each producer's. Applied by the broker's produce path.
  int compression_codec = kProducerCompression;
  // compression.gzip.level, compression.lz4.level, compression.zstd.level (KIP-390), Kafka's
  // levels for the codec compression.type names.
  int gzip_level = -1;
  int lz4_level = 9;
  int zstd_level = 3;
  int compression_level() const {
    switch (compression_codec) {
      case protocol::kGzipCodec:
        return gzip_level;
      case protocol::kLz4Codec:
        return lz4_level;
      case protocol::kZstdCodec:
        return zstd_level;
      default:
        return 0;  // snappy and uncompressed have no level
    }
  }
};

}  // namespace oxbow::storage
