#pragma once
// KTable.suppress(): holding back a table's updates, as Kafka Streams' Suppressed (KIP-328).
//
//  - Suppressed<Windowed<K>>::untilWindowCloses(StrictBufferConfig): one final result per window,
//    emitted once stream time passes the window's end plus the grace period of the windowed
//    aggregation upstream. Tombstones are not emitted.
//  - Suppressed<K>::untilTimeLimit(time, BufferConfig): a key's latest update, emitted once stream
//    time is `time` past the first update buffered for it (rate limiting).
//
// The stream time is the suppression's own: the latest timestamp among the updates it received.
// Its buffer is kept in memory and changelogged (unless logging is disabled), so it survives a
// restart or a move to another instance.
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "oxbow/streams/detail/access.h"
#include "oxbow/streams/windows.h"

namespace oxbow::streams {

namespace detail {
struct SuppressOptions {
  bool until_window_closes = false;
  int64_t time_limit_ms = 0;  // untilTimeLimit
  int64_t max_records = std::numeric_limits<int64_t>::max();
  int64_t max_bytes = std::numeric_limits<int64_t>::max();
  bool shut_down_when_full = true;  // else the oldest updates are emitted early
  bool logging = true;
  std::map<std::string, std::string> changelog_configs;
  std::string name;  // the node's; its store is "<name>-store"
};
}  // namespace detail

// Buffer limits. maxRecords / maxBytes emit early when full unless shutDownWhenFull() is called;
// unbounded() never fills. A strict config (StrictBufferConfig) never emits early: when full, the
// application shuts down with an error instead.
class StrictBufferConfig;
class BufferConfig {
 public:
  static BufferConfig maxRecords(int64_t records) { return BufferConfig().withMaxRecords(records); }
  static BufferConfig maxBytes(int64_t bytes) { return BufferConfig().withMaxBytes(bytes); }
  static StrictBufferConfig unbounded();
  BufferConfig withMaxRecords(int64_t records) const {
    if (records < 0) throw std::invalid_argument("a buffer's record limit cannot be negative");
    BufferConfig c(*this);
    c.options_.max_records = records;
    return c;
  }
  BufferConfig withMaxBytes(int64_t bytes) const {
    if (bytes < 0) throw std::invalid_argument("a buffer's byte limit cannot be negative");
    BufferConfig c(*this);
    c.options_.max_bytes = bytes;
    return c;
  }
  BufferConfig emitEarlyWhenFull() const {
    BufferConfig c(*this);
    c.options_.shut_down_when_full = false;
    return c;
  }
  StrictBufferConfig shutDownWhenFull() const;
  BufferConfig withLoggingDisabled() const {
    BufferConfig c(*this);
    c.options_.logging = false;
    return c;
  }
  BufferConfig withLoggingEnabled(std::map<std::string, std::string> configs = {}) const {
    BufferConfig c(*this);
    c.options_.logging = true;
    c.options_.changelog_configs = std::move(configs);
    return c;
  }

 protected:
  template <class>
  friend class Suppressed;
  friend class StrictBufferConfig;
  BufferConfig() { options_.shut_down_when_full = false; }
  const detail::SuppressOptions& options() const { return options_; }
  detail::SuppressOptions options_;
};

class StrictBufferConfig : public BufferConfig {
 public:
  StrictBufferConfig withMaxRecords(int64_t records) const {
    return strict(BufferConfig::withMaxRecords(records));
  }
  StrictBufferConfig withMaxBytes(int64_t bytes) const {
    return strict(BufferConfig::withMaxBytes(bytes));
  }
  StrictBufferConfig withLoggingDisabled() const {
    return strict(BufferConfig::withLoggingDisabled());
  }
  StrictBufferConfig withLoggingEnabled(std::map<std::string, std::string> configs = {}) const {
    return strict(BufferConfig::withLoggingEnabled(std::move(configs)));
  }

 private:
  friend class BufferConfig;
  static StrictBufferConfig strict(const BufferConfig& c) {
    StrictBufferConfig s;
    s.options_ = c.options();
    s.options_.shut_down_when_full = true;
    return s;
  }
};

inline StrictBufferConfig BufferConfig::unbounded() {
  return StrictBufferConfig::strict({});
}
inline StrictBufferConfig BufferConfig::shutDownWhenFull() const {
  return StrictBufferConfig::strict(*this);
}

template <class K>
class Suppressed {
 public:
  // Only for windowed tables (K a Windowed<...>): the final result of each window.
  static Suppressed untilWindowCloses(const StrictBufferConfig& buffer) {
    Suppressed s(buffer);
    s.options_.until_window_closes = true;
    return s;
  }
  static Suppressed untilTimeLimit(std::chrono::milliseconds time, const BufferConfig& buffer) {
    if (time.count() < 0)
      throw std::invalid_argument("a suppression time limit cannot be negative");
    Suppressed s(buffer);
    s.options_.time_limit_ms = time.count();
    return s;
  }
  Suppressed withName(std::string name) const {
    Suppressed s(*this);
    s.options_.name = std::move(name);
    return s;
  }

 private:
  friend struct detail::Access;
  explicit Suppressed(const BufferConfig& buffer) : options_(buffer.options()) {}
  const detail::SuppressOptions& options() const { return options_; }
  detail::SuppressOptions options_;
};

}  // namespace oxbow::streams
