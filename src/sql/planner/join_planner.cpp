// Queries over tables, and joins, onto Streams' DSL as ksqlDB lays them out
// (docs/sql/ksqldb-facts.md §4.4). Each source becomes a relation whose row is its scope columns
// (keys, values, ROWTIME, ROWPARTITION, ROWOFFSET): a stream's through a step that builds the row
// and, when the join is not on the stream's key or its key format is not the join's, re-keys it
// and goes through a repartition topic (Join-left / Join-right, Join for a stream-table join); a
// table's through transformValues into a store of its own (KafkaTopic_Left-Reduce /
// KafkaTopic_Right-Reduce), so that a row read by a join keeps its own pseudo columns, and into
// the join's key format through RightSourceKeyed-SelectKey when its own differs. A join's row is
// its sides' rows side by side (a missing side all NULL), keyed by the join key; a stream result's
// WHERE, PARTITION BY, table functions and projection run on that row (stream_select.cpp). A
// table's result goes out through transformValues and filter, so that a row that stops matching
// becomes a tombstone.
#include <tuple>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
#include "sql/binder/sql_error.h"
#include "sql/planner/planner_internal.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql::planning {

namespace {

using streams::KStream;
using streams::KTable;

// The types of a source's row in a relation: its scope columns that `layout` keeps of a record.
std::vector<SqlTypePtr> row_types(const DataSource& s, const RowLayout& layout) {
  std::vector<SqlTypePtr> out;
  for (const auto& c : key_columns(s)) out.push_back(c.type);
  std::vector<Column> values = value_columns(s);
  for (uint32_t v : layout.values) out.push_back(values.at(v).type);
  out.push_back(SqlType::bigint());   // ROWTIME
  out.push_back(SqlType::integer());  // ROWPARTITION
  out.push_back(SqlType::bigint());   // ROWOFFSET
  if (s.window)                       // WINDOWSTART, WINDOWEND
    out.insert(out.end(), {SqlType::bigint(), SqlType::bigint()});
  return out;
}

streams::Serde<Row> key_serde_of(const DataSource& s) {
  return source_key_serde(s);
}

// A stream record's row; with `rekey`, keyed by that expression of the row instead (a record
// whose new key is NULL cannot join and is dropped, as ksqlDB drops it).
struct SidePlan {
  RowLayout layout;
  bool from_source = true;  // the record is a source's: its row is built from key and value
  std::optional<Program> rekey;
  // WHERE's conjuncts that read this side alone, pushed down before the join (an inner or left
  // join's left stream): rows they drop are never joined. WHERE still runs whole after the join.
  std::vector<Program> pushed;
  std::shared_ptr<QueryCounters> counters;
};

class StreamSideValues : public streams::api::FixedKeyProcessor<Row, Row, Row> {
 public:
  explicit StreamSideValues(std::shared_ptr<const SidePlan> plan)
      : plan_(std::move(plan)), input_(plan_->layout) {}
  void init(Context& context) override {
    context_ = &context;
    for (const auto& p : plan_->pushed) frames_.push_back(p.new_frame());
  }
  void process(const streams::api::FixedKeyRecord<Row, Row>& r) override {
    if (r.value().empty()) return;
    const Row& row = input_.fill(r.key(), r.value(), r.timestamp(), context_->recordMetadata());
    for (size_t k = 0; k < plan_->pushed.size(); ++k) {
      const Value& keep = plan_->pushed[k].evaluate(row, frames_[k]);
      if (keep.is_null() || !keep.boolean()) return;  // errors are reported by WHERE itself
    }
    context_->forward(r.withValue(row));
  }

 private:
  std::shared_ptr<const SidePlan> plan_;
  InputRow input_;
  std::vector<Frame> frames_;
  Context* context_ = nullptr;
};

class StreamSideRekey : public streams::api::Processor<Row, Row, Row, Row> {
 public:
  explicit StreamSideRekey(std::shared_ptr<const SidePlan> plan)
      : plan_(std::move(plan)), input_(plan_->layout) {
    frame_ = plan_->rekey->new_frame();
  }
  void init(Context& context) override { context_ = &context; }
  void process(const streams::api::Record<Row, Row>& r) override {
    if (r.value().empty()) return;
    const Row& row = plan_->from_source ? input_.fill(r.key(), r.value(), r.timestamp(),
                                                      context_->recordMetadata())
                                        : r.value();
    const Value& key = plan_->rekey->evaluate(row, frame_);
    if (!frame_.error.empty()) report_error(*plan_->counters, frame_.error, "the join key");
    if (key.is_null()) return;
    context_->forward(streams::api::Record<Row, Row>(Row{key}, row, r.timestamp(), r.headers()));
  }

 private:
  std::shared_ptr<const SidePlan> plan_;
  InputRow input_;
  Frame frame_;
  Context* context_ = nullptr;
};

class TableSide : public streams::api::ValueTransformerWithKey<Row, Row, Row> {
 public:
  explicit TableSide(RowLayout layout) : input_(std::move(layout)) {}
  void init(streams::api::TransformerContext& context) override { context_ = &context; }
  Row transform(const Row& key, const Row& value) override {
    return input_.fill(key, value, context_->timestamp(), context_->recordMetadata());
  }

 private:
  InputRow input_;
  streams::api::TransformerContext* context_ = nullptr;
};

// WHERE and the projection over a relation's row (or, from a table source, over the row its key
// and value make); a row WHERE drops becomes an empty row, which the filter after it deletes.
class TableSelect : public streams::api::ValueTransformerWithKey<Row, Row, Row> {
 public:
  TableSelect(std::shared_ptr<const SelectPlan> plan, bool from_source)
      : selector_(std::move(plan)), from_source_(from_source) {}
  void init(streams::api::TransformerContext& context) override { context_ = &context; }
  Row transform(const Row& key, const Row& value) override {
    const Row* row = from_source_ ? selector_.input(key, value, context_->timestamp(),
                                                    context_->recordMetadata())
                                  : selector_.accept(value);
    return row ? table_row(selector_.value(*row)) : Row();
  }

 private:
  Selector selector_;
  bool from_source_;
  streams::api::TransformerContext* context_ = nullptr;
};

// The rows of two sides joined: left then right, a missing side as NULLs.
struct Concat {
  size_t left_width = 0, right_width = 0;
  Row operator()(const Row* left, const Row* right) const {
    Row out(left_width + right_width);
    if (left) std::copy(left->begin(), left->end(), out.begin());
    if (right) std::copy(right->begin(), right->end(), out.begin() + left_width);
    return out;
  }
};

// A source or a join so far: a stream or a table of rows, keyed by `key_serde`'s key, whose
// positions `key_positions` hold the key's value (none after a FULL join, whose key is either
// side's: ksqlDB's synthetic ROWKEY).
struct Relation {
  std::optional<KStream<Row, Row>> stream;
  std::optional<KTable<Row, Row>> table;
  std::vector<SqlTypePtr> types;
  std::vector<int> key_positions;
  streams::Serde<Row> key_serde;
  std::string key_format;
};

class RelationalPlanner {
 public:
  RelationalPlanner(const BoundQuery& q, const PlanShape& shape, const Output& out,
                    std::shared_ptr<QueryCounters> counters)
      : q_(q),
        shape_(shape),
        out_(out),
        sink_(out.sink),
        counters_(std::move(counters)),
        row_index_(input_row_index(q, shape)) {}

  streams::Topology plan() {
    if (!shape_.joined()) return plan_table_query();
    Relation left = joined(*shape_.relation);
    if (q_.aggregate) {
      if (left.stream)
        aggregate_onto(*left.stream, q_, shape_, out_, counters_, true);
      else
        table_aggregate_onto(*left.table, q_, shape_, out_, counters_, true);
      return builder_.build();
    }
    if (left.stream) {
      select_onto(*left.stream, q_, shape_, out_, counters_, true);
      return builder_.build();
    }
    check_table_partition_by(q_, shape_);
    end_query(finish_table(*left.table, select_plan(), false).toStream(), out_, key_serde_of(sink_),
              counters_);
    return builder_.build();
  }

 private:
  std::vector<const DataSource*> sources() const {
    std::vector<const DataSource*> out = {q_.from};
    for (const auto& j : q_.joins) out.push_back(j.right);
    return out;
  }

  std::shared_ptr<const SelectPlan> select_plan() const {
    auto plan = std::make_shared<SelectPlan>();
    plan->counters = counters_;
    plan->layout = row_layout(q_, shape_, *q_.from, q_.from_alias, windowed_source(q_));
    if (q_.where) plan->where = Program::compile(*q_.where, row_index_);
    for (const auto& c : q_.columns) {
      if (c.key) continue;  // the record's key: the source's, or the join's
      plan->values.push_back(Program::compile(*c.expr, row_index_));
      plan->value_names.push_back(c.name);
    }
    return plan;
  }

  KTable<Row, Row> finish_table(const KTable<Row, Row>& table,
                                std::shared_ptr<const SelectPlan> plan, bool from_source) {
    auto selected = table.transformValues(
        [plan, from_source] { return std::make_unique<TableSelect>(plan, from_source); },
        streams::Named::as("Project"));
    auto kept = selected.filter([](const Row&, const Row& row) { return !row.empty(); },
                                streams::Named::as("Project-Filter"));
    if (sink_.window) return kept;
    // Stored by a step of its own without a cache, which forwards every change as it comes: the
    // tombstones of rows that never passed too, which ksqlDB's results have.
    return kept.mapValues([](const Row& row) { return row; }, streams::Named::as("Project-Store"),
                          streams::Materialized<Row, Row>::as(kTableQueryStore)
                              .withKeySerde(key_serde_of(sink_))
                              .withValueSerde(internal_row_serde())
                              .withCachingDisabled());
  }

  // SELECT ... FROM table: the table's changes, WHERE and the projection applied, to the sink.
  streams::Topology plan_table_query() {
    const DataSource& source = *q_.from;
    check_table_partition_by(q_, shape_);
    auto table = builder_.table<Row, Row>(source.topic, consumed_from(source, counters_));
    end_query(finish_table(table, select_plan(), true).toStream(), out_, key_serde_of(sink_),
              counters_);
    return builder_.build();
  }

  // Names of the n-th join's steps: the outermost join's plain, nested ones prefixed "L_".
  std::string level(size_t joins_after) const {
    std::string prefix;
    for (size_t i = 0; i < joins_after; ++i) prefix += "L_";
    return prefix;
  }

  // The relation of a join step: its left side (the FROM source, or the joins below) joined with
  // its right source, each side re-keyed as the plan says.
  Relation joined(const physical::Step& step) {
    // Its context is "Join" under one "L_" per join above it (physical_builder.cpp's level).
    size_t joins_after = (step.context.size() - std::string_view("Join").size()) / 2;
    size_t n = q_.joins.size() - 1 - joins_after;
    JoinSide left_side = side_of(*step.sources.at(0)), right_side = side_of(*step.sources.at(1));
    Relation left = left_side.relation->sources.size() == 2
                        ? joined(*left_side.relation)
                        : read(*q_.from, q_.from_alias, joins_after, "Left", left_side);
    return join(std::move(left), n, left_side, right_side);
  }

  // A source as a relation, keyed by its own key; a stream's rows first filtered by the conjuncts
  // of its side's pushed-down filter step, if any. A table's rows are kept in a store of their
  // own, unless the side is re-keyed: the re-keyed table's store then holds them (as ksqlDB's
  // TableSelectKey's), and the join reads that.
  Relation read(const DataSource& s, const std::string& alias, size_t joins_after,
                const std::string& side, const JoinSide& steps) {
    Relation r;
    RowLayout layout = row_layout(q_, shape_, s, alias, s.window.has_value());
    r.types = row_types(s, layout);
    r.key_serde = key_serde_of(s);
    r.key_format = s.formats.key_format;
    size_t keys = key_columns(s).size();
    if (keys == 1) r.key_positions = {0};
    auto consumed = consumed_from(s, counters_);
    if (s.kind == SourceKind::kStream) {
      auto plan = std::make_shared<SidePlan>();
      plan->layout = layout;
      plan->counters = counters_;
      if (steps.pushed)
        for (const BoundExpr* c : steps.pushed->expressions)
          plan->pushed.push_back(Program::compile(*c, row_index_));
      r.stream = builder_.stream<Row, Row>(s.topic, consumed).processValues([plan] {
        return std::make_unique<StreamSideValues>(plan);
      });
    } else {
      std::string name = "KafkaTopic_" + level(joins_after) + side;
      auto stored = steps.rekey ? streams::Materialized<Row, Row>()
                                : streams::Materialized<Row, Row>::as(name + "-Reduce")
                                      .withKeySerde(r.key_serde)
                                      .withValueSerde(internal_row_serde());
      r.table = builder_.table<Row, Row>(s.topic, consumed)
                    .transformValues([layout] { return std::make_unique<TableSide>(layout); },
                                     streams::Named::as(name), stored);
    }
    return r;
  }

  // The key serde of a join whose sides are both re-keyed: keys of `type` in the first key format
  // of its sources (the FROM and the first `n` + 1 joins' right sources) that is not NONE.
  std::pair<streams::Serde<Row>, std::string> default_key_serde(size_t n,
                                                                const SqlTypePtr& type) const {
    Formats formats;  // KAFKA, ksqlDB's default key format, when no source has a key
    std::vector<const DataSource*> joined = {q_.from};
    for (size_t k = 0; k <= n; ++k) joined.push_back(q_.joins[k].right);
    for (const DataSource* s : joined)
      if (s->formats.key_format != "NONE") {
        formats = s->formats;
        formats.key_schema_id.reset();  // the source's schema, not the join key's
        break;
      }
    Column key{"ROWKEY", type, ColumnNamespace::kKey, ""};
    return {row_serde(formats, {key}, true), formats.key_format};
  }

  // Whether `r` is keyed by `key` (a column of its row, which starts at `offset` of the join's).
  bool keyed_on(const Relation& r, const BoundExpr& key, int offset) const {
    int at = position_of(key, offset);
    return at >= 0 &&
           std::find(r.key_positions.begin(), r.key_positions.end(), at) != r.key_positions.end();
  }

  // The row position of a join condition's side, when it is a plain column; else -1.
  int position_of(const BoundExpr& e, int offset) const {
    if (e.kind != BoundKind::kColumn) return -1;
    return row_index_[e.column] - offset;
  }

  // `r` keyed by `key` (an expression over its row) through the repartition topic `<name>` when
  // the plan re-keys it (`rekey`), with `key_serde` and `key_format`. `joins_done`: the joins `r`
  // is made of. Refused as ksqlDB refuses it (SchemaKStream / SchemaKTable.selectKey): a table by
  // another expression, and a windowed source at all (its records would lose their windows).
  // A table on its key but in another key format is re-keyed as ksqlDB's TableSelectKey does it:
  // its changes through `<table_step>-SelectKey-repartition` into `<table_step>-Materialize`.
  Relation keyed(Relation r, bool rekey, const BoundExpr& key, int offset, const std::string& name,
                 const streams::Serde<Row>& key_serde, const std::string& key_format,
                 size_t joins_done, const std::string& table_step = "") {
    int at = position_of(key, offset);
    if (r.table && !keyed_on(r, key, offset))
      refuse_table_repartition(relation_key_names(q_, joins_done), planner_text(q_, key));
    if (!rekey) return r;
    if (q_.from->window) refuse_windowed_repartition();
    if (r.table) {
      r.table = r.table->toStream()
                    .selectKey([](const Row& k, const Row&) { return k; },
                               streams::Named::as(table_step + "-SelectKey-Mapper"))
                    .toTable(streams::Named::as(table_step + "-SelectKey"),
                             streams::Materialized<Row, Row>::as(table_step + "-Materialize")
                                 .withKeySerde(key_serde)
                                 .withValueSerde(internal_row_serde()));
      r.key_serde = key_serde;
      r.key_format = key_format;
      return r;
    }
    auto plan = std::make_shared<SidePlan>();
    plan->from_source = false;
    std::vector<int> shifted = row_index_;
    for (auto& i : shifted)
      if (i >= 0) i -= offset;
    plan->rekey = Program::compile(key, shifted);
    plan->counters = counters_;
    r.stream =
        r.stream
            ->process([plan] { return std::make_unique<StreamSideRekey>(plan); }, {},
                      streams::Named::as(name + "-SelectKey"))
            .repartition(streams::Repartitioned<Row, Row>::with(key_serde, internal_row_serde())
                             .withName(name));
    r.key_positions = at >= 0 ? std::vector<int>{at} : std::vector<int>{};
    r.key_serde = key_serde;
    r.key_format = key_format;
    return r;
  }

  Relation join(Relation left, size_t n, const JoinSide& left_side, const JoinSide& right_side) {
    const BoundJoin& j = q_.joins[n];
    const DataSource& right_source = *j.right;
    std::string prefix = level(q_.joins.size() - 1 - n);
    Relation right = read(right_source, j.alias, q_.joins.size() - 1 - n, "Right", right_side);
    if (j.kind == JoinKind::kForeignKey)  // windowed tables are refused by the binder
      return foreign_key_join(std::move(left), std::move(right), j);
    int left_width = static_cast<int>(left.types.size());
    // The join's key format is the plan's (ksqlDB's JoinNode.resolveKeyFormats): the key serde
    // of the first side the plan does not re-key, else the sources' in that format.
    streams::Serde<Row> key_serde;
    std::string key_format;
    if (!left_side.rekey) {
      key_serde = left.key_serde;
      key_format = left.key_format;
    } else if (!right_side.rekey) {
      key_serde = right.key_serde;
      key_format = right.key_format;
    } else {
      std::tie(key_serde, key_format) = default_key_serde(n, j.left_key->type);
    }
    bool stream_table = j.kind == JoinKind::kStreamTable;  // Streams' repartition of `Join`
    left = keyed(std::move(left), left_side.rekey, *j.left_key, 0,
                 prefix + (stream_table ? "Join" : "Join-left"), key_serde, key_format, n);
    right = keyed(std::move(right), right_side.rekey, *j.right_key, left_width,
                  prefix + "Join-right", key_serde, key_format, 0, prefix + "RightSourceKeyed");
    Concat concat{left.types.size(), right.types.size()};
    Relation out;
    out.types = left.types;
    out.types.insert(out.types.end(), right.types.begin(), right.types.end());
    out.key_serde = key_serde;
    out.key_format = key_format;
    out.key_positions = left.key_positions;
    for (int p : right.key_positions) out.key_positions.push_back(p + left_width);
    if (j.type == parser::JoinType::kFull) out.key_positions.clear();  // either side may be NULL
    auto left_serde = internal_row_serde(), right_serde = internal_row_serde();
    using parser::JoinType;
    auto both = [concat](const Row& l, const Row& r) { return concat(&l, &r); };
    auto left_only = [concat](const Row& l, const std::optional<Row>& r) {
      return concat(&l, r ? &*r : nullptr);
    };
    auto right_only = [concat](const Row& r, const std::optional<Row>& l) {
      return concat(l ? &*l : nullptr, &r);
    };
    auto either = [concat](const std::optional<Row>& l, const std::optional<Row>& r) {
      return concat(l ? &*l : nullptr, r ? &*r : nullptr);
    };
    if (j.kind == JoinKind::kStreamTable) {
      auto joined = streams::Joined<Row, Row, Row>::with(key_serde, left_serde, right_serde)
                        .withName(prefix + "Join");
      out.stream = j.type == JoinType::kInner
                       ? left.stream->join<Row>(*right.table, both, joined)
                       : left.stream->leftJoin<Row>(*right.table, left_only, joined);
    } else if (j.kind == JoinKind::kStreamStream) {
      auto windows = join_windows(*j.within);
      auto stores = [&](const streams::Serde<Row>& one, const streams::Serde<Row>& other) {
        return streams::StreamJoined<Row, Row, Row>::with(key_serde, one, other);
      };
      switch (j.type) {
        case JoinType::kInner:
          out.stream =
              left.stream->join<Row>(*right.stream, both, windows, stores(left_serde, right_serde));
          break;
        case JoinType::kLeft:
          out.stream = left.stream->leftJoin<Row>(*right.stream, left_only, windows,
                                                  stores(left_serde, right_serde));
          break;
        case JoinType::kRight:  // as ksqlDB: a left join the other way round
          out.stream = right.stream->leftJoin<Row>(*left.stream, right_only, mirrored(windows),
                                                   stores(right_serde, left_serde));
          break;
        case JoinType::kFull:
          out.stream = left.stream->outerJoin<Row>(*right.stream, either, windows,
                                                   stores(left_serde, right_serde));
          break;
      }
    } else {
      auto materialized = streams::Materialized<Row, Row>::with(key_serde, internal_row_serde());
      auto named = streams::Named::as(prefix + "Join");
      switch (j.type) {
        case JoinType::kInner:
          out.table = left.table->join<Row>(*right.table, both, named, materialized);
          break;
        case JoinType::kLeft:
          out.table = left.table->leftJoin<Row>(*right.table, left_only, named, materialized);
          break;
        case JoinType::kRight:
          out.table = right.table->leftJoin<Row>(*left.table, right_only, named, materialized);
          break;
        case JoinType::kFull:
          out.table = left.table->outerJoin<Row>(*right.table, either, named, materialized);
          break;
      }
    }
    return out;
  }

  // A left table's column names the right table's row (KIP-213, through Streams' subscription
  // topics): the result is keyed by the left table's key. INNER or LEFT, as ksqlDB allows.
  Relation foreign_key_join(Relation left, Relation right, const BoundJoin& j) {
    std::function<std::optional<Row>(const Row&)> extractor;
    if (int at = position_of(*j.left_key, 0); at >= 0) {
      extractor = [at](const Row& row) -> std::optional<Row> {
        const Value& fk = row[static_cast<size_t>(at)];
        if (fk.is_null()) return std::nullopt;
        return Row{fk};
      };
    } else {  // an expression of the left row (`ON a.x + 1 = b.id`), as ksqlDB allows
      auto program = std::make_shared<const Program>(Program::compile(*j.left_key, row_index_));
      auto counters = counters_;
      extractor = [program, counters](const Row& row) -> std::optional<Row> {
        Frame frame = program->new_frame();  // its own: any task's thread may call it
        const Value& fk = program->evaluate(row, frame);
        if (!frame.error.empty()) report_error(*counters, frame.error, "the foreign key");
        if (fk.is_null()) return std::nullopt;
        return Row{fk};
      };
    }
    Concat concat{left.types.size(), right.types.size()};
    Relation out;
    out.types = left.types;
    out.types.insert(out.types.end(), right.types.begin(), right.types.end());
    out.key_serde = left.key_serde;
    out.key_format = left.key_format;
    out.key_positions = left.key_positions;
    auto joined = streams::TableJoined<Row, Row>::as("FkJoin");
    auto materialized = streams::Materialized<Row, Row>::with(left.key_serde, internal_row_serde());
    if (j.type == parser::JoinType::kInner)
      out.table = left.table->join<Row>(
          *right.table, extractor, [concat](const Row& l, const Row& r) { return concat(&l, &r); },
          joined, materialized);
    else
      out.table = left.table->leftJoin<Row>(
          *right.table, extractor,
          [concat](const Row& l, const std::optional<Row>& r) {
            return concat(&l, r ? &*r : nullptr);
          },
          joined, materialized);
    return out;
  }

  // WITHIN (before, after) or WITHIN n; without GRACE PERIOD ksqlDB keeps Kafka's old default of
  // 24 hours less the window.
  static streams::JoinWindows join_windows(const parser::WithinClause& w) {
    constexpr int64_t kDay = 24 * 60 * 60 * 1000;
    int64_t size = w.before_ms + w.after_ms;
    int64_t grace = w.grace_ms.value_or(std::max<int64_t>(kDay - size, 0));
    return streams::JoinWindows::ofTimeDifferenceAndGrace(std::chrono::milliseconds(w.before_ms),
                                                          std::chrono::milliseconds(grace))
        .after(std::chrono::milliseconds(w.after_ms));
  }
  static streams::JoinWindows mirrored(const streams::JoinWindows& w) {
    return streams::JoinWindows::ofTimeDifferenceAndGrace(
               std::chrono::milliseconds(w.afterMs()), std::chrono::milliseconds(w.gracePeriodMs()))
        .after(std::chrono::milliseconds(w.beforeMs()));
  }

  const BoundQuery& q_;
  const PlanShape& shape_;
  const Output& out_;
  const DataSource& sink_;
  std::shared_ptr<QueryCounters> counters_;
  std::vector<int> row_index_;
  streams::StreamsBuilder builder_;
};

}  // namespace

streams::Topology plan_relational(const BoundQuery& q, const PlanShape& shape, const Output& out,
                                  std::shared_ptr<QueryCounters> counters) {
  return RelationalPlanner(q, shape, out, std::move(counters)).plan();
}

}  // namespace oxbow::sql::planning
