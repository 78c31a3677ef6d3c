#pragma once
// Interactive queries of this instance's own stores, as Kafka Streams offers them:
//
//   auto counts = streams.store(StoreQueryParameters<>::fromNameAndType(
//       "counts", QueryableStoreTypes::keyValueStore<std::string, int64_t>()));
//   std::optional<int64_t> n = counts.get("word");
//
// Key-value stores here; window and session stores in queryable_windows.h (included below).
// Only stores named by the application (Materialized::as) are queryable. A query reads what the
// store's tasks have processed, pending cache entries included, and never a half-applied update:
// it takes each task's lock while it reads that task's store. The facade holds no store: every
// call looks the local stores up again, so a store that moved away (a rebalance) or an instance
// that stopped shows up as an InvalidStateStoreException at that call, as in Kafka.
//
// range(), reverseRange(), all(), reverseAll() and prefixScan() return a KeyValueIterator
// (key_value_iterator.h), read lazily as Kafka's closeable iterators are: a batch of entries of
// one store at a time, each batch read under its task's lock, no lock held between calls (so an
// iterator left open never holds up a stream thread), its memory one batch whatever the store's
// size. Each batch is consistent; a write made between batches ahead of the scan's position is
// seen. A store that moves away (a rebalance) during a scan makes its next batch throw
// InvalidStateStoreException. Across several local partitions the entries come one store after
// another (each store's part sorted by key bytes, the whole not), as Kafka's composite iterators
// do. Window and session fetches (queryable_windows.h) return iterators read the same way.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "oxbow/streams/detail/store_calls.h"
#include "oxbow/streams/errors.h"
#include "oxbow/streams/key_value_iterator.h"
#include "oxbow/streams/record.h"

namespace oxbow::streams {

// A value with the timestamp of the update that wrote it (Kafka's ValueAndTimestamp), what a
// timestamped key-value store answers.
template <class V>
struct ValueAndTimestamp {
  V value;
  int64_t timestamp = 0;
  bool operator==(const ValueAndTimestamp&) const = default;
};

namespace detail {

template <class T>
struct IsValueAndTimestamp : std::false_type {};
template <class V>
struct IsValueAndTimestamp<ValueAndTimestamp<V>> : std::true_type {};

// What a facade asks KafkaStreams::store() for.
enum class StoreKind { kKeyValue, kWindow, kSession };

// One store's local instances, as KafkaStreams::store() found the store (implemented there).
class StoreAccess {
 public:
  virtual ~StoreAccess() = default;
  // Calls `read` with the store of each of its local tasks in turn (the partition asked for
  // only, when one was), under that task's lock; `read` returns false to stop. Throws
  // InvalidStateStoreException (or a subclass) when the store cannot be read now.
  virtual void visit(const std::function<bool(KeyValueStore&)>& read) const = 0;
  // store()'s InvalidStateStoreException for a type that does not match, found while reading (a
  // serde that reads or writes another type than the facade's).
  [[noreturn]] void type_mismatch(const std::string& why) const;

  std::string name;
  // Window and session stores: key_serde writes a key alone (the store key less its window);
  // windowed_key_serde reads a whole store key into a WindowedDatum.
  ErasedSerde key_serde, value_serde, windowed_key_serde;
  bool timestamped = false;  // values stored as 8 bytes of timestamp, then the value's bytes
  // For messages: the queryable type asked for, the store's actual type (Kafka's names).
  std::string queryable_type, actual_type;
};

// A Datum read from a store as the facade's T.
template <class T>
T typed_datum(const StoreAccess& access, const Datum& d) {
  if (const T* p = datum_cast<T>(&d)) return *p;
  if (!d.has_value()) return T{};
  access.type_mismatch("its serde reads another type");
}

// A value as stored: its timestamp (0 for an untimestamped store) and its bytes.
inline std::pair<int64_t, std::string_view> split_stored(bool timestamped, std::string_view bytes) {
  int64_t timestamp = 0;
  if (timestamped && bytes.size() >= 8) {
    uint64_t t = 0;
    for (int i = 0; i < 8; ++i) t = (t << 8) | static_cast<uint8_t>(bytes[i]);
    timestamp = static_cast<int64_t>(t);
    bytes.remove_prefix(8);
  }
  return {timestamp, bytes};
}

// The facade's V (ValueAndTimestamp<X> or a plain value) of a deserialized value.
template <class V>
V typed_value(const StoreAccess& access, const Datum& value, int64_t timestamp) {
  if constexpr (IsValueAndTimestamp<V>::value) {
    using X = decltype(std::declval<V>().value);
    return V{typed_datum<X>(access, value), timestamp};
  } else {
    (void)timestamp;
    return typed_datum<V>(access, value);
  }
}

// Reads a value as stored into the facade's V; keeps the access alive (an iterator holding it may
// outlive the facade).
template <class V>
std::function<V(std::string_view)> value_decoder(std::shared_ptr<const StoreAccess> access) {
  return [access = std::move(access)](std::string_view stored) {
    auto [timestamp, bytes] = split_stored(access->timestamped, stored);
    return typed_value<V>(*access, access->value_serde.deserialize(access->name, bytes), timestamp);
  };
}

}  // namespace detail

// A read-only view of a key-value store (Kafka's ReadOnlyKeyValueStore<K, V>). V is the value's
// type, or ValueAndTimestamp<X> for QueryableStoreTypes::timestampedKeyValueStore<K, X>().
// Ranges are by the serialized keys' bytes.
template <class K, class V>
class ReadOnlyKeyValueStore : public detail::KeyValueScans<ReadOnlyKeyValueStore<K, V>, K, V> {
 public:
  using key_type = K;
  using value_type = V;
  static constexpr bool kTimestamped = detail::IsValueAndTimestamp<V>::value;
  static constexpr detail::StoreKind kKind = detail::StoreKind::kKeyValue;

  explicit ReadOnlyKeyValueStore(std::shared_ptr<const detail::StoreAccess> access)
      : access_(std::move(access)) {}

  // The first local store's value for `key`, or nothing.
  std::optional<V> get(const K& key) const {
    std::string k = access_->key_serde.serialize(access_->name, detail::to_datum(key));
    std::optional<V> out;
    access_->visit([&](detail::KeyValueStore& s) {
      if (auto bytes = detail::query_get(s, k)) out = detail::value_decoder<V>(access_)(*bytes);
      return !out;
    });
    return out;
  }
  // range, reverseRange, all, reverseAll, prefixScan: key_value_iterator.h (detail::KeyValueScans).
  // An estimate: the local stores' counts added (capped at INT64_MAX).
  int64_t approximateNumEntries() const {
    int64_t total = 0;
    access_->visit([&](detail::KeyValueStore& s) {
      int64_t n = detail::query_num_entries(s);
      total = n > INT64_MAX - total ? INT64_MAX : total + n;
      return true;
    });
    return total;
  }
  const std::string& storeName() const { return access_->name; }

 private:
  std::string key_bytes(const K& key) const {
    return access_->key_serde.serialize(access_->name, detail::to_datum(key));
  }
  friend class detail::KeyValueScans<ReadOnlyKeyValueStore<K, V>, K, V>;
  const std::string& scan_topic() const { return access_->name; }
  // The decoders keep the access alive: the iterator may outlive this facade.
  KeyValueIterator<K, V> scan(const detail::KeyRange& range) const {
    auto access = access_;
    return KeyValueIterator<K, V>(
        detail::query_scan(access, range),
        [access](std::string_view bytes) {
          return detail::typed_datum<K>(*access,
                                        access->key_serde.deserialize(access->name, bytes));
        },
        detail::value_decoder<V>(access));
  }

  std::shared_ptr<const detail::StoreAccess> access_;
};

template <class K, class V>
class ReadOnlyWindowStore;
template <class K, class AGG>
class ReadOnlySessionStore;

// What KafkaStreams::store() returns for a store type (Kafka's QueryableStoreType<T>).
template <class Store>
struct QueryableStoreType {
  using store_type = Store;
};

struct QueryableStoreTypes {
  // Values without their timestamps (also for the DSL's timestamped stores, as Kafka's facade).
  template <class K, class V>
  static QueryableStoreType<ReadOnlyKeyValueStore<K, V>> keyValueStore() {
    return {};
  }
  // Values with the timestamp of their last update; the store must be a timestamped one (every
  // DSL aggregation's and table's is).
  template <class K, class V>
  static QueryableStoreType<ReadOnlyKeyValueStore<K, ValueAndTimestamp<V>>>
  timestampedKeyValueStore() {
    return {};
  }
  // Windowed aggregations' stores (time and sliding windows), values without their timestamps.
  template <class K, class V>
  static QueryableStoreType<ReadOnlyWindowStore<K, V>> windowStore() {
    return {};
  }
  // The same with the timestamp of each window's last update.
  template <class K, class V>
  static QueryableStoreType<ReadOnlyWindowStore<K, ValueAndTimestamp<V>>> timestampedWindowStore() {
    return {};
  }
  // Session-windowed aggregations' stores.
  template <class K, class AGG>
  static QueryableStoreType<ReadOnlySessionStore<K, AGG>> sessionStore() {
    return {};
  }
};

template <class Store = void>
class StoreQueryParameters;

// Kafka's StoreQueryParameters<T>; each call returns a new one.
template <class Store>
class StoreQueryParameters {
 public:
  static StoreQueryParameters fromNameAndType(std::string name, QueryableStoreType<Store>) {
    StoreQueryParameters p;
    p.name_ = std::move(name);
    return p;
  }
  // Only the store of this partition (its task must be on this instance); none: all local ones.
  StoreQueryParameters withPartition(std::optional<int32_t> partition) const {
    StoreQueryParameters p(*this);
    p.partition_ = partition;
    return p;
  }
  // Kafka also admits standby tasks and restoring active tasks then. Oxbow has no standby tasks
  // yet, so this is accepted and changes nothing for now.
  StoreQueryParameters enableStaleStores() const {
    StoreQueryParameters p(*this);
    p.stale_ = true;
    return p;
  }
  const std::string& storeName() const { return name_; }
  std::optional<int32_t> partition() const { return partition_; }
  bool staleStoresEnabled() const { return stale_; }

 private:
  std::string name_;
  std::optional<int32_t> partition_;
  bool stale_ = false;
};

// StoreQueryParameters<>::fromNameAndType(name, type): the store type deduced from `type`.
template <>
class StoreQueryParameters<void> {
 public:
  template <class Store>
  static StoreQueryParameters<Store> fromNameAndType(std::string name,
                                                     QueryableStoreType<Store> type) {
    return StoreQueryParameters<Store>::fromNameAndType(std::move(name), type);
  }
};

}  // namespace oxbow::streams

// Window and session stores' facades, after the types they use.
#include "oxbow/streams/queryable_windows.h"
