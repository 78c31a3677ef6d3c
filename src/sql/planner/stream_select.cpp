// A stream query's last steps, as ksqlDB orders them (LogicalPlanner: filter, PARTITION BY, table
// functions, projection): WHERE drops records; PARTITION BY keys each record by its expressions
// (or by nothing, PARTITION BY NULL) straight into the sink, with no repartition topic; EXPLODE
// and CUBE_EXPLODE make several rows of one; the projection makes each row's value. The input is
// a source's records or a join's rows (a join's rows are whole scope rows already).
#include "oxbow/streams/kstream.h"
#include "sql/planner/planner_internal.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql::planning {

namespace {

// WHERE, then the rows a table function makes (or the one row), each projected.
class RowSelection {
 public:
  RowSelection(std::shared_ptr<const SelectPlan> plan, bool rows_ready)
      : selector_(std::move(plan)), rows_ready_(rows_ready) {}

  // The record's row, or null when it has no value or WHERE drops it.
  const Row* accept(const Row& key, const Row& value, int64_t timestamp,
                    const std::optional<streams::RecordMetadata>& metadata) {
    if (value.empty()) return nullptr;
    return rows_ready_ ? selector_.accept(value) : selector_.input(key, value, timestamp, metadata);
  }
  Row key(const Row& row) { return selector_.key(row); }
  template <typename Emit>
  void each_value(const Row& row, Emit&& emit) {
    if (!selector_.has_table_functions()) return emit(selector_.value(row));
    for (const Row& expanded : selector_.expand(row)) emit(selector_.value(expanded));
  }

 private:
  Selector selector_;
  bool rows_ready_;
};

// A processor of `Base` (a Streams processor type) that selects rows as `RowSelection` does.
template <class Base>
class Selecting : public Base {
 public:
  Selecting(std::shared_ptr<const SelectPlan> plan, bool rows_ready)
      : selection_(std::move(plan), rows_ready) {}
  void init(typename Base::Context& context) override { context_ = &context; }

 protected:
  template <class Record>
  const Row* accept(const Record& r) {
    return selection_.accept(r.key(), r.value(), r.timestamp(), context_->recordMetadata());
  }
  RowSelection selection_;
  typename Base::Context* context_ = nullptr;
};

// No PARTITION BY: the record keeps its key.
class KeepKey : public Selecting<streams::api::FixedKeyProcessor<Row, Row, Row>> {
 public:
  using Selecting::Selecting;
  void process(const streams::api::FixedKeyRecord<Row, Row>& r) override {
    if (const Row* row = accept(r))
      selection_.each_value(*row,
                            [&](Row value) { context_->forward(r.withValue(std::move(value))); });
  }
};

// PARTITION BY: the key made from the row, before a table function expands it.
class NewKey : public Selecting<streams::api::Processor<Row, Row, Row, Row>> {
 public:
  using Selecting::Selecting;
  void process(const streams::api::Record<Row, Row>& r) override {
    const Row* row = accept(r);
    if (!row) return;
    Row key = selection_.key(*row);
    selection_.each_value(*row, [&](Row value) {
      context_->forward(
          streams::api::Record<Row, Row>(key, std::move(value), r.timestamp(), r.headers()));
    });
  }
};

// PARTITION BY NULL: no key at all.
class NoKey : public Selecting<streams::api::Processor<Row, Row, streams::Void, Row>> {
 public:
  using Selecting::Selecting;
  void process(const streams::api::Record<Row, Row>& r) override {
    if (const Row* row = accept(r))
      selection_.each_value(*row, [&](Row value) {
        context_->forward(streams::api::Record<streams::Void, Row>(
            streams::Void{}, std::move(value), r.timestamp(), r.headers()));
      });
  }
};

}  // namespace

void select_onto(const streams::KStream<Row, Row>& input, const BoundQuery& q,
                 const PlanShape& shape, const Output& out, std::shared_ptr<QueryCounters> counters,
                 bool rows_ready) {
  const DataSource& sink = out.sink;
  std::vector<int> row_index = input_row_index(q, shape);
  auto plan = std::make_shared<SelectPlan>();
  plan->counters = std::move(counters);
  plan->layout = row_layout(q, shape, *q.from, q.from_alias, windowed_source(q));
  if (q.where) plan->where = Program::compile(*q.where, row_index);
  // As ksqlDB's selectKey: PARTITION BY the key the rows have changes nothing (a windowed key
  // keeps its window); any other key for windowed records is refused.
  bool rekey = shape.partition_by && !q.partition_by_null;
  if ((rekey || q.partition_by_null) && q.from->window) refuse_windowed_repartition();
  auto table_calls = plan_table_functions(q, row_index, *plan);
  for (const auto& c : q.columns) {
    if (c.key) {  // the sink's key columns, in its order: PARTITION BY's expressions
      if (rekey) plan->keys.push_back(Program::compile(*c.expr, row_index));
      continue;
    }
    plan->values.push_back(Program::compile(*c.expr, row_index, table_calls));
    plan->value_names.push_back(c.name);
  }
  std::shared_ptr<const SelectPlan> shared = plan;
  if (q.partition_by_null) {
    end_query(
        input.process([shared, rows_ready] { return std::make_unique<NoKey>(shared, rows_ready); },
                      {}, streams::Named::as("PartitionBy-SelectKey")),
        out, streams::serdes::VoidSerde(), plan->counters);
    return;
  }
  if (!rekey)
    end_query(input.processValues(
                  [shared, rows_ready] { return std::make_unique<KeepKey>(shared, rows_ready); },
                  {}, streams::Named::as("Project")),
              out, source_key_serde(sink), plan->counters);
  else
    end_query(
        input.process([shared, rows_ready] { return std::make_unique<NewKey>(shared, rows_ready); },
                      {}, streams::Named::as("PartitionBy-SelectKey")),
        out, source_key_serde(sink), plan->counters);
}

}  // namespace oxbow::sql::planning
