#pragma once
// The fetches of Kafka's ReadOnlyWindowStore and ReadOnlySessionStore, shared by the store views
// (interactive queries', queryable_windows.h; the test driver's, test_driver_windows.h), as
// KeyValueScans is by the key-value views. Derived provides scan(K* key_from, K* key_to, from, to,
// backward, one_key) (null keys: unbounded; one_key: a fetch of one key, which a composite store
// answers from its first store with anything) returning KeyValueIterator<Windowed<K>, V>,
// starts(key, from, to, backward) returning WindowStoreIterator<V>, value_at(key, start) and
// (sessions) session_at(key, start, end), and befriends these classes. Times are milliseconds since
// the epoch or system_clock time points, both bounds included.
#include <chrono>
#include <cstdint>
#include <optional>

#include "oxbow/streams/key_value_iterator.h"

namespace oxbow::streams::detail {

inline int64_t epoch_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

template <class Derived, class K, class V>
class WindowFetches {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  // The value of the window of `key` that starts exactly at `time`, or nothing.
  std::optional<V> fetch(const K& key, int64_t time) const { return self().value_at(key, time); }
  std::optional<V> fetch(const K& key, TimePoint time) const {
    return self().value_at(key, epoch_ms(time));
  }
  // The windows of `key` that start in [timeFrom, timeTo], oldest first, as (window start, value).
  WindowStoreIterator<V> fetch(const K& key, int64_t timeFrom, int64_t timeTo) const {
    return self().starts(key, timeFrom, timeTo, false);
  }
  WindowStoreIterator<V> fetch(const K& key, TimePoint timeFrom, TimePoint timeTo) const {
    return self().starts(key, epoch_ms(timeFrom), epoch_ms(timeTo), false);
  }
  // As fetch(key, timeFrom, timeTo), newest first.
  WindowStoreIterator<V> backwardFetch(const K& key, int64_t timeFrom, int64_t timeTo) const {
    return self().starts(key, timeFrom, timeTo, true);
  }
  WindowStoreIterator<V> backwardFetch(const K& key, TimePoint timeFrom, TimePoint timeTo) const {
    return self().starts(key, epoch_ms(timeFrom), epoch_ms(timeTo), true);
  }
  // The windows starting in [timeFrom, timeTo] of the keys from keyFrom to keyTo (by their
  // serialized bytes, both included; nothing when keyFrom's bytes sort after keyTo's).
  KeyValueIterator<Windowed<K>, V> fetch(const K& keyFrom, const K& keyTo, int64_t timeFrom,
                                         int64_t timeTo) const {
    return self().scan(&keyFrom, &keyTo, timeFrom, timeTo, false, false);
  }
  KeyValueIterator<Windowed<K>, V> fetch(const K& keyFrom, const K& keyTo, TimePoint timeFrom,
                                         TimePoint timeTo) const {
    return self().scan(&keyFrom, &keyTo, epoch_ms(timeFrom), epoch_ms(timeTo), false, false);
  }
  KeyValueIterator<Windowed<K>, V> backwardFetch(const K& keyFrom, const K& keyTo, int64_t timeFrom,
                                                 int64_t timeTo) const {
    return self().scan(&keyFrom, &keyTo, timeFrom, timeTo, true, false);
  }
  KeyValueIterator<Windowed<K>, V> backwardFetch(const K& keyFrom, const K& keyTo,
                                                 TimePoint timeFrom, TimePoint timeTo) const {
    return self().scan(&keyFrom, &keyTo, epoch_ms(timeFrom), epoch_ms(timeTo), true, false);
  }
  // Every key's windows that start in [timeFrom, timeTo].
  KeyValueIterator<Windowed<K>, V> fetchAll(int64_t timeFrom, int64_t timeTo) const {
    return self().scan(nullptr, nullptr, timeFrom, timeTo, false, false);
  }
  KeyValueIterator<Windowed<K>, V> fetchAll(TimePoint timeFrom, TimePoint timeTo) const {
    return fetchAll(epoch_ms(timeFrom), epoch_ms(timeTo));
  }
  KeyValueIterator<Windowed<K>, V> backwardFetchAll(int64_t timeFrom, int64_t timeTo) const {
    return self().scan(nullptr, nullptr, timeFrom, timeTo, true, false);
  }
  KeyValueIterator<Windowed<K>, V> backwardFetchAll(TimePoint timeFrom, TimePoint timeTo) const {
    return backwardFetchAll(epoch_ms(timeFrom), epoch_ms(timeTo));
  }
  KeyValueIterator<Windowed<K>, V> all() const { return fetchAll(INT64_MIN, INT64_MAX); }
  KeyValueIterator<Windowed<K>, V> backwardAll() const {
    return backwardFetchAll(INT64_MIN, INT64_MAX);
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

// A session is [start, end], both ends its records' times; Derived's scan takes the earliest end
// and the latest start as its time bounds.
template <class Derived, class K, class AGG>
class SessionFetches {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  // The sessions of `key` that end at or after earliestSessionEndTime and start at or before
  // latestSessionStartTime (those overlapping that interval), earliest first.
  KeyValueIterator<Windowed<K>, AGG> findSessions(const K& key, int64_t earliestSessionEndTime,
                                                  int64_t latestSessionStartTime) const {
    return self().scan(&key, &key, earliestSessionEndTime, latestSessionStartTime, false, true);
  }
  KeyValueIterator<Windowed<K>, AGG> findSessions(const K& key, TimePoint earliestSessionEndTime,
                                                  TimePoint latestSessionStartTime) const {
    return findSessions(key, epoch_ms(earliestSessionEndTime), epoch_ms(latestSessionStartTime));
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFindSessions(const K& key,
                                                          int64_t earliestSessionEndTime,
                                                          int64_t latestSessionStartTime) const {
    return self().scan(&key, &key, earliestSessionEndTime, latestSessionStartTime, true, true);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFindSessions(const K& key,
                                                          TimePoint earliestSessionEndTime,
                                                          TimePoint latestSessionStartTime) const {
    return backwardFindSessions(key, epoch_ms(earliestSessionEndTime),
                                epoch_ms(latestSessionStartTime));
  }
  // As findSessions(key, ...), for the keys from keyFrom to keyTo (by bytes, both included).
  KeyValueIterator<Windowed<K>, AGG> findSessions(const K& keyFrom, const K& keyTo,
                                                  int64_t earliestSessionEndTime,
                                                  int64_t latestSessionStartTime) const {
    return self().scan(&keyFrom, &keyTo, earliestSessionEndTime, latestSessionStartTime, false,
                       false);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFindSessions(const K& keyFrom, const K& keyTo,
                                                          int64_t earliestSessionEndTime,
                                                          int64_t latestSessionStartTime) const {
    return self().scan(&keyFrom, &keyTo, earliestSessionEndTime, latestSessionStartTime, true,
                       false);
  }
  // The aggregate of the session of `key` that is exactly [sessionStartTime, sessionEndTime].
  std::optional<AGG> fetchSession(const K& key, int64_t sessionStartTime,
                                  int64_t sessionEndTime) const {
    return self().session_at(key, sessionStartTime, sessionEndTime);
  }
  std::optional<AGG> fetchSession(const K& key, TimePoint sessionStartTime,
                                  TimePoint sessionEndTime) const {
    return fetchSession(key, epoch_ms(sessionStartTime), epoch_ms(sessionEndTime));
  }
  // Every session of `key`, earliest first; of the keys from keyFrom to keyTo.
  KeyValueIterator<Windowed<K>, AGG> fetch(const K& key) const {
    return findSessions(key, INT64_MIN, INT64_MAX);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFetch(const K& key) const {
    return backwardFindSessions(key, INT64_MIN, INT64_MAX);
  }
  KeyValueIterator<Windowed<K>, AGG> fetch(const K& keyFrom, const K& keyTo) const {
    return findSessions(keyFrom, keyTo, INT64_MIN, INT64_MAX);
  }
  KeyValueIterator<Windowed<K>, AGG> backwardFetch(const K& keyFrom, const K& keyTo) const {
    return backwardFindSessions(keyFrom, keyTo, INT64_MIN, INT64_MAX);
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace oxbow::streams::detail
