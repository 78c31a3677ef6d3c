// GROUP BY over a stream, windowed or not, onto Streams' DSL as ksqlDB lays it out: a step that
// filters each record (WHERE), keys it by its grouping expressions and keeps the aggregates'
// arguments; groupByKey (through the repartition topic Aggregate-GroupBy-repartition); aggregate
// into the store Aggregate-Aggregate-Materialize, whose rows are the aggregates' states; then a
// step that makes the result's value from the key and the states (HAVING, the projection).
#include <map>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/suppressed.h"
#include "oxbow/streams/windowed_kstream.h"
#include "sql/binder/sql_error.h"
#include "sql/execution/aggregates.h"
#include "sql/planner/planner_internal.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql::planning {

namespace {

using streams::Windowed;

struct AggregatePlan {
  RowLayout layout;         // of the source's rows
  bool rows_ready = false;  // the input's values are whole scope rows (a join's)
  std::optional<Program> where;
  std::vector<Program> group;  // the grouping expressions
  std::vector<Program> args;   // every aggregate call's arguments, in order
  std::vector<AggregateCall> calls;
  size_t state_width = 0;
  // After the aggregation, over [group values..., WINDOWSTART, WINDOWEND, call results...].
  std::optional<Program> having;
  std::vector<Program> values;
  std::vector<std::string> value_names;
  std::shared_ptr<QueryCounters> counters;
};

void find_calls(const BoundExpr& e, std::vector<const BoundExpr*>& out) {
  if (e.aggregate) {
    for (const BoundExpr* seen : out)
      if (format(*seen->parsed) == format(*e.parsed)) return;
    out.push_back(&e);
    return;
  }
  for (const auto& a : e.args) find_calls(*a, out);
}

// The states of `plan`'s calls before any row, and after one more row's arguments go through
// `step` (accumulate, retract or merge_aggregate).
Row initial_state(const AggregatePlan& plan) {
  Row state(plan.state_width);
  for (const auto& call : plan.calls) init_aggregate(call, state);
  return state;
}

Row stepped(const AggregatePlan& plan, const Row& current, const Row& args,
            void (*step)(const AggregateCall&, const Row&, Row&)) {
  Row state = current;
  for (const auto& call : plan.calls) step(call, args, state);
  return state;
}

// A record's grouping and the aggregates' arguments, or nothing when WHERE drops it or its
// grouping is NULL (ksqlDB drops those).
class Grouper {
 public:
  explicit Grouper(std::shared_ptr<const AggregatePlan> plan)
      : plan_(std::move(plan)), input_(plan_->layout) {
    if (plan_->where) where_ = plan_->where->new_frame();
    for (const auto& p : plan_->group) group_frames_.push_back(p.new_frame());
    for (const auto& p : plan_->args) arg_frames_.push_back(p.new_frame());
  }
  // False when the record is left out; else `key` (when asked for) and `args` are set.
  bool group(const Row& key_in, const Row& value, int64_t timestamp,
             const std::optional<streams::RecordMetadata>& metadata, Row* key, Row& args) {
    if (value.empty()) return false;
    const Row& row = plan_->rows_ready ? value : input_.fill(key_in, value, timestamp, metadata);
    if (plan_->where) {
      const Value& keep = plan_->where->evaluate(row, where_);
      if (!where_.error.empty()) report_error(*plan_->counters, where_.error, "WHERE");
      if (keep.is_null() || !keep.boolean()) return false;
    }
    if (key) key->resize(plan_->group.size());
    for (size_t k = 0; k < plan_->group.size(); ++k) {
      const Value& v = plan_->group[k].evaluate(row, group_frames_[k]);
      if (v.is_null()) return false;
      if (key) (*key)[k] = v;
    }
    args.resize(plan_->args.size());
    for (size_t k = 0; k < plan_->args.size(); ++k)
      args[k] = plan_->args[k].evaluate(row, arg_frames_[k]);
    return true;
  }

 private:
  std::shared_ptr<const AggregatePlan> plan_;
  InputRow input_;
  Frame where_;
  std::vector<Frame> group_frames_, arg_frames_;
};

// Records keyed by their grouping expressions, with the aggregates' arguments as the value.
class GroupProcessor : public streams::api::Processor<Row, Row, Row, Row> {
 public:
  explicit GroupProcessor(std::shared_ptr<const AggregatePlan> plan) : grouper_(std::move(plan)) {}
  void init(Context& context) override { context_ = &context; }
  void process(const streams::api::Record<Row, Row>& record) override {
    Row key, args;
    if (grouper_.group(record.key(), record.value(), record.timestamp(), context_->recordMetadata(),
                       &key, args))
      context_->forward(streams::api::Record<Row, Row>(std::move(key), std::move(args),
                                                       record.timestamp(), record.headers()));
  }

 private:
  Grouper grouper_;
  Context* context_ = nullptr;
};

// Grouped by exactly the source's key: the key stays, and so does the partitioning.
class GroupByKeyProcessor : public streams::api::FixedKeyProcessor<Row, Row, Row> {
 public:
  explicit GroupByKeyProcessor(std::shared_ptr<const AggregatePlan> plan)
      : grouper_(std::move(plan)) {}
  void init(Context& context) override { context_ = &context; }
  void process(const streams::api::FixedKeyRecord<Row, Row>& record) override {
    Row args;
    if (grouper_.group(record.key(), record.value(), record.timestamp(), context_->recordMetadata(),
                       nullptr, args))
      context_->forward(record.withValue(std::move(args)));
  }

 private:
  Grouper grouper_;
  Context* context_ = nullptr;
};

// A table row's grouping followed by its aggregates' arguments, or an empty row when WHERE drops
// it or its grouping is NULL (the filter after it then takes it out of its group).
class TableGrouper : public streams::api::ValueTransformerWithKey<Row, Row, Row> {
 public:
  explicit TableGrouper(std::shared_ptr<const AggregatePlan> plan) : grouper_(std::move(plan)) {}
  void init(streams::api::TransformerContext& context) override { context_ = &context; }
  Row transform(const Row& key, const Row& value) override {
    Row group, args;
    if (!grouper_.group(key, value, context_->timestamp(), context_->recordMetadata(), &group,
                        args))
      return Row();
    group.insert(group.end(), args.begin(), args.end());
    return group;
  }

 private:
  Grouper grouper_;
  streams::api::TransformerContext* context_ = nullptr;
};

// The result's value from the grouping, the window (null: none) and the aggregates' states: the
// projection step's and a pull query's (AggregateResults). An empty row when HAVING rejects it.
class ResultMaker {
 public:
  explicit ResultMaker(std::shared_ptr<const AggregatePlan> plan) : plan_(std::move(plan)) {
    if (plan_->having) having_ = plan_->having->new_frame();
    for (const auto& p : plan_->values) frames_.push_back(p.new_frame());
    row_.resize(plan_->group.size() + 2 + plan_->calls.size());
  }
  Row make(const Row& key, const streams::Window* window, const Row& states) {
    const size_t groups = plan_->group.size();
    if (window) {
      row_[groups].set_bigint(window->start);
      row_[groups + 1].set_bigint(window->end);
    } else {
      row_[groups].set_null();
      row_[groups + 1].set_null();
    }
    for (size_t k = 0; k < groups && k < key.size(); ++k) row_[k] = key[k];
    for (size_t k = 0; k < plan_->calls.size(); ++k)
      aggregate_result(plan_->calls[k], states, row_[groups + 2 + k]);
    if (plan_->having) {
      const Value& keep = plan_->having->evaluate(row_, having_);
      if (!having_.error.empty()) report_error(*plan_->counters, having_.error, "HAVING");
      if (keep.is_null() || !keep.boolean()) return Row();
    }
    Row out(plan_->values.size());
    for (size_t k = 0; k < plan_->values.size(); ++k) {
      out[k] = plan_->values[k].evaluate(row_, frames_[k]);
      if (!frames_[k].error.empty())
        report_error(*plan_->counters, frames_[k].error, plan_->value_names[k]);
    }
    return table_row(std::move(out));
  }

 private:
  std::shared_ptr<const AggregatePlan> plan_;
  Frame having_;
  std::vector<Frame> frames_;
  Row row_;
};

// The result step: `K` is Row, or Windowed<Row>. A row HAVING rejects is empty: the filter after
// it turns it into a tombstone, as ksqlDB deletes a group that stops matching.
template <class K>
class ResultTransformer : public streams::api::ValueTransformerWithKey<K, Row, Row> {
 public:
  explicit ResultTransformer(std::shared_ptr<const AggregatePlan> plan) : maker_(std::move(plan)) {}
  Row transform(const K& grouping, const Row& states) override {
    if constexpr (std::is_same_v<K, Row>)
      return maker_.make(grouping, nullptr, states);
    else
      return maker_.make(grouping.key, &grouping.window, states);
  }

 private:
  ResultMaker maker_;
};

// The aggregation's table through the result step (and, with HAVING, the filter that deletes).
template <class K>
streams::KTable<K, Row> result_of(const streams::KTable<K, Row>& aggregated,
                                  std::shared_ptr<const AggregatePlan> plan) {
  bool having = plan->having.has_value();
  auto table =
      aggregated.transformValues([plan] { return std::make_unique<ResultTransformer<K>>(plan); },
                                 streams::Named::as("Aggregate-Project"));
  if (!having) return table;
  return table.filter([](const K&, const Row& row) { return !row.empty(); },
                      streams::Named::as("Aggregate-Having"));
}

// ksqlDB's default grace: 24 hours less the window's size, and no less than 0.
std::chrono::milliseconds grace_of(const parser::WindowClause& w) {
  if (w.grace_ms) return std::chrono::milliseconds(*w.grace_ms);
  return std::chrono::milliseconds(std::max<int64_t>(86'400'000 - w.size_ms, 0));
}

// The compiled parts of an aggregation: WHERE, the grouping, the aggregates' arguments and
// states, then HAVING and the projection over the grouping and the results.
std::shared_ptr<AggregatePlan> make_plan(const BoundQuery& q, const PlanShape& shape,
                                         std::shared_ptr<QueryCounters> counters, bool rows_ready) {
  auto plan = std::make_shared<AggregatePlan>();
  plan->rows_ready = rows_ready;
  plan->counters = std::move(counters);
  plan->layout = row_layout(q, shape, *q.from, q.from_alias, windowed_source(q));
  std::vector<int> row_index = input_row_index(q, shape);
  if (q.where) plan->where = Program::compile(*q.where, row_index);
  for (const auto& g : q.group_by) plan->group.push_back(Program::compile(*g, row_index));

  std::vector<const BoundExpr*> calls;
  for (const auto& c : q.columns) find_calls(*c.expr, calls);
  if (q.having) find_calls(*q.having, calls);
  for (const BoundExpr* call : calls) {
    AggregateCall a;
    a.function = call->op;
    a.result = call->type;
    for (const auto& arg : call->args) {
      a.args.push_back(arg->type);
      plan->args.push_back(Program::compile(*arg, row_index));
    }
    plan->calls.push_back(std::move(a));
  }
  std::vector<Column> state = layout_aggregates(plan->calls);
  plan->state_width = state.size();

  // After the aggregation: grouping expressions and calls by their text, window bounds by name.
  std::map<std::string, int> slots;
  for (size_t k = 0; k < q.group_by.size(); ++k)
    slots[format(*q.group_by[k]->parsed)] = static_cast<int>(k);
  for (size_t k = 0; k < calls.size(); ++k)
    slots[format(*calls[k]->parsed)] = static_cast<int>(q.group_by.size() + 2 + k);
  const Scope& scope = q.scope;
  auto substitute = [&](const BoundExpr& e) {
    if (e.kind == BoundKind::kColumn) {
      const ScopeColumn& c = scope.columns[static_cast<size_t>(e.column)];
      if (c.pseudo && c.name == "WINDOWSTART") return static_cast<int>(q.group_by.size());
      if (c.pseudo && c.name == "WINDOWEND") return static_cast<int>(q.group_by.size() + 1);
    }
    auto it = slots.find(format(*e.parsed));
    return it == slots.end() ? -1 : it->second;
  };
  std::vector<int> none(scope.columns.size(), -1);
  if (q.having) plan->having = Program::compile(*q.having, none, substitute);
  for (const auto& c : q.columns) {
    if (c.key) continue;
    plan->values.push_back(Program::compile(*c.expr, none, substitute));
    plan->value_names.push_back(c.name);
  }

  return plan;
}

}  // namespace

streams::Topology plan_aggregate(const BoundQuery& q, const PlanShape& shape, const Output& out,
                                 std::shared_ptr<QueryCounters> counters) {
  const DataSource& source = *q.from;
  streams::StreamsBuilder builder;
  auto input = builder.stream<Row, Row>(source.topic, consumed_from(source, counters));
  aggregate_onto(input, q, shape, out, std::move(counters), false);
  return builder.build();
}

streams::Topology plan_table_aggregate(const BoundQuery& q, const PlanShape& shape,
                                       const Output& out, std::shared_ptr<QueryCounters> counters) {
  const DataSource& source = *q.from;
  streams::StreamsBuilder builder;
  auto table = builder.table<Row, Row>(source.topic, consumed_from(source, counters));
  table_aggregate_onto(table, q, shape, out, std::move(counters), false);
  return builder.build();
}

void table_aggregate_onto(const streams::KTable<Row, Row>& table, const BoundQuery& q,
                          const PlanShape& shape, const Output& out,
                          std::shared_ptr<QueryCounters> counters, bool rows_ready) {
  const DataSource& sink = out.sink;
  std::shared_ptr<AggregatePlan> plan = make_plan(q, shape, std::move(counters), rows_ready);
  for (const auto& call : plan->calls)
    if (!can_retract(call.function))
      throw SqlError("The aggregation function " + call.function +
                     " cannot be applied to a table source, only to a stream source.");
  std::shared_ptr<const AggregatePlan> shared = plan;
  auto key_serde = row_serde(sink.formats, key_columns(sink), true);
  size_t group_width = plan->group.size();
  auto grouped =
      table
          .transformValues([shared] { return std::make_unique<TableGrouper>(shared); },
                           streams::Named::as("Aggregate-Prepare"))
          .filter([](const Row&, const Row& row) { return !row.empty(); },
                  streams::Named::as("Aggregate-Prepare-Filter"))
          .groupBy(
              [group_width](const Row&, const Row& row) {
                auto split = row.begin() + static_cast<std::ptrdiff_t>(group_width);
                return streams::KeyValue<Row, Row>{Row(row.begin(), split), Row(split, row.end())};
              },
              streams::Grouped<Row, Row>::with(key_serde, internal_row_serde())
                  .withName("Aggregate-GroupBy"));
  auto initializer = [shared] { return initial_state(*shared); };
  auto adder = [shared](const Row&, const Row& args, const Row& current) {
    return stepped(*shared, current, args, accumulate);
  };
  auto subtractor = [shared](const Row&, const Row& args, const Row& current) {
    return stepped(*shared, current, args, retract);
  };
  end_query(result_of(grouped.aggregate<Row>(initializer, adder, subtractor,
                                             streams::Materialized<Row, Row>::as(kAggregateStore)
                                                 .withKeySerde(key_serde)
                                                 .withValueSerde(internal_row_serde())),
                      shared)
                .toStream(),
            out, key_serde, plan->counters);
}

void aggregate_onto(const streams::KStream<Row, Row>& input, const BoundQuery& q,
                    const PlanShape& shape, const Output& out,
                    std::shared_ptr<QueryCounters> counters, bool rows_ready) {
  std::shared_ptr<AggregatePlan> plan = make_plan(q, shape, std::move(counters), rows_ready);
  // Serdes: the grouping key as the sink's key; the arguments and states are the query's own.
  auto key_serde = row_serde(out.sink.formats, key_columns(out.sink), true);
  auto args_serde = internal_row_serde();
  auto state_serde = internal_row_serde();
  std::shared_ptr<const AggregatePlan> shared = plan;
  auto prepared =
      !rows_ready && shape.groups_by_key()
          ? input.processValues([shared] { return std::make_unique<GroupByKeyProcessor>(shared); },
                                {}, streams::Named::as("Aggregate-Prepare"))
          : input.process([shared] { return std::make_unique<GroupProcessor>(shared); }, {},
                          streams::Named::as("Aggregate-Prepare"));
  auto grouped = prepared.groupByKey(
      streams::Grouped<Row, Row>::with(key_serde, args_serde).withName("Aggregate-GroupBy"));
  auto initializer = [shared] { return initial_state(*shared); };
  auto aggregator = [shared](const Row&, const Row& args, const Row& current) {
    return stepped(*shared, current, args, accumulate);
  };
  const char* store = kAggregateStore;
  if (!q.window) {
    end_query(result_of(grouped.aggregate(initializer, aggregator,
                                          streams::Materialized<Row, Row>::as(store)
                                              .withKeySerde(key_serde)
                                              .withValueSerde(state_serde)),
                        shared)
                  .toStream(),
              out, key_serde, plan->counters);
    return;
  }
  const parser::WindowClause& w = *q.window;
  auto materialized =
      streams::Materialized<Row, Row>::as(store).withKeySerde(key_serde).withValueSerde(
          state_serde);
  if (w.retention_ms)
    materialized = materialized.withRetention(std::chrono::milliseconds(*w.retention_ms));
  // EMIT FINAL: one result per window, once it has closed (ksqlDB suppresses until then).
  bool final_only = q.emit == parser::EmitType::kFinal;
  auto finish = [&](auto table, streams::Serde<Windowed<Row>> windowed_key) {
    if (final_only)
      table = table.suppress(
          streams::Suppressed<Windowed<Row>>::untilWindowCloses(streams::BufferConfig::unbounded())
              .withName("Suppress"));
    end_query(result_of(table, shared).toStream(), out, windowed_key, plan->counters);
  };
  if (w.type == parser::WindowType::kSession) {
    auto windows = streams::SessionWindows::ofInactivityGapAndGrace(
        std::chrono::milliseconds(w.size_ms), grace_of(w));
    auto merger = [shared](const Row&, const Row& one, const Row& two) {
      return stepped(*shared, one, two, merge_aggregate);
    };
    finish(grouped.windowedBy(windows).aggregate(initializer, aggregator, merger, materialized),
           streams::serdes::SessionWindowed(key_serde));
  } else {
    auto windows =
        streams::TimeWindows::ofSizeAndGrace(std::chrono::milliseconds(w.size_ms), grace_of(w));
    if (w.type == parser::WindowType::kHopping)
      windows = windows.advanceBy(std::chrono::milliseconds(w.advance_ms));
    finish(grouped.windowedBy(windows).aggregate(initializer, aggregator, materialized),
           streams::serdes::TimeWindowed(key_serde, w.size_ms));
  }
}

}  // namespace oxbow::sql::planning

namespace oxbow::sql {

struct AggregateResults::Impl {
  explicit Impl(std::shared_ptr<const planning::AggregatePlan> plan) : maker(std::move(plan)) {}
  planning::ResultMaker maker;
};

AggregateResults::AggregateResults(const physical::Step& plan, const BoundQuery& query) {
  const planning::PlanShape shape = planning::shape_of(plan, query);
  impl_ = std::make_unique<Impl>(
      planning::make_plan(query, shape, std::make_shared<QueryCounters>(), shape.joined()));
}

AggregateResults::~AggregateResults() = default;

Row AggregateResults::value(const Row& key, const streams::Window* window, const Row& states) {
  return impl_->maker.make(key, window, states);
}

}  // namespace oxbow::sql
