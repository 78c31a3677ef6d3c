#pragma once
// TopologyTestDriver: runs a topology in this process, without a broker, as Kafka's does. Records
// piped into input topics are processed at once, one at a time; what the topology writes is kept
// per topic for TestOutputTopic to read, and what it writes to a topic it also reads (repartition
// topics) is processed in turn. After each input record the driver commits, so caches forward every
// update: with caching off, the output is exactly what the real runtime writes for the same input.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oxbow/streams/key_value_iterator.h"
#include "oxbow/streams/kstream.h"
#include "oxbow/streams/topology.h"

namespace oxbow::streams {

struct ProducedRecord {
  std::string topic;
  std::optional<std::string> key, value;
  int64_t timestamp = 0;
  Headers headers;
};

template <class K, class V>
struct TestRecord {
  std::optional<K> key;
  std::optional<V> value;
  int64_t timestamp = 0;
  Headers headers;
};

namespace detail {
template <class K, class V>
class DriverWindowReads;
}

template <class K, class V>
class TestInputTopic;
template <class K, class V>
class TestOutputTopic;
template <class K, class V>
class KeyValueStoreView;
template <class K, class V>
class WindowStoreView;
template <class K, class AGG>
class SessionStoreView;

class TopologyTestDriver {
 public:
  // config: Kafka Streams' names (application.id, statestore.cache.max.bytes,
  // default.deserialization.exception.handler, ...). wall_clock_ms: the driver's start time.
  explicit TopologyTestDriver(const Topology& topology,
                              std::map<std::string, std::string> config = {},
                              int64_t wall_clock_ms = 0);
  ~TopologyTestDriver();
  TopologyTestDriver(const TopologyTestDriver&) = delete;
  TopologyTestDriver& operator=(const TopologyTestDriver&) = delete;

  template <class K, class V>
  TestInputTopic<K, V> createInputTopic(const std::string& topic,
                                        Serde<K> key = DefaultSerde<K>::get(),
                                        Serde<V> value = DefaultSerde<V>::get()) {
    return TestInputTopic<K, V>(*this, topic, std::move(key), std::move(value));
  }
  template <class K, class V>
  TestOutputTopic<K, V> createOutputTopic(const std::string& topic,
                                          Serde<K> key = DefaultSerde<K>::get(),
                                          Serde<V> value = DefaultSerde<V>::get()) {
    return TestOutputTopic<K, V>(*this, topic, std::move(key), std::move(value));
  }
  template <class K, class V>
  KeyValueStoreView<K, V> getKeyValueStore(const std::string& store) {
    return KeyValueStoreView<K, V>(*this, store);
  }
  // A window or session store's view (test_driver_windows.h), values without their timestamps.
  template <class K, class V>
  WindowStoreView<K, V> getWindowStore(const std::string& store) {
    return WindowStoreView<K, V>(*this, store);
  }
  template <class K, class AGG>
  SessionStoreView<K, AGG> getSessionStore(const std::string& store) {
    return SessionStoreView<K, AGG>(*this, store);
  }

  // Decides on what processors and punctuators throw, in place of processing.exception.handler.
  void setProcessingExceptionHandler(ProcessingExceptionHandler handler);

  // Moves the driver's wall clock on, running the wall-clock punctuators that become due.
  void advanceWallClockTime(std::chrono::milliseconds by);
  int64_t wallClockTime() const { return wall_clock_ms_; }

  // The untyped side, which the typed topics use.
  void pipe(const std::string& topic, std::optional<std::string> key,
            std::optional<std::string> value, int64_t timestamp, Headers headers = {});
  std::optional<ProducedRecord> read(const std::string& topic);
  size_t queueSize(const std::string& topic) const;
  std::vector<std::string> producedTopicNames() const;
  // Store access in bytes; throws std::invalid_argument for no such store.
  std::optional<std::string> storeGet(const std::string& store, const std::string& key);
  std::vector<std::pair<std::string, std::string>> storeAll(const std::string& store);
  // A cursor through the store's layers (its cache's pending writes over it); values as stored
  // (a timestamped store's with their timestamps).
  detail::CursorPtr storeScan(const std::string& store, const detail::KeyRange& range);
  // A window or session store's fetch through its layers, lazily (segment by segment), as a
  // processor reads; keys and values as stored. windowKeyBytes: a key's bytes as that store's
  // keys begin with them (its windowed serde's, less the window).
  detail::CursorPtr windowScan(const std::string& store, const detail::WindowScan& scan);
  std::string windowKeyBytes(const std::string& store, const Datum& key) const;
  // Records dropped by nodes (null keys, ..., or by the processing-exception handler), skipped
  // as undecodable, or skipped for a bad timestamp, over all tasks.
  int64_t droppedRecords() const;
  int64_t skippedRecords() const;

 private:
  friend struct detail::Access;
  template <class, class>
  friend class KeyValueStoreView;
  template <class, class>
  friend class detail::DriverWindowReads;
  // The store's serdes and layers; throws std::invalid_argument for no such store.
  const detail::StoreOptions& storeOptions(const std::string& store) const;
  class Core;
  std::unique_ptr<Core> core_;
  int64_t wall_clock_ms_;
  std::map<std::string, int64_t> input_offsets_;
};

template <class K, class V>
class TestInputTopic {
 public:
  TestInputTopic(TopologyTestDriver& driver, std::string topic, Serde<K> key, Serde<V> value)
      : driver_(driver),
        topic_(std::move(topic)),
        key_(std::move(key)),
        value_(std::move(value)),
        next_timestamp_(driver.wallClockTime()) {}

  // Without a timestamp, the record gets the topic's current time, which then advances by
  // advance_ms (Kafka's autoAdvance; 0 by default).
  void pipeInput(const K& key, const std::optional<V>& value,
                 std::optional<int64_t> timestamp = {}) {
    std::optional<std::string> v;
    if (value) v = value_.serialize(topic_, *value);
    driver_.pipe(topic_, key_.serialize(topic_, key), std::move(v), time(timestamp));
  }
  void pipeInput(const V& value) {
    driver_.pipe(topic_, std::nullopt, value_.serialize(topic_, value), time({}));
  }
  void pipeValueList(const std::vector<V>& values) {
    for (const auto& v : values) pipeInput(v);
  }
  void pipeKeyValueList(const std::vector<KeyValue<K, V>>& records) {
    for (const auto& kv : records) pipeInput(kv.key, kv.value);
  }
  void advanceTime(std::chrono::milliseconds by) { next_timestamp_ += by.count(); }
  void setAutoAdvance(std::chrono::milliseconds by) { advance_ms_ = by.count(); }

 private:
  int64_t time(std::optional<int64_t> given) {
    if (given) return *given;
    int64_t t = next_timestamp_;
    next_timestamp_ += advance_ms_;
    return t;
  }
  TopologyTestDriver& driver_;
  std::string topic_;
  Serde<K> key_;
  Serde<V> value_;
  int64_t next_timestamp_;
  int64_t advance_ms_ = 0;
};

template <class K, class V>
class TestOutputTopic {
 public:
  TestOutputTopic(TopologyTestDriver& driver, std::string topic, Serde<K> key, Serde<V> value)
      : driver_(driver), topic_(std::move(topic)), key_(std::move(key)), value_(std::move(value)) {}

  // Throws std::out_of_range when the topic has nothing more.
  TestRecord<K, V> readRecord() {
    auto r = driver_.read(topic_);
    if (!r) throw std::out_of_range("no more records in " + topic_);
    TestRecord<K, V> out;
    if (r->key) out.key = key_.deserialize(topic_, *r->key);
    if (r->value) out.value = value_.deserialize(topic_, *r->value);
    out.timestamp = r->timestamp;
    out.headers = std::move(r->headers);
    return out;
  }
  // Null keys and values read as K{} and V{}; readRecord() tells them apart.
  KeyValue<K, V> readKeyValue() {
    auto r = readRecord();
    return {r.key.value_or(K{}), r.value.value_or(V{})};
  }
  V readValue() { return readRecord().value.value_or(V{}); }
  std::vector<TestRecord<K, V>> readRecordsToList() {
    std::vector<TestRecord<K, V>> out;
    while (!isEmpty()) out.push_back(readRecord());
    return out;
  }
  std::vector<KeyValue<K, V>> readKeyValuesToList() {
    std::vector<KeyValue<K, V>> out;
    while (!isEmpty()) out.push_back(readKeyValue());
    return out;
  }
  std::vector<V> readValuesToList() {
    std::vector<V> out;
    while (!isEmpty()) out.push_back(readValue());
    return out;
  }
  // The latest value per key; a null value (tombstone) removes the key.
  std::map<K, V> readKeyValuesToMap() {
    std::map<K, V> out;
    while (!isEmpty()) {
      auto r = readRecord();
      if (r.value)
        out[r.key.value_or(K{})] = *r.value;
      else
        out.erase(r.key.value_or(K{}));
    }
    return out;
  }
  bool isEmpty() const { return driver_.queueSize(topic_) == 0; }
  size_t getQueueSize() const { return driver_.queueSize(topic_); }

 private:
  TopologyTestDriver& driver_;
  std::string topic_;
  Serde<K> key_;
  Serde<V> value_;
};

template <class K, class V>
class KeyValueStoreView : public detail::KeyValueScans<KeyValueStoreView<K, V>, K, V> {
 public:
  KeyValueStoreView(TopologyTestDriver& driver, std::string store)
      : driver_(driver), store_(std::move(store)), options_(driver.storeOptions(store_)) {}
  std::optional<V> get(const K& key) {
    auto bytes = driver_.storeGet(store_, options_.key_serde.serialize(store_, Datum(key)));
    if (!bytes) return std::nullopt;
    return detail::as<V>(options_.value_serde.deserialize(store_, *bytes));
  }
  // range, reverseRange, all, reverseAll, prefixScan (key_value_iterator.h): lazy scans
  // through the cache, as a processor's.
  int64_t approximateNumEntries() { return static_cast<int64_t>(driver_.storeAll(store_).size()); }

 private:
  friend class detail::KeyValueScans<KeyValueStoreView<K, V>, K, V>;
  const std::string& scan_topic() const { return store_; }
  std::string key_bytes(const K& key) const {
    return options_.key_serde.serialize(store_, Datum(key));
  }
  // As the driver's storeGet(), a timestamped store's values without their timestamps.
  KeyValueIterator<K, V> scan(const detail::KeyRange& range) const {
    return KeyValueIterator<K, V>(
        driver_.storeScan(store_, range),
        [serde = options_.key_serde, name = store_](std::string_view bytes) {
          return K(detail::as<K>(serde.deserialize(name, bytes)));
        },
        [serde = options_.value_serde, name = store_,
         stamped = options_.timestamped](std::string_view bytes) {
          if (stamped) bytes.remove_prefix(std::min<size_t>(8, bytes.size()));
          return V(detail::as<V>(serde.deserialize(name, bytes)));
        });
  }
  TopologyTestDriver& driver_;
  std::string store_;
  detail::StoreOptions options_;
};

}  // namespace oxbow::streams

// Window and session stores' views, after the driver they read through.
#include "oxbow/streams/test_driver_windows.h"
