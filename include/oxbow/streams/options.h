#pragma once
// Kafka Streams' parameter objects: Consumed, Produced, Grouped, Materialized, Repartitioned,
// Named. Each is a typed shell over the untyped options the core reads; a serde left unset falls
// back to the upstream operation's (when the type is the same) and then to DefaultSerde<T>.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>

#include "oxbow/streams/detail/access.h"
#include "oxbow/streams/record.h"

namespace oxbow::streams {

// Kafka's TimestampExtractor: the record's time from the record as read and the partition's stream
// time so far. A negative result means "invalid": the record is skipped, logged and counted.
using TimestampExtractor = std::function<int64_t(const Record& record, const RecordContext& source,
                                                 int64_t partition_time)>;

// Kafka's StreamPartitioner: the partition for a record written to `topic` with `partitions`
// partitions, or nullopt for the default (murmur2 of the serialized key, as Kafka's producer).
using StreamPartitioner = std::function<std::optional<int32_t>(
    const std::string& topic, const Datum& key, const Datum& value, int32_t partitions)>;

enum class AutoOffsetReset { kDefault, kEarliest, kLatest };

namespace detail {
// The typed forms an application writes, erased into the untyped ones above:
// extractor(key, value, record, partition_time) -> int64_t and
// partitioner(topic, key, value, partitions) -> std::optional<int32_t>. The untyped forms are
// taken as they are (a topology composed at run time has no K and V).
template <class K, class V, class E>
TimestampExtractor typed_extractor(E extractor) {
  if constexpr (std::is_invocable_r_v<int64_t, const E&, const K&, const V&, const RecordContext&,
                                      int64_t>) {
    return [e = std::move(extractor)](const Record& r, const RecordContext& source,
                                      int64_t partition_time) -> int64_t {
      return e(as<K>(r.key), as<V>(r.value), source, partition_time);
    };
  } else {
    return TimestampExtractor(std::move(extractor));
  }
}
template <class K, class V, class P>
StreamPartitioner typed_partitioner(P partitioner) {
  if constexpr (std::is_invocable_r_v<std::optional<int32_t>, const P&, const std::string&,
                                      const K&, const V&, int32_t>) {
    return
        [p = std::move(partitioner)](const std::string& topic, const Datum& key, const Datum& value,
                                     int32_t partitions) -> std::optional<int32_t> {
          return p(topic, as<K>(key), as<V>(value), partitions);
        };
  } else {
    return StreamPartitioner(std::move(partitioner));
  }
}
// A foreign-key join's partitioners see keys only (Kafka's StreamPartitioner<K, Void>):
// partitioner(topic, key, partitions), or the four-argument form with a Void value.
template <class K, class P>
StreamPartitioner typed_key_partitioner(P partitioner) {
  if constexpr (std::is_invocable_r_v<std::optional<int32_t>, const P&, const std::string&,
                                      const K&, int32_t>) {
    return [p = std::move(partitioner)](const std::string& topic, const Datum& key, const Datum&,
                                        int32_t partitions) -> std::optional<int32_t> {
      return p(topic, as<K>(key), partitions);
    };
  } else {
    return typed_partitioner<K, Void>(std::move(partitioner));
  }
}
}  // namespace detail

// Where a store lives (Kafka's Materialized.StoreType, with store_type::ROCKS_DB and IN_MEMORY
// below). kDefault: as default.dsl.store says (rocksDB unless set to in_memory).
enum class StoreType { kDefault, kRocksDb, kInMemory };

namespace detail {
struct ConsumedOptions {
  ErasedSerde key_serde, value_serde;
  TimestampExtractor timestamp_extractor;
  AutoOffsetReset offset_reset = AutoOffsetReset::kDefault;
  std::string name;
};
struct ProducedOptions {
  ErasedSerde key_serde, value_serde;
  StreamPartitioner partitioner;
  std::string name;
};
struct JoinedOptions {
  ErasedSerde key_serde, value_serde, other_value_serde;
  std::string name;
};
struct StreamJoinedOptions {
  ErasedSerde key_serde, value_serde, other_value_serde;
  std::string name;        // names the processors and repartition topics
  std::string store_name;  // names the stores: <name>-this-join-store, ...
  bool logging = true;
};
struct GroupedOptions {
  ErasedSerde key_serde, value_serde;
  std::string name;
};
struct TableJoinedOptions {
  // partitioner: how this (left) table's topic is partitioned, for the responses' topic;
  // other_partitioner: how the other (foreign-key) table's is, for the subscriptions' topic.
  StreamPartitioner partitioner, other_partitioner;
  std::string name;
};
using streams::StoreType;
struct StoreOptions {
  std::string name;  // empty: generated, and then not queryable
  ErasedSerde key_serde, value_serde;
  bool caching = true;
  bool logging = true;
  std::map<std::string, std::string> changelog_configs;
  StoreType type = StoreType::kDefault;
  // Each value kept with its update's timestamp, as Kafka's DSL stores (state/timestamped.h).
  bool timestamped = false;
  // Window stores (keys: the key's bytes, the window start as 8 bytes big-endian, a 4-byte
  // sequence number): how long after its start a window is kept, by stream time. 0: not a
  // window store, or (in Materialized) the default, window size plus grace.
  int64_t retention_ms = 0;
  // A session store (keys: the key's bytes, then the session's end and start, 8 bytes
  // big-endian each), expired by session end rather than window start.
  bool session_layout = false;
};
struct RepartitionedOptions {
  ErasedSerde key_serde, value_serde;
  std::string name;
  int32_t partitions = 0;  // 0: as many as the upstream topics
  StreamPartitioner partitioner;
};
}  // namespace detail

class Named {
 public:
  static Named as(std::string name) { return Named(std::move(name)); }
  const std::string& name() const { return name_; }

 private:
  explicit Named(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

template <class K, class V>
class Consumed {
 public:
  static Consumed with(Serde<K> key, Serde<V> value) {
    Consumed c;
    c.options_.key_serde = detail::erase(std::move(key));
    c.options_.value_serde = detail::erase(std::move(value));
    return c;
  }
  static Consumed as(std::string name) { return Consumed().withName(std::move(name)); }
  Consumed withName(std::string name) const {
    Consumed c(*this);
    c.options_.name = std::move(name);
    return c;
  }
  // extractor(key, value, record, partition_time) -> int64_t: the record's time (Kafka's
  // TimestampExtractor); negative for an invalid time, which skips the record.
  template <class E>
  Consumed withTimestampExtractor(E extractor) const {
    Consumed c(*this);
    c.options_.timestamp_extractor = detail::typed_extractor<K, V>(std::move(extractor));
    return c;
  }
  Consumed withOffsetResetPolicy(AutoOffsetReset reset) const {
    Consumed c(*this);
    c.options_.offset_reset = reset;
    return c;
  }

 private:
  friend struct detail::Access;
  const detail::ConsumedOptions& options() const { return options_; }
  detail::ConsumedOptions options_;
};

template <class K, class V>
class Produced {
 public:
  static Produced with(Serde<K> key, Serde<V> value) {
    Produced p;
    p.options_.key_serde = detail::erase(std::move(key));
    p.options_.value_serde = detail::erase(std::move(value));
    return p;
  }
  static Produced as(std::string name) {
    Produced p;
    p.options_.name = std::move(name);
    return p;
  }
  Produced withName(std::string name) const {
    Produced p(*this);
    p.options_.name = std::move(name);
    return p;
  }
  // partitioner(topic, key, value, partitions) -> std::optional<int32_t>: the partition, or
  // nullopt for the default (Kafka's StreamPartitioner).
  template <class P>
  Produced withStreamPartitioner(P partitioner) const {
    Produced p(*this);
    p.options_.partitioner = detail::typed_partitioner<K, V>(std::move(partitioner));
    return p;
  }

 private:
  friend struct detail::Access;
  const detail::ProducedOptions& options() const { return options_; }
  detail::ProducedOptions options_;
};

template <class K, class V>
class Grouped {
 public:
  static Grouped with(Serde<K> key, Serde<V> value) {
    Grouped g;
    g.options_.key_serde = detail::erase(std::move(key));
    g.options_.value_serde = detail::erase(std::move(value));
    return g;
  }
  static Grouped as(std::string name) { return Grouped().withName(std::move(name)); }
  Grouped withName(std::string name) const {
    Grouped g(*this);
    g.options_.name = std::move(name);
    return g;
  }

 private:
  friend struct detail::Access;
  const detail::GroupedOptions& options() const { return options_; }
  detail::GroupedOptions options_;
};

// Serdes and name for stream-table joins (Kafka's Joined).
template <class K, class V, class VO>
class Joined {
 public:
  static Joined with(Serde<K> key, Serde<V> value, Serde<VO> other_value) {
    Joined j;
    j.options_.key_serde = detail::erase(std::move(key));
    j.options_.value_serde = detail::erase(std::move(value));
    j.options_.other_value_serde = detail::erase(std::move(other_value));
    return j;
  }
  static Joined as(std::string name) { return Joined().withName(std::move(name)); }
  Joined withName(std::string name) const {
    Joined j(*this);
    j.options_.name = std::move(name);
    return j;
  }

 private:
  friend struct detail::Access;
  const detail::JoinedOptions& options() const { return options_; }
  detail::JoinedOptions options_;
};

// Name and partitioners for foreign-key table joins (Kafka's TableJoined<K, KO>): needed when a
// side's topic is not partitioned by the default partitioner on its key.
template <class K, class KO>
class TableJoined {
 public:
  static TableJoined as(std::string name) { return TableJoined().withName(std::move(name)); }
  // partitioner(topic, key, partitions) -> std::optional<int32_t> over this table's keys,
  // other_partitioner over the other's (KO).
  template <class P, class OP>
  static TableJoined with(P partitioner, OP other_partitioner) {
    TableJoined j;
    j.options_.partitioner = detail::typed_key_partitioner<K>(std::move(partitioner));
    j.options_.other_partitioner = detail::typed_key_partitioner<KO>(std::move(other_partitioner));
    return j;
  }
  TableJoined withName(std::string name) const {
    TableJoined j(*this);
    j.options_.name = std::move(name);
    return j;
  }
  template <class P>
  TableJoined withPartitioner(P partitioner) const {
    TableJoined j(*this);
    j.options_.partitioner = detail::typed_key_partitioner<K>(std::move(partitioner));
    return j;
  }
  template <class P>
  TableJoined withOtherPartitioner(P partitioner) const {
    TableJoined j(*this);
    j.options_.other_partitioner = detail::typed_key_partitioner<KO>(std::move(partitioner));
    return j;
  }

 private:
  friend struct detail::Access;
  const detail::TableJoinedOptions& options() const { return options_; }
  detail::TableJoinedOptions options_;
};

// Serdes and names for stream-stream joins (Kafka's StreamJoined).
template <class K, class V, class VO>
class StreamJoined {
 public:
  static StreamJoined with(Serde<K> key, Serde<V> value, Serde<VO> other_value) {
    StreamJoined j;
    j.options_.key_serde = detail::erase(std::move(key));
    j.options_.value_serde = detail::erase(std::move(value));
    j.options_.other_value_serde = detail::erase(std::move(other_value));
    return j;
  }
  static StreamJoined as(std::string store_name) {
    return StreamJoined().withStoreName(std::move(store_name));
  }
  StreamJoined withName(std::string name) const {
    StreamJoined j(*this);
    j.options_.name = std::move(name);
    return j;
  }
  StreamJoined withStoreName(std::string store_name) const {
    StreamJoined j(*this);
    j.options_.store_name = std::move(store_name);
    return j;
  }
  StreamJoined withLoggingDisabled() const {
    StreamJoined j(*this);
    j.options_.logging = false;
    return j;
  }

 private:
  friend struct detail::Access;
  const detail::StreamJoinedOptions& options() const { return options_; }
  detail::StreamJoinedOptions options_;
};

template <class K, class V>
class Repartitioned {
 public:
  static Repartitioned with(Serde<K> key, Serde<V> value) {
    Repartitioned r;
    r.options_.key_serde = detail::erase(std::move(key));
    r.options_.value_serde = detail::erase(std::move(value));
    return r;
  }
  static Repartitioned as(std::string name) { return Repartitioned().withName(std::move(name)); }
  Repartitioned withName(std::string name) const {
    Repartitioned r(*this);
    r.options_.name = std::move(name);
    return r;
  }
  Repartitioned withNumberOfPartitions(int32_t n) const {
    Repartitioned r(*this);
    r.options_.partitions = n;
    return r;
  }
  // As Produced's: partitioner(topic, key, value, partitions) -> std::optional<int32_t>.
  template <class P>
  Repartitioned withStreamPartitioner(P partitioner) const {
    Repartitioned r(*this);
    r.options_.partitioner = detail::typed_partitioner<K, V>(std::move(partitioner));
    return r;
  }

 private:
  friend struct detail::Access;
  const detail::RepartitionedOptions& options() const { return options_; }
  detail::RepartitionedOptions options_;
};

template <class K, class V>
class Materialized {
 public:
  static Materialized as(std::string store_name) {
    Materialized m;
    m.options_.name = std::move(store_name);
    return m;
  }
  static Materialized with(Serde<K> key, Serde<V> value) {
    return Materialized().withKeySerde(std::move(key)).withValueSerde(std::move(value));
  }
  Materialized withKeySerde(Serde<K> serde) const {
    Materialized m(*this);
    m.options_.key_serde = detail::erase(std::move(serde));
    return m;
  }
  Materialized withValueSerde(Serde<V> serde) const {
    Materialized m(*this);
    m.options_.value_serde = detail::erase(std::move(serde));
    return m;
  }
  Materialized withCachingEnabled() const {
    return set([](auto& o) { o.caching = true; });
  }
  Materialized withCachingDisabled() const {
    return set([](auto& o) { o.caching = false; });
  }
  Materialized withLoggingEnabled(std::map<std::string, std::string> configs = {}) const {
    return set([&](auto& o) {
      o.logging = true;
      o.changelog_configs = configs;
    });
  }
  Materialized withLoggingDisabled() const {
    return set([](auto& o) { o.logging = false; });
  }
  Materialized withStoreType(StoreType type) const {
    return set([&](auto& o) { o.type = type; });
  }
  // Window and session stores: how long windows are kept (at least window size plus grace).
  Materialized withRetention(std::chrono::milliseconds retention) const {
    return set([&](auto& o) { o.retention_ms = retention.count(); });
  }

 private:
  friend struct detail::Access;
  const detail::StoreOptions& options() const { return options_; }
  template <class F>
  Materialized set(F f) const {
    Materialized m(*this);
    f(m.options_);
    return m;
  }
  detail::StoreOptions options_;
};

// Store types for Materialized::withStoreType (Kafka's Materialized.StoreType).
namespace store_type {
inline constexpr StoreType ROCKS_DB = StoreType::kRocksDb;
inline constexpr StoreType IN_MEMORY = StoreType::kInMemory;
}  // namespace store_type

}  // namespace oxbow::streams
