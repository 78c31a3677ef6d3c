// Joins of two tables (Kafka's KTableKTableJoin, LeftJoin, OuterJoin): an update on either side
// looks up the other side's current value for the key and forwards the joined change. Both sides
// feed one merge node, which is the joined table (materialized when asked).
#include <algorithm>

#include "streams/dsl/dsl_internal.h"
#include "streams/dsl/table_forwarder.h"

namespace oxbow::streams::detail {

namespace {

// Whether the joined table forwards old values: off until something downstream asks (then both
// sides are asked too), as Kafka's KTableKTableAbstractJoin.
struct JoinOldValues {
  bool send = false;
};

class TableJoinSideProcessor : public TableProcessor {
 public:
  TableJoinSideProcessor(bool this_is_left, TableJoinKind kind,
                         std::shared_ptr<const TableLookup> other, ValueJoiner joiner,
                         std::shared_ptr<const JoinOldValues> old_values)
      : left_(this_is_left),
        kind_(kind),
        other_(std::move(other)),
        joiner_(std::move(joiner)),
        old_values_(std::move(old_values)) {}

  void process_change(const ChangeRecord& r) override {
    auto& ctx = context();
    if (!r.key.has_value()) {
      ctx.record_dropped("null key in a table-table join");
      return;
    }
    const Change& c = r.change;
    TableValue other = other_->get(ctx, r.key);
    bool have_other = other.value.has_value();
    bool send_old = old_values_->send;
    // Inner joins and a left join's right side need the other side's row (the latter calls the
    // joiner with a null right value); the others join on either side's row.
    bool requires_other =
        kind_ == TableJoinKind::kInner || (kind_ == TableJoinKind::kLeft && !left_);
    if (!have_other && requires_other) return;
    if (!have_other && !c.new_value.has_value() && !c.old_value.has_value()) return;
    auto join = [&](const Datum& mine) -> Datum {
      bool joins = kind_ == TableJoinKind::kOuter            ? mine.has_value() || have_other
                   : kind_ == TableJoinKind::kLeft && !left_ ? true
                                                             : mine.has_value();
      if (!joins) return Datum();
      return left_ ? joiner_(r.key, mine, other.value) : joiner_(r.key, other.value, mine);
    };
    Change out{join(c.new_value), send_old ? join(c.old_value) : Datum()};
    int64_t timestamp = have_other ? std::max(r.timestamp, other.timestamp) : r.timestamp;
    ctx.forward_change(ChangeRecord{Datum::lend(r.key), std::move(out), timestamp, r.headers});
  }

 private:
  bool left_;
  TableJoinKind kind_;
  std::shared_ptr<const TableLookup> other_;
  ValueJoiner joiner_;
  std::shared_ptr<const JoinOldValues> old_values_;
};

// KTABLE-MERGE: the joined table; with a store it keeps each result and forwards through it.
class JoinMergeProcessor : public TableProcessor {
 public:
  JoinMergeProcessor(std::string store, StoreOptions options)
      : store_name_(std::move(store)), options_(std::move(options)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    if (store_name_.empty()) return;
    store_ = &context.store(store_name_);
    forwarder_.init(context, store_name_, options_.key_serde, options_.value_serde);
  }
  void process_change(const ChangeRecord& r) override {
    auto& ctx = context();
    if (!store_) return ctx.forward_change(r);
    const Change& c = r.change;
    std::optional<std::string> bytes;
    if (c.new_value.has_value())
      bytes = with_timestamp(r.timestamp, options_.value_serde.serialize(store_name_, c.new_value));
    store_->put(options_.key_serde.serialize(store_name_, r.key), bytes,
                context_at(ctx, r.timestamp));
    forwarder_.maybe_forward(ctx, r);
  }

 private:
  std::string store_name_;
  StoreOptions options_;
  KeyValueStore* store_ = nullptr;
  TableForwarder forwarder_;
};

const char* prefix_of(TableJoinKind kind, bool this_side) {
  switch (kind) {
    case TableJoinKind::kInner:
      return this_side ? "KTABLE-JOINTHIS-" : "KTABLE-JOINOTHER-";
    case TableJoinKind::kLeft:
      return this_side ? "KTABLE-LEFTTHIS-" : "KTABLE-LEFTOTHER-";
    case TableJoinKind::kOuter:
      return this_side ? "KTABLE-OUTERTHIS-" : "KTABLE-OUTEROTHER-";
  }
  return "";
}

// The joined table's value for a key, from both sides' current values.
std::shared_ptr<const TableLookup> joined_lookup(const Node& left, const Node& right,
                                                 TableJoinKind kind, ValueJoiner joiner) {
  auto lookup = std::make_shared<TableLookup>();
  lookup->stores = left.lookup->stores;
  for (const auto& s : right.lookup->stores)
    if (std::find(lookup->stores.begin(), lookup->stores.end(), s) == lookup->stores.end())
      lookup->stores.push_back(s);
  lookup->get = [l = left.lookup, r = right.lookup, kind, joiner](ProcessorContext& context,
                                                                  const Datum& key) {
    TableValue a = l->get(context, key), b = r->get(context, key);
    bool has_a = a.value.has_value(), has_b = b.value.has_value();
    bool joins = kind == TableJoinKind::kInner  ? has_a && has_b
                 : kind == TableJoinKind::kLeft ? has_a
                                                : has_a || has_b;
    if (!joins) return TableValue{};
    return TableValue{joiner(key, a.value, b.value), std::max(a.timestamp, b.timestamp)};
  };
  return lookup;
}

}  // namespace

Node table_table_join(const Node& left, const Node& right, ValueJoiner joiner, TableJoinKind kind,
                      const std::string& name, StoreOptions store) {
  auto& graph = *left.graph;
  for (const Node* t : {&left, &right})
    if (!t->lookup)
      throw TopologyException("the table " + t->name +
                              " cannot be joined: its values cannot be read (a suppressed table)");
  std::string this_name =
      name.empty() ? graph.new_name(prefix_of(kind, true)) : name + "-join-this";
  std::string other_name =
      name.empty() ? graph.new_name(prefix_of(kind, false)) : name + "-join-other";
  std::string merge_name = graph.name_or_new(name, "KTABLE-MERGE-");
  std::vector<std::string> topics = left.source_topics;
  topics.insert(topics.end(), right.source_topics.begin(), right.source_topics.end());
  graph.add_copartition_group(topics);

  auto old_values = std::make_shared<JoinOldValues>();
  auto side = [&](const Node& in, const Node& other, bool is_left, const std::string& node_name) {
    ProcessorFactory factory = [is_left, kind, lookup = other.lookup, joiner, old_values] {
      return std::make_unique<TableJoinSideProcessor>(is_left, kind, lookup, joiner, old_values);
    };
    return add_processor(in, "", node_name, std::move(factory), other.lookup->stores,
                         kTableToTable);
  };
  Node this_side = side(left, right, true, this_name);
  Node other_side = side(right, left, false, other_name);

  std::string store_name = store.name;
  std::vector<std::string> stores;
  if (!store_name.empty()) {
    require_serde(store.key_serde, "key", "store " + store_name);
    require_serde(store.value_serde, "value", "store " + store_name);
    store.timestamped = true;
    graph.add_store({store_name, store, ""});
    stores.push_back(store_name);
  }
  NodeSpec spec;
  spec.name = merge_name;
  spec.parents = {this_side.name, other_side.name};
  spec.factory = [store_name, store] {
    return std::make_unique<JoinMergeProcessor>(store_name, store);
  };
  spec.stores = stores;
  spec.takes = spec.forwards = Flow::kChanges;
  Node out = this_side;
  out.name = graph.add_node(std::move(spec)).name;
  out.source_topics = topics;
  out.repartition_required = false;
  out.window_grace_ms = -1;
  out.store = store_name;
  out.lookup = store_name.empty() ? joined_lookup(left, right, kind, joiner)
                                  : store_lookup(store_name, store);
  Node left_parent = left, right_parent = right;
  out.send_old_values = [old_values, left_parent, right_parent](bool) {
    if (!old_values->send) {
      if (left_parent.send_old_values) left_parent.send_old_values(true);
      if (right_parent.send_old_values) right_parent.send_old_values(true);
      old_values->send = true;
    }
    return true;
  };
  // The join reads each side's old values to retract what it joined before.
  if (left.send_old_values) left.send_old_values(true);
  if (right.send_old_values) right.send_old_values(true);
  return out;
}

}  // namespace oxbow::streams::detail
