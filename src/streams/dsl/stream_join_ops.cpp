// Windowed joins of two streams (Kafka's KStreamKStreamJoin, 3.1 on: no spurious left/outer
// results). Per side, a KSTREAM-WINDOWED node keeps the side's records in a window store and a
// join node looks each record up in the other side's store; a KSTREAM-MERGE node joins the two
// outputs.
//
// Stores, in Kafka's layouts so their changelogs read as Kafka's:
//  - each side's window store: keys as state/window_key.h (key bytes, record time, sequence
//    number, so that duplicates are kept); values the record's value bytes. Retention is
//    before + after + grace.
//  - left and outer joins share an outer store of the records that found no partner yet. Key: the
//    record time (8 bytes big-endian), the side (1 byte: 1 left, 0 right), the key bytes, so that
//    it iterates by time. Value (Oxbow's own): the values of the records with that key, side and
//    time, each as a 4-byte big-endian length and the bytes.
//
// Semantics: the join's stream time is the latest record time either side has seen. A record at t
// of the left side joins right records with times in [t - before, t + after] (the right side: in
// [t - after, t + before]), each result at the later of the two times. A left/outer record that
// found nothing waits in the outer store, or, if its window already ended before stream time, is
// emitted at once joined with null; a later partner removes it. Whenever a record that does not
// lie behind stream time arrives, waiting records whose time plus the processing side's "after"
// plus grace lies before stream time are emitted joined with null, in outer-store order. Kafka
// throttles that emission to once per second of wall-clock time (an internal setting); here it
// runs on every such record, so results do not depend on the wall clock.
#include <limits>
#include <mutex>
#include <random>

#include "streams/dsl/dsl_internal.h"
#include "streams/state/window_key.h"

namespace oxbow::streams::detail {

namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

std::string outer_key(int64_t time, bool left, const std::string& key) {
  std::string out;
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>(static_cast<uint64_t>(time) >> shift));
  out.push_back(left ? 1 : 0);
  out += key;
  return out;
}

int64_t outer_time(const std::string& key) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(key[i]);
  return static_cast<int64_t>(v);
}

std::vector<std::string> outer_values(const std::string& bytes) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos + 4 <= bytes.size()) {
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<unsigned char>(bytes[pos + i]);
    pos += 4;
    if (pos + n > bytes.size()) throw StreamsException("a corrupt outer-join store entry");
    out.push_back(bytes.substr(pos, n));
    pos += n;
  }
  return out;
}

// What both join nodes of one task share: the join's stream time, and the earliest time in the
// outer store (kUnknown: look; kMax: empty), which spares a scan when nothing can be due.
struct JoinTimes {
  static constexpr int64_t kUnknown = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t stream_time = -1;
  int64_t outer_min = kUnknown;
};
struct SharedTimes {
  std::mutex mutex;
  std::map<const ProcessorContext*, std::shared_ptr<JoinTimes>> by_task;
  std::shared_ptr<JoinTimes> of(const ProcessorContext* task) {
    std::lock_guard lock(mutex);
    auto& slot = by_task[task];
    if (!slot) slot = std::make_shared<JoinTimes>();
    return slot;
  }
  void release(const ProcessorContext* task) {
    std::lock_guard lock(mutex);
    by_task.erase(task);
  }
};

// The latest time each window store was written (Kafka's observed stream time of a store): its
// records older than that minus retention are no longer returned.
struct ObservedTimes {
  std::mutex mutex;
  std::map<std::pair<const ProcessorContext*, std::string>, int64_t> by_store;
  int64_t& of(const ProcessorContext* task, const std::string& store) {
    std::lock_guard lock(mutex);
    return by_store.try_emplace({task, store}, -1).first->second;
  }
  void release(const ProcessorContext* task, const std::string& store) {
    std::lock_guard lock(mutex);
    by_store.erase({task, store});
  }
};

// KSTREAM-WINDOWED: the record goes on to the join node, then into its side's window store.
class JoinWindowProcessor : public Processor {
 public:
  JoinWindowProcessor(std::string store, ErasedSerde key_serde, ErasedSerde value_serde,
                      std::shared_ptr<ObservedTimes> observed)
      : store_name_(std::move(store)),
        key_serde_(std::move(key_serde)),
        value_serde_(std::move(value_serde)),
        observed_(std::move(observed)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    store_ = &context.store(store_name_);
    observed_time_ = &observed_->of(&context, store_name_);
    seqnum_ = std::random_device{}() & 0x3fffffff;  // apart from what a previous run wrote
  }
  void close() override { observed_->release(&context(), store_name_); }
  void process(const Record& r) override {
    auto& ctx = context();
    ctx.forward(r);
    if (!r.key.has_value() || !r.value.has_value()) return;
    *observed_time_ = std::max(*observed_time_, r.timestamp);
    seqnum_ = (seqnum_ + 1) & 0x7fffffff;
    store_->put(window_store_key(key_serde_.serialize(store_name_, r.key), r.timestamp, seqnum_),
                value_serde_.serialize(store_name_, r.value), ctx.record_context());
  }

 private:
  std::string store_name_;
  ErasedSerde key_serde_, value_serde_;
  std::shared_ptr<ObservedTimes> observed_;
  KeyValueStore* store_ = nullptr;
  int64_t* observed_time_ = nullptr;
  uint32_t seqnum_ = 0;
};

struct JoinSide {
  bool left = true;
  bool emits_unmatched = false;  // the left side of a left join, both sides of an outer join
  int64_t before = 0, after = 0, grace = 0, retention = 0;  // before/after as this side sees them
  std::string other_store, outer_store;                     // outer_store empty: inner join
  ErasedSerde key_serde, value_serde, other_value_serde;
};

class StreamJoinProcessor : public Processor {
 public:
  StreamJoinProcessor(JoinSide side, ValueJoiner joiner, std::shared_ptr<SharedTimes> times,
                      std::shared_ptr<ObservedTimes> observed)
      : side_(std::move(side)),
        joiner_(std::move(joiner)),
        times_(std::move(times)),
        observed_(std::move(observed)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    other_ = &context.store(side_.other_store);
    if (!side_.outer_store.empty()) outer_ = &context.store(side_.outer_store);
    times_of_task_ = times_->of(&context);
    other_observed_ = &observed_->of(&context, side_.other_store);
  }
  void close() override { times_->release(&context()); }

  void process(const Record& r) override {
    auto& ctx = context();
    int64_t t = r.timestamp;
    JoinTimes& times = *times_of_task_;
    times.stream_time = std::max(times.stream_time, t);
    if (side_.emits_unmatched && !r.key.has_value() && r.value.has_value())
      return forward_joined(r.key, r.value, Datum(), t, r.headers);  // KIP-962
    if (!r.key.has_value() || !r.value.has_value()) {
      ctx.record_dropped("null key or value in a stream-stream join");
      return;
    }
    if (outer_ && t == times.stream_time) emit_unmatched(r.headers);
    std::string key = side_.key_serde.serialize(side_.other_store, r.key);
    int64_t from = std::max<int64_t>(0, t - side_.before),
            to = std::max<int64_t>(0, t + side_.after);
    from = std::max(from, *other_observed_ - side_.retention + 1);  // expired records are gone
    bool matched = false;
    if (from <= to) {
      for (const auto& [stored_key, value] :
           other_->range(window_store_key(key, from, 0), window_store_key(key, to, 0xffffffffu))) {
        if (stored_key.size() != key.size() + kWindowKeySuffix) continue;  // another key's
        int64_t other_time = window_store_start(stored_key);
        matched = true;
        if (outer_)
          outer_->put(outer_key(other_time, !side_.left, key), std::nullopt, ctx.record_context());
        Datum other = side_.other_value_serde.deserialize(side_.other_store, value);
        forward_joined(r.key, r.value, other, std::max(t, other_time), r.headers);
      }
    }
    if (matched || !side_.emits_unmatched) return;
    if (!outer_ || to < times.stream_time)
      return forward_joined(r.key, r.value, Datum(), t, r.headers);
    if (times.outer_min != JoinTimes::kUnknown) times.outer_min = std::min(times.outer_min, t);
    std::string okey = outer_key(t, side_.left, key);
    std::string list = outer_->get(okey).value_or("");
    std::string value = side_.value_serde.serialize(side_.outer_store, r.value);
    put_u32(list, static_cast<uint32_t>(value.size()));
    list += value;
    outer_->put(okey, list, ctx.record_context());
  }

 private:
  // `mine` is this side's value; the joiner takes the left side's first.
  void forward_joined(const Datum& key, const Datum& mine, const Datum& other, int64_t time,
                      const Headers& headers) {
    Datum joined = side_.left ? joiner_(key, mine, other) : joiner_(key, other, mine);
    context().forward(Record{key, std::move(joined), time, headers});
  }

  // Unmatched records whose window closed, oldest first, each joined with null.
  void emit_unmatched(const Headers& headers) {
    auto& ctx = context();
    JoinTimes& times = *times_of_task_;
    auto due = [&](int64_t time) { return time + side_.after + side_.grace < times.stream_time; };
    if (times.outer_min == JoinTimes::kMax ||
        (times.outer_min != JoinTimes::kUnknown && !due(times.outer_min)))
      return;
    times.outer_min = JoinTimes::kMax;
    std::vector<std::string> emitted;
    for (const auto& [okey, list] : outer_->all()) {
      int64_t time = outer_time(okey);
      if (!due(time)) {
        times.outer_min = time;
        break;
      }
      bool left = okey[8] == 1;
      Datum key = side_.key_serde.deserialize(side_.outer_store, std::string_view(okey).substr(9));
      const ErasedSerde& serde = left == side_.left ? side_.value_serde : side_.other_value_serde;
      for (const auto& bytes : outer_values(list)) {
        Datum value = serde.deserialize(side_.outer_store, bytes);
        Datum joined = left ? joiner_(key, value, Datum()) : joiner_(key, Datum(), value);
        ctx.forward(Record{key, std::move(joined), time, headers});
      }
      emitted.push_back(okey);
    }
    for (const auto& okey : emitted) outer_->put(okey, std::nullopt, ctx.record_context());
  }

  JoinSide side_;
  ValueJoiner joiner_;
  std::shared_ptr<SharedTimes> times_;
  std::shared_ptr<ObservedTimes> observed_;
  KeyValueStore* other_ = nullptr;
  KeyValueStore* outer_ = nullptr;
  std::shared_ptr<JoinTimes> times_of_task_;
  int64_t* other_observed_ = nullptr;
};

std::string index_of_name(const std::string& generated, const std::string& prefix) {
  return generated.substr(prefix.size());
}

}  // namespace

Node stream_stream_join(const Node& left_in, const Node& right_in, ValueJoiner joiner,
                        StreamJoinKind kind, const JoinWindows& windows,
                        StreamJoinedOptions options) {
  auto& graph = *left_in.graph;
  ErasedSerde key_serde = options.key_serde ? options.key_serde : left_in.key_serde;
  ErasedSerde left_serde = options.value_serde ? options.value_serde : left_in.value_serde;
  ErasedSerde right_serde =
      options.other_value_serde ? options.other_value_serde : right_in.value_serde;
  require_serde(key_serde, "key", "a stream-stream join");
  require_serde(left_serde, "value", "a stream-stream join");
  require_serde(right_serde, "other value", "a stream-stream join");
  // Re-keyed sides are repartitioned first, as Kafka does (<name>-left/right-repartition).
  Node left = left_in, right = right_in;
  std::string base = options.name.empty() ? left_in.name : options.name;
  if (left.repartition_required)
    left = through_repartition_topic(left, base + "-left", key_serde, left_serde, 0, {});
  if (right.repartition_required)
    right = through_repartition_topic(right, base + "-right", key_serde, right_serde, 0, {});
  std::vector<std::string> topics = left.source_topics;
  topics.insert(topics.end(), right.source_topics.begin(), right.source_topics.end());
  graph.add_copartition_group(topics);

  // Kafka's names: the windowed nodes, then the join nodes' generated names (drawn even when
  // named), then the merge.
  const std::string& name = options.name;
  std::string this_windowed =
      name.empty() ? graph.new_name("KSTREAM-WINDOWED-") : name + "-this-windowed";
  std::string other_windowed =
      name.empty() ? graph.new_name("KSTREAM-WINDOWED-") : name + "-other-windowed";
  std::string this_prefix =
      kind == StreamJoinKind::kOuter ? "KSTREAM-OUTERTHIS-" : "KSTREAM-JOINTHIS-";
  std::string other_prefix =
      kind == StreamJoinKind::kInner ? "KSTREAM-JOINOTHER-" : "KSTREAM-OUTEROTHER-";
  std::string this_generated = graph.new_name(this_prefix);
  std::string other_generated = graph.new_name(other_prefix);
  std::string this_join = name.empty() ? this_generated : name + "-this-join";
  std::string other_join = name.empty() ? other_generated : name + "-other-join";
  std::string merge = name.empty() ? graph.new_name("KSTREAM-MERGE-") : name + "-merge";
  const std::string& store_base = options.store_name;
  std::string this_store =
      store_base.empty() ? this_generated + "-store" : store_base + "-this-join-store";
  std::string other_store =
      store_base.empty() ? other_generated + "-store" : store_base + "-other-join-store";
  std::string outer_store;
  if (kind != StreamJoinKind::kInner)
    outer_store = store_base.empty() ? "KSTREAM-OUTERSHARED-" +
                                           index_of_name(this_generated, this_prefix) + "-store"
                                     : store_base + "-outer-shared-join-store";

  int64_t retention = windows.size() + windows.gracePeriodMs();
  auto window_store = [&](const std::string& store_name, const ErasedSerde& value_serde) {
    StoreOptions store;
    store.name = store_name;
    store.key_serde = key_serde;
    store.value_serde = value_serde;
    store.caching = false;
    store.logging = options.logging;
    store.retention_ms = std::max<int64_t>(retention, 1);
    graph.add_store({store_name, store, ""});
  };
  window_store(this_store, left_serde);
  window_store(other_store, right_serde);
  if (!outer_store.empty()) {
    StoreOptions store;
    store.name = outer_store;
    store.caching = false;
    store.logging = options.logging;
    graph.add_store({outer_store, store, ""});
  }

  auto observed = std::make_shared<ObservedTimes>();
  auto times = std::make_shared<SharedTimes>();
  auto windowed = [&](const Node& in, const std::string& node_name, const std::string& store,
                      const ErasedSerde& value_serde) {
    return add_processor(in, "", node_name, ProcessorFactory([=] {
                           return std::make_unique<JoinWindowProcessor>(store, key_serde,
                                                                        value_serde, observed);
                         }),
                         {store});
  };
  Node left_windowed = windowed(left, this_windowed, this_store, left_serde);
  Node right_windowed = windowed(right, other_windowed, other_store, right_serde);

  auto join_node = [&](const Node& in, const std::string& node_name, JoinSide side) {
    std::vector<std::string> stores{side.other_store};
    if (!side.outer_store.empty()) stores.push_back(side.outer_store);
    return add_processor(in, "", node_name, ProcessorFactory([=] {
                           return std::make_unique<StreamJoinProcessor>(side, joiner, times,
                                                                        observed);
                         }),
                         stores);
  };
  JoinSide this_side{true,
                     kind != StreamJoinKind::kInner,
                     windows.beforeMs(),
                     windows.afterMs(),
                     windows.gracePeriodMs(),
                     retention,
                     other_store,
                     outer_store,
                     key_serde,
                     left_serde,
                     right_serde};
  JoinSide other_side{false,
                      kind == StreamJoinKind::kOuter,
                      windows.afterMs(),
                      windows.beforeMs(),
                      windows.gracePeriodMs(),
                      retention,
                      this_store,
                      outer_store,
                      key_serde,
                      right_serde,
                      left_serde};
  Node this_node = join_node(left_windowed, this_join, this_side);
  Node other_node = join_node(right_windowed, other_join, other_side);

  NodeSpec spec;
  spec.name = graph.name_or_new(merge, "KSTREAM-MERGE-");
  spec.parents = {this_node.name, other_node.name};
  spec.factory = function_processor([](ProcessorContext& c, const Record& r) { c.forward(r); });
  Node out = this_node;
  out.name = graph.add_node(std::move(spec)).name;
  out.source_topics = topics;
  out.key_serde = key_serde;
  out.value_serde = {};
  out.repartition_required = false;
  return out;
}

}  // namespace oxbow::streams::detail
