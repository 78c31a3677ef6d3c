#include "sql/planner/query_planner.h"

#include "sql/planner/planner_internal.h"

#include <spdlog/spdlog.h>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/processor.h"
#include "oxbow/streams/streams_builder.h"
#include "sql/binder/sql_error.h"
#include "sql/execution/program.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {

namespace {

// The compiled parts of a filter-and-project step, shared by its tasks' processors.
struct SelectPlan {
  std::optional<Program> where;
  std::vector<Program> values;  // the value columns of the result, in order
  std::vector<std::string> value_names;
  std::vector<Program> keys;              // PARTITION BY: the result's key columns, in order
  size_t key_count = 0, value_count = 0;  // of the source's row
  std::shared_ptr<QueryCounters> counters;
};

// One task's evaluation of a SelectPlan: WHERE, then the projection.
class Selector {
 public:
  explicit Selector(std::shared_ptr<const SelectPlan> plan)
      : plan_(std::move(plan)), input_(plan_->key_count, plan_->value_count) {
    if (plan_->where) where_ = plan_->where->new_frame();
    for (const auto& p : plan_->values) values_.push_back(p.new_frame());
    for (const auto& p : plan_->keys) keys_.push_back(p.new_frame());
  }
  // The record's row, or null when WHERE drops it.
  const Row* input(const Row& key, const Row& value, int64_t timestamp,
                   const std::optional<streams::RecordMetadata>& metadata) {
    if (value.empty()) return nullptr;  // a null value: nothing to select from
    const Row& row = input_.fill(key, value, timestamp, metadata);
    if (!plan_->where) return &row;
    const Value& keep = plan_->where->evaluate(row, where_);
    if (!where_.error.empty()) planning::report_error(*plan_->counters, where_.error, "WHERE");
    return keep.is_null() || !keep.boolean() ? nullptr : &row;
  }
  Row project(const Row& row, const std::vector<Program>& programs, std::vector<Frame>& frames) {
    Row out(programs.size());
    for (size_t k = 0; k < programs.size(); ++k) {
      out[k] = programs[k].evaluate(row, frames[k]);
      if (!frames[k].error.empty())
        planning::report_error(*plan_->counters, frames[k].error,
                               k < plan_->value_names.size() ? plan_->value_names[k] : "the key");
    }
    return out;
  }
  Row value(const Row& row) { return project(row, plan_->values, values_); }
  Row key(const Row& row) { return project(row, plan_->keys, keys_); }

 private:
  std::shared_ptr<const SelectPlan> plan_;
  planning::InputRow input_;
  Frame where_;
  std::vector<Frame> values_, keys_;
};

// The key kept.
class SelectProcessor : public streams::api::FixedKeyProcessor<Row, Row, Row> {
 public:
  explicit SelectProcessor(std::shared_ptr<const SelectPlan> plan) : selector_(std::move(plan)) {}
  void init(Context& context) override { context_ = &context; }
  void process(const streams::api::FixedKeyRecord<Row, Row>& record) override {
    const Row* row = selector_.input(record.key(), record.value(), record.timestamp(),
                                     context_->recordMetadata());
    if (row) context_->forward(record.withValue(selector_.value(*row)));
  }

 private:
  Selector selector_;
  Context* context_ = nullptr;
};

// PARTITION BY: the key made from the row.
class RekeyProcessor : public streams::api::Processor<Row, Row, Row, Row> {
 public:
  explicit RekeyProcessor(std::shared_ptr<const SelectPlan> plan) : selector_(std::move(plan)) {}
  void init(Context& context) override { context_ = &context; }
  void process(const streams::api::Record<Row, Row>& record) override {
    const Row* row = selector_.input(record.key(), record.value(), record.timestamp(),
                                     context_->recordMetadata());
    if (!row) return;
    Row key = selector_.key(*row);
    context_->forward(streams::api::Record<Row, Row>(std::move(key), selector_.value(*row),
                                                     record.timestamp(), record.headers()));
  }

 private:
  Selector selector_;
  Context* context_ = nullptr;
};

void refuse_unsupported(const BoundQuery& q) {
  if (q.from->kind != SourceKind::kStream) planning::unsupported("A query over a table");
  if (!q.joins.empty()) planning::unsupported("A join");
}

}  // namespace

streams::Topology plan_query(const BoundQuery& q, const DataSource& sink,
                             std::shared_ptr<QueryCounters> counters) {
  refuse_unsupported(q);
  if (q.aggregate) return planning::plan_aggregate(q, sink, std::move(counters));
  const DataSource& source = *q.from;
  std::vector<int> row_index = planning::input_row_index(q.scope);
  auto plan = std::make_shared<SelectPlan>();
  plan->counters = std::move(counters);
  plan->key_count = key_columns(source).size();
  plan->value_count = value_columns(source).size();
  if (q.where) plan->where = Program::compile(*q.where, row_index);
  for (const auto& c : q.columns) {
    if (c.key) {
      if (!q.partition_by.empty()) plan->keys.push_back(Program::compile(*c.expr, row_index));
      continue;
    }
    plan->values.push_back(Program::compile(*c.expr, row_index));
    plan->value_names.push_back(c.name);
  }
  streams::StreamsBuilder builder;
  auto consumed = streams::Consumed<Row, Row>::with(
      row_serde(source.formats.key_format, key_columns(source), true),
      row_serde(source.formats.value_format, value_columns(source), false));
  auto produced = streams::Produced<Row, Row>::with(
      row_serde(sink.formats.key_format, key_columns(sink), true),
      row_serde(sink.formats.value_format, value_columns(sink), false));
  std::shared_ptr<const SelectPlan> shared = plan;
  auto stream = builder.stream<Row, Row>(source.topic, consumed);
  if (q.partition_by.empty())
    stream
        .processValues([shared] { return std::make_unique<SelectProcessor>(shared); }, {},
                       streams::Named::as("Project"))
        .to(sink.topic, produced);
  else  // straight to the sink, as ksqlDB: no repartition topic
    stream
        .process([shared] { return std::make_unique<RekeyProcessor>(shared); }, {},
                 streams::Named::as("PartitionBy-SelectKey"))
        .to(sink.topic, produced);
  return builder.build();
}

namespace planning {

std::vector<int> input_row_index(const Scope& scope) {
  std::vector<int> row_index;
  int next = 0;
  for (const auto& c : scope.columns) {
    bool readable = c.pseudo
                        ? (c.name == "ROWTIME" || c.name == "ROWPARTITION" || c.name == "ROWOFFSET")
                        : c.ns == ColumnNamespace::kKey || c.ns == ColumnNamespace::kValue;
    row_index.push_back(readable ? next++ : -1);
  }
  return row_index;
}

const Row& InputRow::fill(const Row& key, const Row& value, int64_t timestamp,
                          const std::optional<streams::RecordMetadata>& metadata) {
  size_t at = 0;
  for (size_t k = 0; k < key_count_; ++k)
    if (k < key.size())
      row_[at++] = key[k];
    else
      row_[at++].set_null();
  for (size_t k = 0; k < value_count_; ++k)
    if (k < value.size())
      row_[at++] = value[k];
    else
      row_[at++].set_null();
  row_[at++].set_bigint(timestamp);
  row_[at++].set_integer(metadata ? metadata->partition : 0);
  row_[at++].set_bigint(metadata ? metadata->offset : 0);
  return row_;
}

void report_error(QueryCounters& counters, const std::string& error, const std::string& where) {
  counters.expression_errors.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("Error computing expression for {}: {}", where, error);
}

void unsupported(const std::string& what) {
  throw SqlError(what + " is not supported by the engine yet.");
}

}  // namespace planning

}  // namespace oxbow::sql
