#pragma once
// The Processor API (Kafka's org.apache.kafka.streams.processor.api, KIP-478): typed processors
// with their context (forward, punctuation, record metadata, commit requests, state stores),
// usable from the DSL (KStream::process / processValues) and in a Topology built by hand.
//
//   class Dedup : public api::Processor<std::string, std::string, std::string, std::string> {
//     void init(api::ProcessorContext<std::string, std::string>& context) override {
//       context_ = &context;
//       seen_ = context.getStateStore<std::string, int64_t>("seen");
//     }
//     void process(const api::Record<std::string, std::string>& r) override {
//       if (!seen_->get(r.key())) { seen_->put(r.key(), r.timestamp()); context_->forward(r); }
//     }
//     ...
//   };
//
// Null keys and values read as K{} / V{} unless the type is std::optional.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oxbow/streams/detail/user_processor.h"
#include "oxbow/streams/key_value_iterator.h"

namespace oxbow::streams {

template <class K, class V>
struct KeyValue;
namespace api {
class ContextBase;
}

// A typed view of a key-value store, with the serdes the store was declared with.
template <class K, class V>
class KeyValueStore : public detail::KeyValueScans<KeyValueStore<K, V>, K, V> {
 public:
  const std::string& name() const { return detail::store_name(store_); }
  std::optional<V> get(const K& key) const {
    auto bytes = detail::store_get(store_, key_bytes(key));
    if (!bytes) return std::nullopt;
    return value_of(*bytes);
  }
  void put(const K& key, const V& value) {
    detail::store_put(store_, key_bytes(key), value_bytes(value), context_of());
  }
  // The previous value; the new one is written only when there was none.
  std::optional<V> putIfAbsent(const K& key, const V& value) {
    auto old = get(key);
    if (!old) put(key, value);
    return old;
  }
  std::optional<V> remove(const K& key) {
    auto old = get(key);
    detail::store_put(store_, key_bytes(key), std::nullopt, context_of());
    return old;
  }
  // Scans (range, reverseRange, all, reverseAll, prefixScan: key_value_iterator.h) read the
  // store lazily through its cache (pending writes win, pending deletes hide what is below)
  // without flushing it.
  int64_t approximateNumEntries() const { return detail::store_num_entries(store_); }

 private:
  friend class api::ContextBase;
  friend class detail::KeyValueScans<KeyValueStore<K, V>, K, V>;
  KeyValueStore(detail::KeyValueStore& store, detail::StoreOptions options,
                const detail::UserContext* context)
      : store_(store), options_(std::move(options)), context_(context) {}
  std::string key_bytes(const K& key) const {
    return options_.key_serde.serialize(name(), detail::to_datum(K(key)));
  }
  std::string value_bytes(const V& value) const {
    return options_.value_serde.serialize(name(), detail::to_datum(V(value)));
  }
  V value_of(const std::string& bytes) const {
    return V(detail::as<V>(options_.value_serde.deserialize(name(), bytes)));
  }
  RecordContext context_of() const {
    RecordContext rc;
    if (context_) rc.timestamp = context_->currentStreamTimeMs();
    return rc;
  }
  const std::string& scan_topic() const { return name(); }
  // The decoders own what they use: the iterator may outlive this view.
  KeyValueIterator<K, V> scan(const detail::KeyRange& range) const {
    return KeyValueIterator<K, V>(
        detail::store_scan(store_, range),
        [serde = options_.key_serde, name = name()](std::string_view bytes) {
          return K(detail::as<K>(serde.deserialize(name, bytes)));
        },
        [serde = options_.value_serde, name = name()](std::string_view bytes) {
          return V(detail::as<V>(serde.deserialize(name, bytes)));
        });
  }
  detail::KeyValueStore& store_;
  detail::StoreOptions options_;
  const detail::UserContext* context_;
};

// Declares a store for processors (Kafka's Stores): where it lives, then its serdes and layers.
class KeyValueBytesStoreSupplier {
 public:
  KeyValueBytesStoreSupplier(std::string name, StoreType type)
      : name_(std::move(name)), type_(type) {}
  const std::string& name() const { return name_; }
  StoreType type() const { return type_; }

 private:
  std::string name_;
  StoreType type_;
};

template <class K, class V>
class StoreBuilder {
 public:
  StoreBuilder(const KeyValueBytesStoreSupplier& supplier, Serde<K> key, Serde<V> value) {
    options_.name = supplier.name();
    options_.type = supplier.type();
    options_.key_serde = detail::erase(std::move(key));
    options_.value_serde = detail::erase(std::move(value));
    options_.caching = false;  // Kafka's store builders start without a cache
  }
  StoreBuilder withCachingEnabled() const {
    return set([](auto& o) { o.caching = true; });
  }
  StoreBuilder withCachingDisabled() const {
    return set([](auto& o) { o.caching = false; });
  }
  StoreBuilder withLoggingEnabled(std::map<std::string, std::string> configs = {}) const {
    return set([&](auto& o) {
      o.logging = true;
      o.changelog_configs = configs;
    });
  }
  StoreBuilder withLoggingDisabled() const {
    return set([](auto& o) { o.logging = false; });
  }
  const std::string& name() const { return options_.name; }

 private:
  friend struct detail::Access;
  const detail::StoreOptions& options() const { return options_; }
  template <class F>
  StoreBuilder set(F f) const {
    StoreBuilder b(*this);
    f(b.options_);
    return b;
  }
  detail::StoreOptions options_;
};

struct Stores {
  static KeyValueBytesStoreSupplier persistentKeyValueStore(std::string name) {
    return {std::move(name), StoreType::kRocksDb};
  }
  static KeyValueBytesStoreSupplier inMemoryKeyValueStore(std::string name) {
    return {std::move(name), StoreType::kInMemory};
  }
  template <class K, class V>
  static StoreBuilder<K, V> keyValueStoreBuilder(const KeyValueBytesStoreSupplier& supplier,
                                                 Serde<K> key = DefaultSerde<K>::get(),
                                                 Serde<V> value = DefaultSerde<V>::get()) {
    return StoreBuilder<K, V>(supplier, std::move(key), std::move(value));
  }
};

namespace api {

// A record a processor is given lends it the key and value the topology holds (a processor
// sees them for the call only); a copy of it owns copies of them, so that a processor keeping a
// record keeps its own. Forwarding a record made for the purpose (an rvalue) moves its key and
// value on instead of copying them.
template <class K, class V>
class Record {
 public:
  Record(K key, V value, int64_t timestamp, Headers headers = {})
      : key_(std::move(key)),
        value_(std::move(value)),
        timestamp_(timestamp),
        headers_(std::move(headers)) {}
  Record(const Record& other)
      : key_(other.key()),
        value_(other.value()),
        timestamp_(other.timestamp_),
        headers_(other.headers_) {}
  Record(Record&& other)
      : key_(std::move(other).key()),
        value_(std::move(other).value()),
        timestamp_(other.timestamp_),
        headers_(std::move(other.headers_)) {}
  Record& operator=(const Record& other) {
    if (this != &other) *this = Record(other);
    return *this;
  }
  Record& operator=(Record&& other) {
    if (this != &other) {
      key_ = std::move(other).key();
      value_ = std::move(other).value();
      lent_key_ = nullptr;
      lent_value_ = nullptr;
      timestamp_ = other.timestamp_;
      headers_ = std::move(other.headers_);
    }
    return *this;
  }
  ~Record() = default;

  const K& key() const& { return lent_key_ ? *lent_key_ : key_; }
  const V& value() const& { return lent_value_ ? *lent_value_ : value_; }
  // From a record about to go: its own key and value moved out, a lent one's copied.
  K key() && { return lent_key_ ? K(*lent_key_) : std::move(key_); }
  V value() && { return lent_value_ ? V(*lent_value_) : std::move(value_); }
  int64_t timestamp() const { return timestamp_; }
  const Headers& headers() const { return headers_; }
  Headers& headers() { return headers_; }
  template <class NK>
  Record<NK, V> withKey(NK key) const {
    return Record<NK, V>(std::move(key), value(), timestamp_, headers_);
  }
  template <class NV>
  Record<K, NV> withValue(NV value) const {
    return Record<K, NV>(key(), std::move(value), timestamp_, headers_);
  }
  Record withTimestamp(int64_t timestamp) const {
    return Record(key(), value(), timestamp, headers_);
  }
  Record withHeaders(Headers headers) const {
    return Record(key(), value(), timestamp_, std::move(headers));
  }

 protected:
  friend struct detail::Access;
  struct Lent {};
  // What a processor is given: `key` and `value` stay where they are, for the call.
  Record(Lent, const K& key, const V& value, int64_t timestamp, const Headers& headers)
      : timestamp_(timestamp), headers_(headers), lent_key_(&key), lent_value_(&value) {}

 private:
  K key_{};
  V value_{};
  int64_t timestamp_;
  Headers headers_;
  const K* lent_key_ = nullptr;
  const V* lent_value_ = nullptr;
};

// A record whose key a processValues() processor cannot change.
template <class K, class V>
class FixedKeyRecord : private Record<K, V> {
 public:
  FixedKeyRecord(K key, V value, int64_t timestamp, Headers headers)
      : Record<K, V>(std::move(key), std::move(value), timestamp, std::move(headers)) {}
  using Record<K, V>::key;
  using Record<K, V>::value;
  using Record<K, V>::timestamp;
  using Record<K, V>::headers;
  template <class NV>
  FixedKeyRecord<K, NV> withValue(NV value) const {
    return FixedKeyRecord<K, NV>(key(), std::move(value), timestamp(), headers());
  }
  FixedKeyRecord withTimestamp(int64_t time) const {
    return FixedKeyRecord(key(), value(), time, headers());
  }
  FixedKeyRecord withHeaders(Headers replaced) const {
    return FixedKeyRecord(key(), value(), timestamp(), std::move(replaced));
  }

 private:
  friend struct detail::Access;
  using typename Record<K, V>::Lent;
  FixedKeyRecord(Lent lent, const K& key, const V& value, int64_t timestamp, const Headers& headers)
      : Record<K, V>(lent, key, value, timestamp, headers) {}
};

// What both contexts offer besides forwarding.
class ContextBase {
 public:
  // Runs `punctuator(time)` every `interval` of stream time (once the task's stream time reaches
  // each multiple of it) or of wall-clock time, until cancelled.
  template <class F>
  Cancellable schedule(std::chrono::milliseconds interval, PunctuationType type, F punctuator) {
    return core_.schedule(interval.count(), type, std::function<void(int64_t)>(punctuator));
  }
  // Commits as soon as the current record is done.
  void commit() { core_.commit(); }
  std::optional<RecordMetadata> recordMetadata() const { return core_.recordMetadata(); }
  int64_t currentStreamTimeMs() const { return core_.currentStreamTimeMs(); }
  int64_t currentSystemTimeMs() const { return core_.currentSystemTimeMs(); }
  const std::string& applicationId() const { return core_.applicationId(); }
  TaskId taskId() const { return core_.taskId(); }
  // A store the processor was connected to; throws TopologyException otherwise.
  template <class K, class V>
  std::shared_ptr<KeyValueStore<K, V>> getStateStore(const std::string& name) {
    return std::shared_ptr<KeyValueStore<K, V>>(
        new KeyValueStore<K, V>(core_.store(name), core_.store_options(name), &core_));
  }

 protected:
  explicit ContextBase(detail::UserContext& core) : core_(core) {}
  detail::UserContext& core_;
};

// The context a processor forwards through: records of its output types (R: Record, or
// FixedKeyRecord for processValues).
template <template <class, class> class R, class K, class V>
class TypedContext : public ContextBase {
 public:
  void forward(const R<K, V>& r) { core_.forward(untyped(r)); }
  void forward(const R<K, V>& r, const std::string& child) { core_.forward(untyped(r), child); }
  // A record made to be forwarded: its key and value move on.
  void forward(R<K, V>&& r) { core_.forward(untyped(std::move(r))); }
  void forward(R<K, V>&& r, const std::string& child) {
    core_.forward(untyped(std::move(r)), child);
  }

 private:
  friend struct detail::Access;
  explicit TypedContext(detail::UserContext& core) : ContextBase(core) {}
  static streams::Record untyped(const R<K, V>& r) {
    return streams::Record{detail::to_datum(K(r.key())), detail::to_datum(V(r.value())),
                           r.timestamp(), r.headers()};
  }
  static streams::Record untyped(R<K, V>&& r) {
    int64_t timestamp = r.timestamp();
    Headers headers = std::move(r.headers());
    Datum key = detail::to_datum(std::move(r).key());
    return streams::Record{std::move(key), detail::to_datum(std::move(r).value()), timestamp,
                           std::move(headers)};
  }
};

template <class KOut, class VOut>
using ProcessorContext = TypedContext<Record, KOut, VOut>;
template <class K, class VOut>
using FixedKeyProcessorContext = TypedContext<FixedKeyRecord, K, VOut>;

template <class KIn, class VIn, class KOut, class VOut>
class Processor {
 public:
  using KeyIn = KIn;
  using ValueIn = VIn;
  using KeyOut = KOut;
  using ValueOut = VOut;
  using Context = ProcessorContext<KOut, VOut>;
  virtual ~Processor() = default;
  virtual void init(Context& context) { (void)context; }
  virtual void process(const Record<KIn, VIn>& record) = 0;
  virtual void close() {}
};

template <class KIn, class VIn, class VOut>
class FixedKeyProcessor {
 public:
  using KeyIn = KIn;
  using ValueIn = VIn;
  using ValueOut = VOut;
  using Context = FixedKeyProcessorContext<KIn, VOut>;
  virtual ~FixedKeyProcessor() = default;
  virtual void init(Context& context) { (void)context; }
  virtual void process(const FixedKeyRecord<KIn, VIn>& record) = 0;
  virtual void close() {}
};

// The context KTable::transformValues' transformer sees: the update being processed (its
// recordMetadata(), timestamp-bearing stores, ...). It forwards nothing: the transformer returns.
class TransformerContext : public ContextBase {
 public:
  // The timestamp of the input record behind the update.
  int64_t timestamp() const { return core_.timestamp(); }

 private:
  friend struct detail::Access;
  explicit TransformerContext(detail::UserContext& core) : ContextBase(core) {}
};

// Kafka's ValueTransformerWithKey, for KTable::transformValues: a row's new value from its key and
// value. Made once per task; never given a null value (a deleted row stays deleted).
template <class K, class V, class VR>
class ValueTransformerWithKey {
 public:
  using KeyIn = K;
  using ValueIn = V;
  using ValueOut = VR;
  virtual ~ValueTransformerWithKey() = default;
  virtual void init(TransformerContext& context) { (void)context; }
  virtual VR transform(const K& key, const V& value) = 0;
  virtual void close() {}
};

}  // namespace api

namespace detail {

template <class K, class V, class VR>
class TypedValueTransformer : public ValueTransformerCore {
 public:
  explicit TypedValueTransformer(std::unique_ptr<api::ValueTransformerWithKey<K, V, VR>> t)
      : transformer_(std::move(t)) {}
  void init(UserContext& context) override {
    context_ = Access::make_unique<api::TransformerContext>(context);
    transformer_->init(*context_);
  }
  Datum transform(const Datum& key, const Datum& value) override {
    return to_datum(VR(transformer_->transform(as<K>(key), as<V>(value))));
  }
  void close() override { transformer_->close(); }

 private:
  std::unique_ptr<api::ValueTransformerWithKey<K, V, VR>> transformer_;
  std::unique_ptr<api::TransformerContext> context_;
};

// Runs a typed processor over the untyped core.
template <class P, class KIn, class VIn, class Context, template <class, class> class In>
class TypedUserProcessor : public UserProcessor {
 public:
  explicit TypedUserProcessor(std::unique_ptr<P> processor) : processor_(std::move(processor)) {}
  void init(UserContext& context) override {
    context_ = detail::Access::make_unique<Context>(context);
    processor_->init(*context_);
  }
  // The record's key and value lent to the processor (a windowed key, which is made from its
  // parts, lives here for the call).
  void process(const Record& r) override {
    decltype(auto) key = as<KIn>(r.key);
    decltype(auto) value = as<VIn>(r.value);
    processor_->process(Access::lent<In<KIn, VIn>>(key, value, r.timestamp, r.headers));
  }
  void close() override { processor_->close(); }

 private:
  std::unique_ptr<P> processor_;
  std::unique_ptr<Context> context_;
};

// The processor type a supplier makes: supplier() -> std::unique_ptr<P>.
template <class S>
using SuppliedProcessor = typename std::invoke_result_t<S&>::element_type;

// supplier() -> std::unique_ptr<api::Processor<KIn, VIn, KOut, VOut>> (or a subclass).
template <class KIn, class VIn, class KOut, class VOut, class S>
UserProcessorFactory processor_factory(S supplier) {
  return [supplier = std::move(supplier)]() -> std::unique_ptr<UserProcessor> {
    std::unique_ptr<api::Processor<KIn, VIn, KOut, VOut>> p = supplier();
    return std::make_unique<TypedUserProcessor<api::Processor<KIn, VIn, KOut, VOut>, KIn, VIn,
                                               api::ProcessorContext<KOut, VOut>, api::Record>>(
        std::move(p));
  };
}
template <class KIn, class VIn, class VOut, class S>
UserProcessorFactory fixed_key_factory(S supplier) {
  return [supplier = std::move(supplier)]() -> std::unique_ptr<UserProcessor> {
    std::unique_ptr<api::FixedKeyProcessor<KIn, VIn, VOut>> p = supplier();
    return std::make_unique<
        TypedUserProcessor<api::FixedKeyProcessor<KIn, VIn, VOut>, KIn, VIn,
                           api::FixedKeyProcessorContext<KIn, VOut>, api::FixedKeyRecord>>(
        std::move(p));
  };
}

}  // namespace detail
}  // namespace oxbow::streams
