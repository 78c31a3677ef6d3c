#pragma once
// The test driver's views of window and session stores (Kafka's TopologyTestDriver
// getWindowStore and getSessionStore), included by test_driver.h. They read as a processor
// reads: through the store's cache, lazily, segment by segment, so the order is the
// interactive queries' of one store (queryable_windows.h). Values come without their
// timestamps; a view keeps nothing, each call reads the store as it is then.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "oxbow/streams/detail/window_fetches.h"
#include "oxbow/streams/key_value_iterator.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {

namespace detail {

// What both views share: the store's serdes, and its fetches as iterators.
template <class K, class V>
class DriverWindowReads {
 public:
  DriverWindowReads(TopologyTestDriver& driver, std::string store)
      : driver_(driver), store_(std::move(store)), options_(driver.storeOptions(store_)) {}

  // What a fetch reads; null keys are unbounded.
  WindowScan scan(const K* key_from, const K* key_to, int64_t from, int64_t to,
                  bool backward) const {
    WindowScan s;
    if (key_from) s.key_from = driver_.windowKeyBytes(store_, to_datum(*key_from));
    if (key_to) s.key_to = driver_.windowKeyBytes(store_, to_datum(*key_to));
    s.from = from;
    s.to = to;
    s.sessions = options_.session_layout;
    s.backward = backward;
    return s;
  }
  KeyValueIterator<Windowed<K>, V> windowed(const WindowScan& scan) const {
    return KeyValueIterator<Windowed<K>, V>(
        driver_.windowScan(store_, scan),
        [serde = options_.key_serde, name = store_](std::string_view bytes) {
          return Windowed<K>(as<Windowed<K>>(serde.deserialize(name, bytes)));
        },
        value_decoder());
  }
  WindowStoreIterator<V> starts(const WindowScan& scan) const {
    return WindowStoreIterator<V>(driver_.windowScan(store_, scan), &window_start_of,
                                  value_decoder());
  }

 private:
  std::function<V(std::string_view)> value_decoder() const {
    return [serde = options_.value_serde, name = store_,
            stamped = options_.timestamped](std::string_view bytes) {
      if (stamped) bytes.remove_prefix(std::min<size_t>(8, bytes.size()));
      return V(as<V>(serde.deserialize(name, bytes)));
    };
  }

  TopologyTestDriver& driver_;
  std::string store_;
  StoreOptions options_;
};

}  // namespace detail

// A windowed aggregation's store (Kafka's WindowStore<K, V> as the driver gives it); its
// fetches: detail/window_fetches.h.
template <class K, class V>
class WindowStoreView : public detail::WindowFetches<WindowStoreView<K, V>, K, V> {
 public:
  WindowStoreView(TopologyTestDriver& driver, std::string store)
      : reads_(driver, std::move(store)) {}

 private:
  friend class detail::WindowFetches<WindowStoreView<K, V>, K, V>;
  std::optional<V> value_at(const K& key, int64_t start) const {
    auto it = starts(key, start, start, false);
    if (!it.hasNext()) return std::nullopt;
    return it.next().value;
  }
  WindowStoreIterator<V> starts(const K& key, int64_t from, int64_t to, bool backward) const {
    return reads_.starts(reads_.scan(&key, &key, from, to, backward));
  }
  KeyValueIterator<Windowed<K>, V> scan(const K* key_from, const K* key_to, int64_t from,
                                        int64_t to, bool backward, bool) const {
    return reads_.windowed(reads_.scan(key_from, key_to, from, to, backward));
  }

  detail::DriverWindowReads<K, V> reads_;
};

// A session-windowed aggregation's store (Kafka's SessionStore<K, AGG> as the driver gives it);
// its fetches: detail/window_fetches.h.
template <class K, class AGG>
class SessionStoreView : public detail::SessionFetches<SessionStoreView<K, AGG>, K, AGG> {
 public:
  SessionStoreView(TopologyTestDriver& driver, std::string store)
      : reads_(driver, std::move(store)) {}

 private:
  friend class detail::SessionFetches<SessionStoreView<K, AGG>, K, AGG>;
  // The sessions overlapping [end, start] hold the one that is exactly [start, end].
  std::optional<AGG> session_at(const K& key, int64_t start, int64_t end) const {
    for (auto it = scan(&key, &key, end, start, false, true); it.hasNext();) {
      auto kv = it.next();
      if (kv.key.window.start == start && kv.key.window.end == end) return kv.value;
    }
    return std::nullopt;
  }
  KeyValueIterator<Windowed<K>, AGG> scan(const K* key_from, const K* key_to, int64_t earliest_end,
                                          int64_t latest_start, bool backward, bool) const {
    return reads_.windowed(reads_.scan(key_from, key_to, earliest_end, latest_start, backward));
  }

  detail::DriverWindowReads<K, AGG> reads_;
};

}  // namespace oxbow::streams
