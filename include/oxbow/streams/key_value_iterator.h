#pragma once
// KeyValueIterator<K, V>: what a key-value store's scans return (range, reverseRange, all,
// reverseAll, prefixScan), as Kafka's, and a window or session store's fetches
// (queryable_windows.h: KeyValueIterator<Windowed<K>, V>, and WindowStoreIterator<V>, which is
// KeyValueIterator<int64_t, V> keyed by window start). It reads the store lazily, one entry at a
// time, and deserializes each entry as it is reached, so a scan's memory does not grow with the
// store.
//
//   auto it = store.range("a", "m");
//   while (it.hasNext()) { KeyValue<std::string, int64_t> kv = it.next(); ... }
//   it.close();  // or let it go out of scope
//
//   for (const auto& kv : store.all()) ...  // a range-for reads it through once
//
// Processor API stores: use it within the call that made it (process, a punctuator), and close
// it before the call returns or when done; it keeps a view of the store (a RocksDB snapshot).
// Interactive queries: it holds no lock between calls; see queryable.h.
#include <cstddef>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "oxbow/streams/detail/store_calls.h"
#include "oxbow/streams/record.h"

namespace oxbow::streams {

template <class K, class V>
class KeyValueIterator {
 public:
  using KeyDecoder = std::function<K(std::string_view bytes)>;
  using ValueDecoder = std::function<V(std::string_view bytes)>;

  KeyValueIterator(detail::CursorPtr cursor, KeyDecoder key, ValueDecoder value)
      : cursor_(std::move(cursor)), key_(std::move(key)), value_(std::move(value)) {}
  KeyValueIterator(KeyValueIterator&&) noexcept = default;
  KeyValueIterator& operator=(KeyValueIterator&&) noexcept = default;

  bool hasNext() const { return cursor_ && detail::cursor_valid(*cursor_); }
  // Throws std::out_of_range (Kafka: NoSuchElementException) at the end.
  KeyValue<K, V> next() {
    check();
    KeyValue<K, V> out{key_(detail::cursor_key(*cursor_)), value_(detail::cursor_value(*cursor_))};
    detail::cursor_next(*cursor_);
    return out;
  }
  K peekNextKey() const {
    check();
    return key_(detail::cursor_key(*cursor_));
  }
  // Lets go of the store; hasNext() is false from then on. Idempotent.
  void close() { cursor_.reset(); }

  // An input iterator over what is left, for range-for and algorithms: each entry once.
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = KeyValue<K, V>;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = const value_type&;

    iterator() = default;
    explicit iterator(KeyValueIterator* owner) : owner_(owner) { advance(); }
    reference operator*() const { return *current_; }
    pointer operator->() const { return &*current_; }
    iterator& operator++() {
      advance();
      return *this;
    }
    void operator++(int) { advance(); }
    bool operator==(const iterator& other) const {
      return current_.has_value() == other.current_.has_value();
    }

   private:
    void advance() {
      if (owner_ && owner_->hasNext())
        current_.emplace(owner_->next());
      else
        current_.reset();
    }
    KeyValueIterator* owner_ = nullptr;
    std::optional<value_type> current_;
  };
  iterator begin() { return iterator(this); }
  iterator end() { return iterator(); }

 private:
  void check() const {
    if (!hasNext()) throw std::out_of_range("KeyValueIterator: no more entries");
  }

  detail::CursorPtr cursor_;
  KeyDecoder key_;
  ValueDecoder value_;
};

// One key's windows from a window store: (window start, value) pairs, as Kafka's.
template <class V>
using WindowStoreIterator = KeyValueIterator<int64_t, V>;

namespace detail {

// The scans of Kafka's ReadOnlyKeyValueStore, shared by the store views (a processor's store, a
// query's, the test driver's). Derived provides scan(KeyRange), key_bytes(K) and scan_topic()
// (the name prefix serializers are given), and befriends this class. Ranges are by the
// serialized keys' bytes: [from, to], nothing when from's bytes sort after to's.
template <class Derived, class K, class V>
class KeyValueScans {
 public:
  KeyValueIterator<K, V> range(const K& from, const K& to) const {
    return self().scan(KeyRange::between(self().key_bytes(from), self().key_bytes(to)));
  }
  // As range(), largest keys first.
  KeyValueIterator<K, V> reverseRange(const K& from, const K& to) const {
    return self().scan(KeyRange::between(self().key_bytes(from), self().key_bytes(to), true));
  }
  KeyValueIterator<K, V> all() const { return self().scan(KeyRange::everything()); }
  KeyValueIterator<K, V> reverseAll() const { return self().scan(KeyRange::everything(true)); }
  // The keys whose bytes start with the serialized prefix (Kafka: the range from the prefix to
  // the prefix's bytes incremented, that end excluded). With Int32 keys, prefix 1 does not match
  // 11: it is bytes, not digits.
  template <class P>
  KeyValueIterator<K, V> prefixScan(const P& prefix, const Serde<P>& prefixKeySerializer) const {
    return self().scan(
        KeyRange::with_prefix(prefixKeySerializer.serialize(self().scan_topic(), prefix)));
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace detail

}  // namespace oxbow::streams
