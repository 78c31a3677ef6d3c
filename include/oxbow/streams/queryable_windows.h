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
// ends, as Kafka's. Fetches of several windows return Kafka's iterators: a WindowStoreIterator<V>
// (window start, value) for one key's windows, a KeyValueIterator<Windowed<K>, V> otherwise
// (key_value_iterator.h: hasNext, next, peekNextKey, close, range-for). They read as the
// key-value scans do (queryable.h): a batch of entries of one store at a time under its task's
// lock, none held between calls, memory one batch whatever the store's size; a store that moves
// away meanwhile makes the next batch throw InvalidStateStoreException.
//
// Order, as Kafka's segmented stores: each store is read segment by segment (a segment holds the
// windows whose start, or sessions whose end, falls in one interval of max(retention / 2, 60 s)),
// oldest segment first (backward: newest first), each segment's entries by key bytes, then
// window (backward: the reverse). So one key's windows come oldest first; a key range's entries
// are by key only within a segment. Across several local partitions, as Kafka's composite stores:
// a fetch of one key answers from the first store that has anything for it; key ranges and all()
// come one store after another.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "oxbow/streams/queryable.h"

namespace oxbow::streams {

// One key's windows from a window store: (window start, value) pairs, as Kafka's.
template <class V>
using WindowStoreIterator = KeyValueIterator<int64_t, V>;

namespace detail {

// The stored value of one window (by its start) or session of `key`, from the first local store
// that has it (src/streams/query/queryable.cpp).
std::optional<std::string> query_window_value(const StoreAccess& access, const Datum& key,
                                              int64_t start);
std::optional<std::string> query_session_value(const StoreAccess& access, const Datum& key,
                                               int64_t start, int64_t end);

// What both facades share: the serialized keys they scan by, and iterators over the scans.
class WindowedReads {
 public:
  explicit WindowedReads(std::shared_ptr<const StoreAccess> access) : access_(std::move(access)) {}

  template <class K>
  std::string key_bytes(const K& key) const {
    return access_->key_serde.serialize(access_->name, to_datum(key));
  }
  template <class V>
  std::optional<V> value(const std::optional<std::string>& stored) const {
    if (!stored) return std::nullopt;
    return value_decoder<V>(access_)(*stored);
  }
  // One key's windows, keyed by their start.
  template <class V>
  WindowStoreIterator<V> starts(const WindowScan& scan) const {
    return WindowStoreIterator<V>(query_window_scan(access_, scan, true), &window_start_of,
                                  value_decoder<V>(access_));
  }
  // The decoders keep the access alive: the iterator may outlive the facade.
  template <class K, class V>
  KeyValueIterator<Windowed<K>, V> windowed(const WindowScan& scan, bool one_key) const {
    auto access = access_;
    return KeyValueIterator<Windowed<K>, V>(
        query_window_scan(access, scan, one_key),
        [access](std::string_view bytes) {
          Datum key = access->windowed_key_serde.deserialize(access->name, bytes);
          const auto* windowed = datum_cast<WindowedDatum>(&key);
          if (!windowed) access->type_mismatch("its key serde does not read windowed keys");
          return Windowed<K>{typed_datum<K>(*access, windowed->key), windowed->window};
        },
        value_decoder<V>(access));
  }
  const StoreAccess& access() const { return *access_; }
  const std::string& name() const { return access_->name; }

 private:
  std::shared_ptr<const StoreAccess> access_;
};

inline WindowScan window_scan(std::optional<std::string> key_from,
                              std::optional<std::string> key_to, int64_t from, int64_t to,
                              bool sessions, bool backward) {
  WindowScan scan;
  scan.key_from = std::move(key_from);
  scan.key_to = std::move(key_to);
  scan.from = from;
  scan.to = to;
  scan.sessions = sessions;
  scan.backward = backward;
  return scan;
}

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
    return reads_.template value<V>(
        detail::query_window_value(reads_.access(), detail::to_datum(key), time));
  }
  std::optional<V> fetch(const K& key, TimePoint time) const {
    return fetch(key, detail::epoch_ms(time));
  }
  // The windows of `key` that start in [timeFrom, timeTo], oldest first, as (window start, value).
  WindowStoreIterator<V> fetch(const K& key, int64_t timeFrom, int64_t timeTo) const {
    return of_key(key, timeFrom, timeTo, false);
  }
  WindowStoreIterator<V> fetch(const K& key, TimePoint timeFrom, TimePoint timeTo) const {
    return of_key(key, detail::epoch_ms(timeFrom), detail::epoch_ms(timeTo), false);
  }
  // As fetch(key, timeFrom, timeTo), newest first.
  WindowStoreIterator<V> backwardFetch(const K& key, int64_t timeFrom, int64_t timeTo) const {
    return of_key(key, timeFrom, timeTo, true);
  }
  WindowStoreIterator<V> backwardFetch(const K& key, TimePoint timeFrom, TimePoint timeTo) const {
    return of_key(key, detail::epoch_ms(timeFrom), detail::epoch_ms(timeTo), true);
  }
  // The windows starting in [timeFrom, timeTo] of the keys from keyFrom to keyTo (by their
  // serialized bytes, both included; nothing when keyFrom's bytes sort after keyTo's).
  KeyValueIterator<Windowed<K>, V> fetch(const K& keyFrom, const K& keyTo, int64_t timeFrom,
                                         int64_t timeTo) const {
    return key_range(keyFrom, keyTo, timeFrom, timeTo, false);
  }
  KeyValueIterator<Windowed<K>, V> fetch(const K& keyFrom, const K& keyTo, TimePoint timeFrom,
                                         TimePoint timeTo) const {
    return key_range(keyFrom, keyTo, detail::epoch_ms(timeFrom), detail::epoch_ms(timeTo), false);
  }
  KeyValueIterator<Windowed<K>, V> backwardFetch(const K& keyFrom, const K& keyTo, int64_t timeFrom,
                                                 int64_t timeTo) const {
    return key_range(keyFrom, keyTo, timeFrom, timeTo, true);
  }
  KeyValueIterator<Windowed<K>, V> backwardFetch(const K& keyFrom, const K& keyTo,
                                                 TimePoint timeFrom, TimePoint timeTo) const {
    return key_range(keyFrom, keyTo, detail::epoch_ms(timeFrom), detail::epoch_ms(timeTo), true);
  }
  KeyValueIterator<Windowed<K>, V> all() const { return fetchAll(INT64_MIN, INT64_MAX); }
  KeyValueIterator<Windowed<K>, V> backwardAll() const {
    return backwardFetchAll(INT64_MIN, INT64_MAX);
  }
  // Every key's windows that start in [timeFrom, timeTo].
  KeyValueIterator<Windowed<K>, V> fetchAll(int64_t timeFrom, int64_t timeTo) const {
    return every_key(timeFrom, timeTo, false);
  }
  KeyValueIterator<Windowed<K>, V> fetchAll(TimePoint timeFrom, TimePoint timeTo) const {
    return fetchAll(detail::epoch_ms(timeFrom), detail::epoch_ms(timeTo));
  }
  KeyValueIterator<Windowed<K>, V> backwardFetchAll(int64_t timeFrom, int64_t timeTo) const {
    return every_key(timeFrom, timeTo, true);
  }
  KeyValueIterator<Windowed<K>, V> backwardFetchAll(TimePoint timeFrom, TimePoint timeTo) const {
    return backwardFetchAll(detail::epoch_ms(timeFrom), detail::epoch_ms(timeTo));
  }
  const std::string& storeName() const { return reads_.name(); }

 private:
  WindowStoreIterator<V> of_key(const K& key, int64_t from, int64_t to, bool backward) const {
    std::string k = reads_.key_bytes(key);
    return reads_.template starts<V>(detail::window_scan(k, k, from, to, false, backward));
  }
  KeyValueIterator<Windowed<K>, V> key_range(const K& key_from, const K& key_to, int64_t from,
                                             int64_t to, bool backward) const {
    return reads_.template windowed<K, V>(
        detail::window_scan(reads_.key_bytes(key_from), reads_.key_bytes(key_to), from, to, false,
                            backward),
        false);
  }
  KeyValueIterator<Windowed<K>, V> every_key(int64_t from, int64_t to, bool backward) const {
    return reads_.template windowed<K, V>(
        detail::window_scan(std::nullopt, std::nullopt, from, to, false, backward), false);
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
  KeyValueIterator<Windowed<K>, AGG> findSessions(const K& key, int64_t earliestSessionEndTime,
                                                  int64_t latestSessionStartTime) const {
    return of_key(key, earliestSessionEndTime, latestSessionStartTime, false);
  }
  KeyValueIterator<Windowed<K>, AGG> findSessions(const K& key, TimePoint earliestSessionEndTime,
                                                  TimePoint latestSessionStartTime) const {
    return of_key(key, detail::epoch_ms(earliestSessionEndTime),
                  detail::epoch_ms(latestSessionStartTime), false);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFindSessions(const K& key,
                                                          int64_t earliestSessionEndTime,
                                                          int64_t latestSessionStartTime) const {
    return of_key(key, earliestSessionEndTime, latestSessionStartTime, true);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFindSessions(const K& key,
                                                          TimePoint earliestSessionEndTime,
                                                          TimePoint latestSessionStartTime) const {
    return of_key(key, detail::epoch_ms(earliestSessionEndTime),
                  detail::epoch_ms(latestSessionStartTime), true);
  }
  // As findSessions(key, ...), for the keys from keyFrom to keyTo (by bytes, both included).
  KeyValueIterator<Windowed<K>, AGG> findSessions(const K& keyFrom, const K& keyTo,
                                                  int64_t earliestSessionEndTime,
                                                  int64_t latestSessionStartTime) const {
    return key_range(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, false);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFindSessions(const K& keyFrom, const K& keyTo,
                                                          int64_t earliestSessionEndTime,
                                                          int64_t latestSessionStartTime) const {
    return key_range(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, true);
  }
  // The aggregate of the session of `key` that is exactly [sessionStartTime, sessionEndTime].
  std::optional<AGG> fetchSession(const K& key, int64_t sessionStartTime,
                                  int64_t sessionEndTime) const {
    return reads_.template value<AGG>(detail::query_session_value(
        reads_.access(), detail::to_datum(key), sessionStartTime, sessionEndTime));
  }
  std::optional<AGG> fetchSession(const K& key, TimePoint sessionStartTime,
                                  TimePoint sessionEndTime) const {
    return fetchSession(key, detail::epoch_ms(sessionStartTime), detail::epoch_ms(sessionEndTime));
  }
  // Every session of `key`, earliest first.
  KeyValueIterator<Windowed<K>, AGG> fetch(const K& key) const {
    return of_key(key, INT64_MIN, INT64_MAX, false);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFetch(const K& key) const {
    return of_key(key, INT64_MIN, INT64_MAX, true);
  }
  // Every session of the keys from keyFrom to keyTo.
  KeyValueIterator<Windowed<K>, AGG> fetch(const K& keyFrom, const K& keyTo) const {
    return key_range(keyFrom, keyTo, INT64_MIN, INT64_MAX, false);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFetch(const K& keyFrom, const K& keyTo) const {
    return key_range(keyFrom, keyTo, INT64_MIN, INT64_MAX, true);
  }
  const std::string& storeName() const { return reads_.name(); }

 private:
  KeyValueIterator<Windowed<K>, AGG> of_key(const K& key, int64_t earliest_end,
                                            int64_t latest_start, bool backward) const {
    std::string k = reads_.key_bytes(key);
    return reads_.template windowed<K, AGG>(
        detail::window_scan(k, k, earliest_end, latest_start, true, backward), true);
  }
  KeyValueIterator<Windowed<K>, AGG> key_range(const K& key_from, const K& key_to,
                                               int64_t earliest_end, int64_t latest_start,
                                               bool backward) const {
    return reads_.template windowed<K, AGG>(
        detail::window_scan(reads_.key_bytes(key_from), reads_.key_bytes(key_to), earliest_end,
                            latest_start, true, backward),
        false);
  }

  detail::WindowedReads reads_;
};

}  // namespace oxbow::streams
