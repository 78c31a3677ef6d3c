// Foreign-key table joins (KIP-213), as Kafka's KTableImpl.doJoinOnForeignKey builds them. A left
// row subscribes to the right row its foreign key names: the subscription goes to the right
// table's partition through the subscription topic, is kept there in the subscription store, and
// is answered with the right row's value through the response topic, back to the left row's
// partition. A right update answers every row subscribed to it. Each answer carries the hash of
// the left value it answers; one that no longer matches the left row's current value is stale (the
// row changed, perhaps to another foreign key, while it travelled) and is dropped, so a key that
// moves never leaves an old result behind.
#include <algorithm>

#include "streams/dsl/dsl_internal.h"
#include "streams/dsl/fk_join_wrappers.h"
#include "streams/dsl/table_forwarder.h"

namespace oxbow::streams::detail {

namespace {

using Instruction = SubscriptionInstruction;

// What every processor of one join shares: the serdes of both sides and the subscription topic,
// whose name (with the application id) makes Kafka's pseudo-topics for the serdes.
struct FkJoinSpec {
  ErasedSerde left_key, left_value, foreign_key, foreign_value;
  ErasedSerde subscription;        // subscription_serde(left_key), made once
  std::string subscription_topic;  // without the application id
  bool left_join = false;
  std::string pseudo_topic(const ProcessorContext& context, const char* suffix) const {
    return context.application_id() + "-" + subscription_topic + suffix;
  }
};
using SpecPtr = std::shared_ptr<const FkJoinSpec>;

// On the left table: turns each change into subscriptions (Kafka's SubscriptionSendProcessor).
class SubscriptionSendProcessor : public TableProcessor {
 public:
  SubscriptionSendProcessor(SpecPtr spec, KeyMapper extractor)
      : spec_(std::move(spec)), extractor_(std::move(extractor)) {}

  void process_change(const ChangeRecord& r) override {
    const Change& c = r.change;
    hash_.reset();
    if (c.new_value.has_value())
      hash_ = murmur3_hash128(
          spec_->left_value.serialize(spec_->pseudo_topic(context(), "-vh"), c.new_value));
    Datum old_fk = c.old_value.has_value() ? extractor_(r.key, c.old_value) : Datum();
    Datum new_fk = c.new_value.has_value() ? extractor_(r.key, c.new_value) : Datum();
    if (spec_->left_join)
      left_join(r, c, old_fk, new_fk);
    else
      inner_join(r, c, old_fk, new_fk);
  }

 private:
  void left_join(const ChangeRecord& r, const Change& c, const Datum& old_fk, const Datum& new_fk) {
    if (!c.old_value.has_value() && !c.new_value.has_value()) return;
    // The old subscription lives on another partition when the key moved: delete it there.
    if (old_fk.has_value() && !same_key(old_fk, new_fk))
      send(r, old_fk, Instruction::kDeleteKeyNoPropagate);
    // Always a response, for a left join emits a row (or a tombstone) for every change; a null
    // foreign key subscribes to nothing but still gets its (null) answer.
    send(r, new_fk, Instruction::kPropagateNullIfNoForeignValue);
  }

  void inner_join(const ChangeRecord& r, const Change& c, const Datum& old_fk,
                  const Datum& new_fk) {
    bool subscribed = old_fk.has_value();
    if (!c.new_value.has_value()) {
      if (subscribed) send(r, old_fk, Instruction::kDeleteKeyAndPropagate);
      return;
    }
    if (!new_fk.has_value()) {
      context().record_dropped("null foreign key in a foreign-key join");
      if (subscribed) send(r, old_fk, Instruction::kDeleteKeyAndPropagate);
      return;
    }
    if (subscribed && !same_key(old_fk, new_fk)) {
      send(r, old_fk, Instruction::kDeleteKeyNoPropagate);
      // The previous result must go if the new key has no row.
      send(r, new_fk, Instruction::kPropagateNullIfNoForeignValue);
      return;
    }
    // An insert, or an update under the same key (which did not join before if it does not now).
    send(r, new_fk, Instruction::kPropagateOnlyIfForeignValue);
  }

  bool same_key(const Datum& a, const Datum& b) {
    if (!a.has_value() || !b.has_value()) return a.has_value() == b.has_value();
    std::string topic = spec_->pseudo_topic(context(), "-fk");
    return spec_->foreign_key.serialize(topic, a) == spec_->foreign_key.serialize(topic, b);
  }

  void send(const ChangeRecord& r, const Datum& foreign_key, Instruction instruction) {
    Subscription s{hash_, instruction, r.key, context().task_partition()};
    context().forward(Record{foreign_key, Datum(std::move(s)), r.timestamp, r.headers});
  }

  SpecPtr spec_;
  KeyMapper extractor_;
  std::optional<ValueHash> hash_;
};

// The subscription store, as the two processors that use it reach it.
class SubscriptionStore {
 public:
  SubscriptionStore(SpecPtr spec, std::string store)
      : spec_(std::move(spec)), store_name_(std::move(store)) {}
  void init(ProcessorContext& context) {
    context_ = &context;
    store_ = &context.store(store_name_);
  }
  KeyValueStore& store() { return *store_; }
  const FkJoinSpec& spec() const { return *spec_; }
  std::string prefix_of(const Datum& foreign_key) {
    return combined_key_prefix(
        spec_->foreign_key.serialize(spec_->pseudo_topic(*context_, "-fk"), foreign_key));
  }
  std::string subscription_bytes(const Datum& subscription) {
    return spec_->subscription.serialize(spec_->pseudo_topic(*context_, ""), subscription);
  }
  Subscription subscription_of(const std::string& bytes) {
    Datum d = spec_->subscription.deserialize(spec_->pseudo_topic(*context_, ""), bytes);
    return datum_cast<Subscription>(std::move(d));
  }

 private:
  SpecPtr spec_;
  std::string store_name_;
  ProcessorContext* context_ = nullptr;
  KeyValueStore* store_ = nullptr;
};

// On the subscription topic: keeps the subscriptions (Kafka's SubscriptionReceiveProcessor).
class SubscriptionReceiveProcessor : public Processor {
 public:
  SubscriptionReceiveProcessor(SpecPtr spec, std::string store)
      : subscriptions_(std::move(spec), std::move(store)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    subscriptions_.init(context);
  }
  void process(const Record& r) override {
    const auto& s = datum_cast<const Subscription&>(r.value);
    if (!r.key.has_value()) {
      // Only a left join's null foreign key comes here without a key, for its null answer.
      if (s.instruction != Instruction::kPropagateNullIfNoForeignValue)
        return context().record_dropped("null foreign key in a subscription");
      return context().forward(r);
    }
    const FkJoinSpec& spec = subscriptions_.spec();
    std::string key = subscriptions_.prefix_of(r.key) +
                      spec.left_key.serialize(spec.pseudo_topic(context(), "-pk"), s.primary_key);
    bool remove = s.instruction == Instruction::kDeleteKeyAndPropagate ||
                  s.instruction == Instruction::kDeleteKeyNoPropagate;
    std::optional<std::string> value;
    if (!remove) value = with_timestamp(r.timestamp, subscriptions_.subscription_bytes(r.value));
    subscriptions_.store().put(key, value, context_at(context(), r.timestamp));
    context().forward(r);
  }

 private:
  SubscriptionStore subscriptions_;
};

// After the receiver: answers a subscription with the right row's value, as its instruction says
// (Kafka's SubscriptionJoinProcessor).
class SubscriptionJoinProcessor : public Processor {
 public:
  explicit SubscriptionJoinProcessor(std::shared_ptr<const TableLookup> right)
      : right_(std::move(right)) {}
  void process(const Record& r) override {
    const auto& s = datum_cast<const Subscription&>(r.value);
    TableValue foreign = r.key.has_value() ? right_->get(context(), r.key) : TableValue{};
    bool found = foreign.value.has_value();
    int64_t timestamp = found ? std::max(r.timestamp, foreign.timestamp) : r.timestamp;
    SubscriptionResponse response{s.hash, Datum(), s.primary_partition};
    switch (s.instruction) {
      case Instruction::kDeleteKeyNoPropagate:
        return;
      case Instruction::kDeleteKeyAndPropagate:
        break;
      case Instruction::kPropagateOnlyIfForeignValue:
        if (!found) return;
        response.foreign_value = foreign.value;
        break;
      case Instruction::kPropagateNullIfNoForeignValue:
        response.foreign_value = foreign.value;
        break;
    }
    context().forward(Record{s.primary_key, Datum(std::move(response)), timestamp, r.headers});
  }

 private:
  std::shared_ptr<const TableLookup> right_;
};

// On the right table: a right update answers every row subscribed to its key (Kafka's
// ForeignTableJoinProcessor), found by a prefix scan of the subscription store.
class ForeignTableJoinProcessor : public TableProcessor {
 public:
  ForeignTableJoinProcessor(SpecPtr spec, std::string store)
      : subscriptions_(std::move(spec), std::move(store)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    subscriptions_.init(context);
  }
  void process_change(const ChangeRecord& r) override {
    if (!r.key.has_value()) return context().record_dropped("null key in a foreign-key join");
    const Change& c = r.change;
    for (const auto& [key, value] :
         subscriptions_.store().prefix_scan(subscriptions_.prefix_of(r.key))) {
      auto stored = split_timestamp(value);
      if (!stored) continue;
      Subscription s = subscriptions_.subscription_of(stored->value);
      SubscriptionResponse response{s.hash, c.new_value, s.primary_partition};
      context().forward(
          Record{std::move(s.primary_key), Datum(std::move(response)), r.timestamp, r.headers});
    }
  }

 private:
  SubscriptionStore subscriptions_;
};

// On the response topic: joins an answer that still matches the left row, drops a stale one
// (Kafka's ResponseJoinProcessor). Forwards the result, or null to delete it.
class ResponseJoinProcessor : public Processor {
 public:
  ResponseJoinProcessor(SpecPtr spec, std::shared_ptr<const TableLookup> left, ValueJoiner joiner)
      : spec_(std::move(spec)), left_(std::move(left)), joiner_(std::move(joiner)) {}
  void process(const Record& r) override {
    const auto& response = datum_cast<const SubscriptionResponse&>(r.value);
    TableValue current = left_->get(context(), r.key);
    std::optional<ValueHash> hash;
    if (current.value.has_value())
      hash = murmur3_hash128(
          spec_->left_value.serialize(spec_->pseudo_topic(context(), "-vh"), current.value));
    if (hash != response.hash) return;
    Datum result;
    // Kafka would call a left join's joiner with a null left value here; no answer that matches
    // a deleted row carries a right value, so a deleted row always ends in a tombstone.
    bool joins =
        current.value.has_value() && (response.foreign_value.has_value() || spec_->left_join);
    if (joins) result = joiner_(r.key, current.value, response.foreign_value);
    context().forward(Record{r.key, std::move(result), r.timestamp, r.headers});
  }

 private:
  SpecPtr spec_;
  std::shared_ptr<const TableLookup> left_;
  ValueJoiner joiner_;
};

// Kafka's names: generated ones in its order, or the TableJoined name with its suffixes.
struct FkJoinNames {
  std::string subscription_topic, send, subscription_sink, subscription_source, store, receive,
      join_foreign, foreign_join, response_topic, response_sink, response_source, resolver, result;

  static FkJoinNames of(GraphBuilder& graph, const std::string& base) {
    FkJoinNames n;
    auto name = [&](const char* suffix, const char* prefix) {
      return base.empty() ? graph.new_name(prefix) : base + suffix;
    };
    n.subscription_topic =
        name("-subscription-registration", "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-") + "-topic";
    n.send =
        name("-subscription-registration-processor", "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-");
    n.subscription_sink = name("-subscription-registration-sink", "KSTREAM-SINK-");
    n.subscription_source = name("-subscription-registration-source", "KSTREAM-SOURCE-");
    n.store = name("-subscription-store", "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-");
    n.receive = name("-subscription-receive", "KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-");
    n.join_foreign = name("-subscription-join-foreign", "KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-");
    n.foreign_join = name("-foreign-join-subscription", "KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-");
    n.response_topic =
        name("-subscription-response", "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-") + "-topic";
    n.response_sink = name("-subscription-response-sink", "KSTREAM-SINK-");
    n.response_source = name("-subscription-response-source", "KSTREAM-SOURCE-");
    n.resolver = name("-subscription-response-resolver",
                      "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-");
    n.result = name("-result", "KTABLE-FK-JOIN-OUTPUT-");
    return n;
  }
};

template <class P, class... A>
ProcessorFactory factory_of(A... args) {
  return [=] { return std::make_unique<P>(args...); };
}

ErasedSerde identity_serde() {
  ErasedSerde out;
  out.name = "Bytes";
  out.serialize = [](std::string_view, const Datum& d) { return datum_cast<std::string>(d); };
  out.deserialize = [](std::string_view, std::string_view b) { return Datum(std::string(b)); };
  return out;
}

// The right table's side: subscriptions in, kept, answered; right updates answered too.
Node subscription_side(const Node& send, const Node& right, const FkJoinNames& names,
                       const SpecPtr& spec, const TableJoinedOptions& joined) {
  auto& graph = *send.graph;
  const ErasedSerde& wrapper = spec->subscription;
  graph.add_internal_topic({names.subscription_topic, 0, right.source_topics});
  StreamPartitioner to_foreign = [other = joined.other_partitioner](
                                     const std::string& topic, const Datum& key, const Datum& value,
                                     int32_t partitions) -> std::optional<int32_t> {
    if (other) return other(topic, key, Datum(), partitions);
    // A left join's null foreign key has no partition of its own; any will answer it.
    if (!key.has_value())
      return datum_cast<const Subscription&>(value).primary_partition % partitions;
    return std::nullopt;
  };
  add_internal_sink(send, names.subscription_sink, names.subscription_topic,
                    {spec->foreign_key, wrapper, to_foreign, names.subscription_sink});
  Node source = add_internal_source(right, names.subscription_source, names.subscription_topic,
                                    spec->foreign_key, wrapper);
  std::vector<std::string> topics = right.source_topics;
  topics.push_back(names.subscription_topic);
  graph.add_copartition_group(topics);

  StoreOptions store;
  store.name = names.store;
  store.key_serde = identity_serde();
  store.value_serde = wrapper;
  store.caching = false;
  store.timestamped = true;
  graph.add_store({names.store, store, ""});
  Node receive =
      add_processor(source, "", names.receive,
                    factory_of<SubscriptionReceiveProcessor>(spec, names.store), {names.store});
  Node join =
      add_processor(receive, "", names.join_foreign,
                    factory_of<SubscriptionJoinProcessor>(right.lookup), right.lookup->stores);
  add_processor(right, "", names.foreign_join,
                factory_of<ForeignTableJoinProcessor>(spec, names.store), {names.store},
                kTableToStream);
  return join;
}

// The left table's side: answers in, checked and joined, the result table out.
Node response_side(const Node& left, const Node& answers, const FkJoinNames& names,
                   const SpecPtr& spec, const TableJoinedOptions& joined, ValueJoiner joiner,
                   StoreOptions store) {
  auto& graph = *left.graph;
  ErasedSerde wrapper = subscription_response_serde(spec->foreign_value);
  graph.add_internal_topic({names.response_topic, 0, left.source_topics});
  StreamPartitioner to_primary = [mine = joined.partitioner](
                                     const std::string& topic, const Datum& key, const Datum& value,
                                     int32_t partitions) -> std::optional<int32_t> {
    if (mine) return mine(topic, key, Datum(), partitions);
    return datum_cast<const SubscriptionResponse&>(value).primary_partition;
  };
  add_internal_sink(answers, names.response_sink, names.response_topic,
                    {spec->left_key, wrapper, to_primary, names.response_sink});
  graph.connect(names.foreign_join, names.response_sink);
  Node source = add_internal_source(left, names.response_source, names.response_topic,
                                    spec->left_key, wrapper);
  std::vector<std::string> topics = left.source_topics;
  topics.push_back(names.response_topic);
  graph.add_copartition_group(topics);

  Node resolved = add_processor(source, "", names.resolver,
                                factory_of<ResponseJoinProcessor>(spec, left.lookup, joiner),
                                left.lookup->stores);
  bool queryable = !store.name.empty();
  if (!queryable) store.name = graph.new_name("KTABLE-FK-JOIN-OUTPUT-STATE-STORE-");
  require_serde(store.key_serde, "key", "store " + store.name);
  require_serde(store.value_serde, "value", "store " + store.name);
  store.timestamped = true;
  graph.add_store({store.name, store, ""});
  Node out = ktable_source(resolved, "", names.result, store, queryable);
  out.source_topics = topics;
  out.window_grace_ms = -1;
  return out;
}

}  // namespace

Node foreign_key_join(const Node& left, const Node& right, KeyMapper extractor, ValueJoiner joiner,
                      bool left_join, TableJoinedOptions joined, StoreOptions store) {
  for (const Node* t : {&left, &right})
    if (!t->lookup)
      throw TopologyException("the table " + t->name +
                              " cannot be joined: its values cannot be read (a suppressed table)");
  require_serde(left.key_serde, "key", "a foreign-key join's left table");
  require_serde(left.value_serde, "value", "a foreign-key join's left table");
  require_serde(right.key_serde, "key", "a foreign-key join's right table");
  require_serde(right.value_serde, "value", "a foreign-key join's right table");
  auto& graph = *left.graph;
  FkJoinNames names = FkJoinNames::of(graph, joined.name);
  auto spec = std::make_shared<FkJoinSpec>();
  spec->left_key = left.key_serde;
  spec->left_value = left.value_serde;
  spec->foreign_key = right.key_serde;
  spec->foreign_value = right.value_serde;
  spec->subscription = subscription_serde(left.key_serde);
  spec->subscription_topic = names.subscription_topic;
  spec->left_join = left_join;
  // The sender needs the left row's old value to withdraw a subscription whose key moved. Kafka
  // asks the right table for its old values too, which materializes it: its store then forwards
  // no delete of a key it does not have, so such a delete answers no subscriber.
  if (left.send_old_values) left.send_old_values(true);
  if (right.send_old_values) right.send_old_values(true);

  Node send = add_processor(left, "", names.send,
                            factory_of<SubscriptionSendProcessor>(SpecPtr(spec), extractor), {},
                            kTableToStream);
  Node answers = subscription_side(send, right, names, spec, joined);
  return response_side(left, answers, names, spec, joined, std::move(joiner), std::move(store));
}

}  // namespace oxbow::streams::detail
