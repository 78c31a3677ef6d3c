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

#include "oxbow/streams/detail/window_fetches.h"
#include "oxbow/streams/queryable.h"

namespace oxbow::streams {

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

  // What a fetch reads; null keys are unbounded.
  template <class K>
  WindowScan scan(const K* key_from, const K* key_to, int64_t from, int64_t to, bool sessions,
                  bool backward) const {
    WindowScan scan;
    if (key_from) scan.key_from = access_->key_serde.serialize(access_->name, to_datum(*key_from));
    if (key_to) scan.key_to = access_->key_serde.serialize(access_->name, to_datum(*key_to));
    scan.from = from;
    scan.to = to;
    scan.sessions = sessions;
    scan.backward = backward;
    return scan;
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

}  // namespace detail

// A read-only view of a window store (Kafka's ReadOnlyWindowStore<K, V>): one value per key and
// window, windows named by their start. V is the value's type, or ValueAndTimestamp<X> for
// QueryableStoreTypes::timestampedWindowStore<K, X>(). Its fetches: detail/window_fetches.h.
template <class K, class V>
class ReadOnlyWindowStore : public detail::WindowFetches<ReadOnlyWindowStore<K, V>, K, V> {
 public:
  using key_type = K;
  using value_type = V;
  static constexpr bool kTimestamped = detail::IsValueAndTimestamp<V>::value;
  static constexpr detail::StoreKind kKind = detail::StoreKind::kWindow;

  explicit ReadOnlyWindowStore(std::shared_ptr<const detail::StoreAccess> access)
      : reads_(std::move(access)) {}
  const std::string& storeName() const { return reads_.name(); }

 private:
  friend class detail::WindowFetches<ReadOnlyWindowStore<K, V>, K, V>;
  std::optional<V> value_at(const K& key, int64_t start) const {
    return reads_.template value<V>(
        detail::query_window_value(reads_.access(), detail::to_datum(key), start));
  }
  WindowStoreIterator<V> starts(const K& key, int64_t from, int64_t to, bool backward) const {
    return reads_.template starts<V>(reads_.scan(&key, &key, from, to, false, backward));
  }
  KeyValueIterator<Windowed<K>, V> scan(const K* key_from, const K* key_to, int64_t from,
                                        int64_t to, bool backward, bool one_key) const {
    return reads_.template windowed<K, V>(reads_.scan(key_from, key_to, from, to, false, backward),
                                          one_key);
  }

  detail::WindowedReads reads_;
};

// A read-only view of a session store (Kafka's ReadOnlySessionStore<K, AGG>): one aggregate per
// key and session, a session being [start, end] with both ends its records' times. Its fetches:
// detail/window_fetches.h.
template <class K, class AGG>
class ReadOnlySessionStore : public detail::SessionFetches<ReadOnlySessionStore<K, AGG>, K, AGG> {
 public:
  using key_type = K;
  using value_type = AGG;
  static constexpr bool kTimestamped = false;
  static constexpr detail::StoreKind kKind = detail::StoreKind::kSession;

  explicit ReadOnlySessionStore(std::shared_ptr<const detail::StoreAccess> access)
      : reads_(std::move(access)) {}
  const std::string& storeName() const { return reads_.name(); }

 private:
  friend class detail::SessionFetches<ReadOnlySessionStore<K, AGG>, K, AGG>;
  std::optional<AGG> session_at(const K& key, int64_t start, int64_t end) const {
    return reads_.template value<AGG>(
        detail::query_session_value(reads_.access(), detail::to_datum(key), start, end));
  }
  KeyValueIterator<Windowed<K>, AGG> scan(const K* key_from, const K* key_to, int64_t earliest_end,
                                          int64_t latest_start, bool backward, bool one_key) const {
    return reads_.template windowed<K, AGG>(
        reads_.scan(key_from, key_to, earliest_end, latest_start, true, backward), one_key);
  }

  detail::WindowedReads reads_;
};

}  // namespace oxbow::streams
