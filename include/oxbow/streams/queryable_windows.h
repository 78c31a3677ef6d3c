#pragma once
// Interactive queries of window and session stores (Kafka's ReadOnlyWindowStore and
// ReadOnlySessionStore), from QueryableStoreTypes::windowStore<K, V>(),
// timestampedWindowStore<K, V>() and sessionStore<K, AGG>() (queryable.h):
//
//   auto clicks = streams.store(StoreQueryParameters<>::fromNameAndType(
//       "clicks-per-minute", QueryableStoreTypes::windowStore<std::string, int64_t>()));
//   for (const auto& [start, n] : clicks.fetch("alice", from_ms, to_ms)) ...
//
// Times are milliseconds since the epoch, or system_clock time points; time bounds include both
// ends, as Kafka's. Results are vectors rather than closeable iterators. Across several local
// partitions, as Kafka's composite stores: a query of one key answers from the first store that
// has anything for it; key ranges and all() come one store after another, each store's part in
// store order (by key bytes, then window, oldest first; backward: the reverse), the whole not
// sorted.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/streams/queryable.h"

namespace oxbow::streams {
namespace detail {

// A window or session as read from a store: the key with its window, the value, and the
// timestamp of the update that wrote it.
struct WindowedRow {
  WindowedDatum key;
  Datum value;
  int64_t timestamp = 0;
};

// The untyped core of both facades (src/streams/query/queryable.cpp). Null key bounds are open.
class WindowedReads {
 public:
  explicit WindowedReads(std::shared_ptr<const StoreAccess> access) : access_(std::move(access)) {}
  std::optional<WindowedRow> window(const Datum& key, int64_t start) const;
  std::vector<WindowedRow> windows_of(const Datum& key, int64_t from, int64_t to,
                                      bool backward) const;
  std::vector<WindowedRow> windows(const Datum* key_from, const Datum* key_to, int64_t from,
                                   int64_t to, bool backward) const;
  std::optional<WindowedRow> session(const Datum& key, int64_t start, int64_t end) const;
  std::vector<WindowedRow> sessions_of(const Datum& key, int64_t earliest_end, int64_t latest_start,
                                       bool backward) const;
  std::vector<WindowedRow> sessions(const Datum* key_from, const Datum* key_to,
                                    int64_t earliest_end, int64_t latest_start,
                                    bool backward) const;

  template <class V>
  V value(const WindowedRow& row) const {
    return typed_value<V>(*access_, row.value, row.timestamp);
  }
  template <class K, class V>
  std::vector<streams::KeyValue<Windowed<K>, V>> windowed(
      const std::vector<WindowedRow>& rows) const {
    std::vector<streams::KeyValue<Windowed<K>, V>> out;
    out.reserve(rows.size());
    for (const auto& row : rows)
      out.push_back(
          {Windowed<K>{typed_datum<K>(*access_, row.key.key), row.key.window}, value<V>(row)});
    return out;
  }
  const std::string& name() const { return access_->name; }

 private:
  std::shared_ptr<const StoreAccess> access_;
};

inline int64_t epoch_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace detail

// A read-only view of a window store (Kafka's ReadOnlyWindowStore<K, V>): one value per key and
// window, windows named by their start. V is the value's type, or ValueAndTimestamp<X> for
// QueryableStoreTypes::timestampedWindowStore<K, X>().
template <class K, class V>
class ReadOnlyWindowStore {
 public:
  using key_type = K;
  using value_type = V;
  using TimePoint = std::chrono::system_clock::time_point;
  static constexpr bool kTimestamped = detail::IsValueAndTimestamp<V>::value;
  static constexpr detail::StoreKind kKind = detail::StoreKind::kWindow;

  explicit ReadOnlyWindowStore(std::shared_ptr<const detail::StoreAccess> access)
      : reads_(std::move(access)) {}

  // The value of the window of `key` that starts exactly at `time`, or nothing.
  std::optional<V> fetch(const K& key, int64_t time) const {
    auto row = reads_.window(detail::to_datum(key), time);
    if (!row) return std::nullopt;
    return reads_.value<V>(*row);
  }
  std::optional<V> fetch(const K& key, TimePoint time) const {
    return fetch(key, detail::epoch_ms(time));
  }
  // The windows of `key` that start in [from, to], oldest first, as (window start, value).
  std::vector<KeyValue<int64_t, V>> fetch(const K& key, int64_t from, int64_t to) const {
    return starts(reads_.windows_of(detail::to_datum(key), from, to, false));
  }
  std::vector<KeyValue<int64_t, V>> fetch(const K& key, TimePoint from, TimePoint to) const {
    return fetch(key, detail::epoch_ms(from), detail::epoch_ms(to));
  }
  // As fetch(key, from, to), newest first.
  std::vector<KeyValue<int64_t, V>> backwardFetch(const K& key, int64_t from, int64_t to) const {
    return starts(reads_.windows_of(detail::to_datum(key), from, to, true));
  }
  std::vector<KeyValue<int64_t, V>> backwardFetch(const K& key, TimePoint from,
                                                  TimePoint to) const {
    return backwardFetch(key, detail::epoch_ms(from), detail::epoch_ms(to));
  }
  // The windows starting in [from, to] of the keys from keyFrom to keyTo (by their serialized
  // bytes, both included; nothing when keyFrom's bytes sort after keyTo's).
  std::vector<KeyValue<Windowed<K>, V>> fetch(const K& keyFrom, const K& keyTo, int64_t from,
                                              int64_t to) const {
    return key_range(keyFrom, keyTo, from, to, false);
  }
  std::vector<KeyValue<Windowed<K>, V>> fetch(const K& keyFrom, const K& keyTo, TimePoint from,
                                              TimePoint to) const {
    return key_range(keyFrom, keyTo, detail::epoch_ms(from), detail::epoch_ms(to), false);
  }
  std::vector<KeyValue<Windowed<K>, V>> backwardFetch(const K& keyFrom, const K& keyTo,
                                                      int64_t from, int64_t to) const {
    return key_range(keyFrom, keyTo, from, to, true);
  }
  std::vector<KeyValue<Windowed<K>, V>> backwardFetch(const K& keyFrom, const K& keyTo,
                                                      TimePoint from, TimePoint to) const {
    return key_range(keyFrom, keyTo, detail::epoch_ms(from), detail::epoch_ms(to), true);
  }
  std::vector<KeyValue<Windowed<K>, V>> all() const { return fetchAll(INT64_MIN, INT64_MAX); }
  std::vector<KeyValue<Windowed<K>, V>> backwardAll() const {
    return backwardFetchAll(INT64_MIN, INT64_MAX);
  }
  // Every key's windows that start in [from, to].
  std::vector<KeyValue<Windowed<K>, V>> fetchAll(int64_t from, int64_t to) const {
    return reads_.windowed<K, V>(reads_.windows(nullptr, nullptr, from, to, false));
  }
  std::vector<KeyValue<Windowed<K>, V>> fetchAll(TimePoint from, TimePoint to) const {
    return fetchAll(detail::epoch_ms(from), detail::epoch_ms(to));
  }
  std::vector<KeyValue<Windowed<K>, V>> backwardFetchAll(int64_t from, int64_t to) const {
    return reads_.windowed<K, V>(reads_.windows(nullptr, nullptr, from, to, true));
  }
  std::vector<KeyValue<Windowed<K>, V>> backwardFetchAll(TimePoint from, TimePoint to) const {
    return backwardFetchAll(detail::epoch_ms(from), detail::epoch_ms(to));
  }
  const std::string& storeName() const { return reads_.name(); }

 private:
  std::vector<KeyValue<int64_t, V>> starts(const std::vector<detail::WindowedRow>& rows) const {
    std::vector<KeyValue<int64_t, V>> out;
    out.reserve(rows.size());
    for (const auto& row : rows) out.push_back({row.key.window.start, reads_.value<V>(row)});
    return out;
  }
  std::vector<KeyValue<Windowed<K>, V>> key_range(const K& key_from, const K& key_to, int64_t from,
                                                  int64_t to, bool backward) const {
    Datum f = detail::to_datum(key_from), t = detail::to_datum(key_to);
    return reads_.windowed<K, V>(reads_.windows(&f, &t, from, to, backward));
  }

  detail::WindowedReads reads_;
};

// A read-only view of a session store (Kafka's ReadOnlySessionStore<K, AGG>): one aggregate per
// key and session, a session being [start, end] with both ends its records' times.
template <class K, class AGG>
class ReadOnlySessionStore {
 public:
  using key_type = K;
  using value_type = AGG;
  using TimePoint = std::chrono::system_clock::time_point;
  static constexpr bool kTimestamped = false;
  static constexpr detail::StoreKind kKind = detail::StoreKind::kSession;

  explicit ReadOnlySessionStore(std::shared_ptr<const detail::StoreAccess> access)
      : reads_(std::move(access)) {}

  // The sessions of `key` that end at or after earliestSessionEndTime and start at or before
  // latestSessionStartTime (those overlapping that interval), earliest first.
  std::vector<KeyValue<Windowed<K>, AGG>> findSessions(const K& key, int64_t earliestSessionEndTime,
                                                       int64_t latestSessionStartTime) const {
    return of_key(key, earliestSessionEndTime, latestSessionStartTime, false);
  }
  std::vector<KeyValue<Windowed<K>, AGG>> findSessions(const K& key,
                                                       TimePoint earliestSessionEndTime,
                                                       TimePoint latestSessionStartTime) const {
    return of_key(key, detail::epoch_ms(earliestSessionEndTime),
                  detail::epoch_ms(latestSessionStartTime), false);
  }
  std::vector<KeyValue<Windowed<K>, AGG>> backwardFindSessions(
      const K& key, int64_t earliestSessionEndTime, int64_t latestSessionStartTime) const {
    return of_key(key, earliestSessionEndTime, latestSessionStartTime, true);
  }
  std::vector<KeyValue<Windowed<K>, AGG>> backwardFindSessions(
      const K& key, TimePoint earliestSessionEndTime, TimePoint latestSessionStartTime) const {
    return of_key(key, detail::epoch_ms(earliestSessionEndTime),
                  detail::epoch_ms(latestSessionStartTime), true);
  }
  // As findSessions(key, ...), for the keys from keyFrom to keyTo (by bytes, both included).
  std::vector<KeyValue<Windowed<K>, AGG>> findSessions(const K& keyFrom, const K& keyTo,
                                                       int64_t earliestSessionEndTime,
                                                       int64_t latestSessionStartTime) const {
    return key_range(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, false);
  }
  std::vector<KeyValue<Windowed<K>, AGG>> backwardFindSessions(
      const K& keyFrom, const K& keyTo, int64_t earliestSessionEndTime,
      int64_t latestSessionStartTime) const {
    return key_range(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, true);
  }
  // The aggregate of the session of `key` that is exactly [sessionStartTime, sessionEndTime].
  std::optional<AGG> fetchSession(const K& key, int64_t sessionStartTime,
                                  int64_t sessionEndTime) const {
    auto row = reads_.session(detail::to_datum(key), sessionStartTime, sessionEndTime);
    if (!row) return std::nullopt;
    return reads_.value<AGG>(*row);
  }
  std::optional<AGG> fetchSession(const K& key, TimePoint sessionStartTime,
                                  TimePoint sessionEndTime) const {
    return fetchSession(key, detail::epoch_ms(sessionStartTime), detail::epoch_ms(sessionEndTime));
  }
  // Every session of `key`, earliest first.
  std::vector<KeyValue<Windowed<K>, AGG>> fetch(const K& key) const {
    return of_key(key, INT64_MIN, INT64_MAX, false);
  }
  std::vector<KeyValue<Windowed<K>, AGG>> backwardFetch(const K& key) const {
    return of_key(key, INT64_MIN, INT64_MAX, true);
  }
  // Every session of the keys from keyFrom to keyTo.
  std::vector<KeyValue<Windowed<K>, AGG>> fetch(const K& keyFrom, const K& keyTo) const {
    return key_range(keyFrom, keyTo, INT64_MIN, INT64_MAX, false);
  }
  std::vector<KeyValue<Windowed<K>, AGG>> backwardFetch(const K& keyFrom, const K& keyTo) const {
    return key_range(keyFrom, keyTo, INT64_MIN, INT64_MAX, true);
  }
  const std::string& storeName() const { return reads_.name(); }

 private:
  std::vector<KeyValue<Windowed<K>, AGG>> of_key(const K& key, int64_t earliest_end,
                                                 int64_t latest_start, bool backward) const {
    return reads_.windowed<K, AGG>(
        reads_.sessions_of(detail::to_datum(key), earliest_end, latest_start, backward));
  }
  std::vector<KeyValue<Windowed<K>, AGG>> key_range(const K& key_from, const K& key_to,
                                                    int64_t earliest_end, int64_t latest_start,
                                                    bool backward) const {
    Datum f = detail::to_datum(key_from), t = detail::to_datum(key_to);
    return reads_.windowed<K, AGG>(reads_.sessions(&f, &t, earliest_end, latest_start, backward));
  }

  detail::WindowedReads reads_;
};

}  // namespace oxbow::streams
