// Plans a pull query (pull_query.h): ksqlDB's checks (its PullQueryValidator and the search for
// the query that materialises the table), then the store to read, the bounds and the rows.
#include "sql/engine/pull_query.h"

#include <algorithm>
#include <chrono>

#include "sql/binder/query_binder.h"
#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/execution/program.h"
#include "sql/parser/parser.h"
#include "sql/planner/query_planner.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {

const char* const kPullQueryHelp =
    " See https://cnfl.io/queries for more info.\n"
    "Add EMIT CHANGES if you intended to issue a push query.";

namespace {

[[noreturn]] void refuse(const std::string& message) {
  throw SqlError(message + kPullQueryHelp);
}

// ksqlDB's clause rules, in its order.
void check_clauses(const parser::Query& q) {
  if (!q.joins.empty()) refuse("Pull queries don't support JOIN clauses.");
  if (q.window) refuse("Pull queries don't support WINDOW clauses.");
  if (!q.group_by.empty()) refuse("Pull queries don't support GROUP BY clauses.");
  if (!q.partition_by.empty()) refuse("Pull queries don't support PARTITION BY clauses.");
  if (q.having) refuse("Pull queries don't support HAVING clauses.");
  if (q.limit && *q.limit < 0)
    refuse("Pull queries don't support negative integers in the LIMIT clause.");
  if (q.emit != parser::EmitType::kNone) refuse("Pull queries don't support EMIT clauses.");
}

void disallowed_columns(const BoundQuery& q, const BoundExpr& e, std::string& names) {
  if (e.kind == BoundKind::kColumn && e.column >= 0) {
    const ScopeColumn& c = q.scope.columns[static_cast<size_t>(e.column)];
    if (c.pseudo && (c.name == "ROWPARTITION" || c.name == "ROWOFFSET") &&
        names.find(c.name) == std::string::npos)
      names += (names.empty() ? "" : ", ") + c.name;
  }
  for (const auto& a : e.args) disallowed_columns(q, *a, names);
}

// ROWPARTITION and ROWOFFSET mean nothing for a store's row: ksqlDB refuses them.
void check_columns(const BoundQuery& q) {
  std::string names;
  for (const auto& c : q.columns) disallowed_columns(q, *c.expr, names);
  if (!names.empty())
    refuse("Pull queries don't support the following columns in SELECT clauses: " + names + "\n");
  if (q.where) disallowed_columns(q, *q.where, names);
  if (!names.empty())
    refuse("Pull queries don't support the following columns in WHERE clauses: " + names + "\n");
}

[[noreturn]] void not_queryable(const std::string& table) {
  refuse("The `" + table + "` table isn't queryable. To derive a queryable table, you can do " +
         "'CREATE TABLE QUERYABLE_" + table + " AS SELECT * FROM " + table + "'.");
}

const PersistentQuery& materializing_query(const Engine& engine, const DataSource& table) {
  for (const auto& q : engine.queries())
    if (q.sink == table.name) return q;
  not_queryable(table.name);
}

// Where each column of a pull query's scope comes from in a store's row.
struct Slot {
  enum Kind { kKey, kValue, kRowtime, kWindowStart, kWindowEnd, kNull } kind = kNull;
  size_t index = 0;
};

std::vector<Slot> slots_of(const BoundQuery& q, const DataSource& table) {
  std::vector<Slot> slots;
  for (const ScopeColumn& c : q.scope.columns) {
    Slot s;
    if (c.pseudo) {
      s.kind = c.name == "ROWTIME"       ? Slot::kRowtime
               : c.name == "WINDOWSTART" ? Slot::kWindowStart
               : c.name == "WINDOWEND"   ? Slot::kWindowEnd
                                         : Slot::kNull;
    } else {
      size_t keys = 0, values = 0;
      for (const Column& column : table.columns) {
        if (column.name == c.name && column.ns == ColumnNamespace::kKey) s = {Slot::kKey, keys};
        if (column.name == c.name && column.ns == ColumnNamespace::kValue)
          s = {Slot::kValue, values};
        keys += column.ns == ColumnNamespace::kKey;
        values += column.ns == ColumnNamespace::kValue;
      }
    }
    slots.push_back(s);
  }
  return slots;
}

// An aggregation's store rows through its projection and HAVING (a stream's records as they
// are: no `results`), then the pull query's WHERE and projection.
class SourcePullRows : public PullRows {
 public:
  SourcePullRows(std::unique_ptr<AggregateResults> results, const BoundQuery& pull,
                 std::vector<Slot> slots)
      : results_(std::move(results)), slots_(std::move(slots)), row_(slots_.size()) {
    std::vector<int> identity(slots_.size());
    for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
    if (pull.where) {
      where_.emplace(Program::compile(*pull.where, identity));
      where_frame_ = where_->new_frame();
    }
    for (const auto& c : pull.columns) {
      columns_.push_back(Program::compile(*c.expr, identity));
      frames_.push_back(columns_.back().new_frame());
    }
  }

  std::optional<Row> row(const Row& key, const streams::Window* window, const Row& stored,
                         int64_t timestamp) override {
    // An empty row: HAVING left the group out, or a stream's record has no value.
    Row values = results_ ? results_->value(key, window, stored) : stored;
    if (values.empty()) return std::nullopt;
    for (size_t i = 0; i < slots_.size(); ++i)
      fill(row_[i], slots_[i], key, values, window, timestamp);
    if (where_) {
      const Value& keep = where_->evaluate(row_, where_frame_);
      if (keep.is_null() || !keep.boolean()) return std::nullopt;
    }
    Row out(columns_.size());
    for (size_t k = 0; k < columns_.size(); ++k) out[k] = columns_[k].evaluate(row_, frames_[k]);
    return out;
  }

 private:
  static void fill(Value& to, const Slot& slot, const Row& key, const Row& values,
                   const streams::Window* window, int64_t timestamp) {
    switch (slot.kind) {
      case Slot::kRowtime:
        return to.set_bigint(timestamp);
      case Slot::kKey:
        if (slot.index < key.size()) return void(to = key[slot.index]);
        break;
      case Slot::kValue:
        if (slot.index < values.size()) return void(to = values[slot.index]);
        break;
      case Slot::kWindowStart:
        if (window) return to.set_bigint(window->start);
        break;
      case Slot::kWindowEnd:
        if (window) return to.set_bigint(window->end);
        break;
      default:
        break;
    }
    to.set_null();
  }

  std::unique_ptr<AggregateResults> results_;
  std::vector<Slot> slots_;
  Row row_;
  std::optional<Program> where_;
  Frame where_frame_;
  std::vector<Program> columns_;
  std::vector<Frame> frames_;
};

const FunctionRegistry& functions() {
  static const FunctionRegistry registry;
  return registry;
}

// The materializing query's aggregation, bound again from its statement (a BoundQuery points
// into its AST and the catalog, so none is kept), made into its result step's twin; none for a
// table query without GROUP BY, whose store holds its result rows (kTableQueryStore).
std::unique_ptr<AggregateResults> aggregate_results(const PersistentQuery& query,
                                                    const DataSource& table, const Engine& engine) {
  auto statements = parser::parse(query.statement);
  const auto* create = statements.size() == 1
                           ? std::get_if<parser::CreateSource>(&statements.front().body)
                           : nullptr;
  if (create && create->query && create->query->group_by.empty() && !table.window) return nullptr;
  if (!create || !create->query || create->query->group_by.empty() || !query.physical_plan)
    throw SqlError("Pull queries on `" + query.sink +
                   "` are not supported yet: only tables that CREATE TABLE ... AS SELECT ... " +
                   "made, windowed only by their own GROUP BY, are queryable here." +
                   kPullQueryHelp);
  BoundQuery bound =
      bind_query(*create->query, engine.catalog(), functions(), QueryContext{query.sink});
  return std::make_unique<AggregateResults>(*query.physical_plan, bound);
}

// As ksqlDB shapes a windowed table's pull-query result: `*` names the window's bounds after the
// key columns, and WINDOWSTART and WINDOWEND are key columns however they are selected.
void window_columns(const parser::Query& query, BoundQuery& pull) {
  if (!pull.from->window) return;
  auto is_bound = [&](int column) {
    if (column < 0) return false;
    const ScopeColumn& c = pull.scope.columns[static_cast<size_t>(column)];
    return c.pseudo && (c.name == "WINDOWSTART" || c.name == "WINDOWEND");
  };
  for (auto& c : pull.columns)
    if (c.expr->kind == BoundKind::kColumn && is_bound(c.expr->column)) c.key = true;
  const bool star = std::any_of(query.select.begin(), query.select.end(), [](const auto& item) {
    return item.expr->kind == parser::ExprKind::kStar;
  });
  if (!star) return;
  std::vector<OutputColumn> bounds;
  for (size_t i = 0; i < pull.scope.columns.size(); ++i) {
    if (!is_bound(static_cast<int>(i))) continue;
    auto e = std::make_unique<BoundExpr>();
    e->kind = BoundKind::kColumn;
    e->column = static_cast<int>(i);
    e->type = pull.scope.columns[i].type;
    bounds.push_back({pull.scope.columns[i].name, e->type, true, std::move(e)});
  }
  auto at = std::find_if(pull.columns.begin(), pull.columns.end(),
                         [](const OutputColumn& c) { return !c.key; });
  pull.columns.insert(at, std::make_move_iterator(bounds.begin()),
                      std::make_move_iterator(bounds.end()));
}

void describe_columns(const BoundQuery& q, PullPlan& plan) {
  for (const auto& c : q.columns) {
    plan.column_names.push_back(c.name);
    plan.column_types.push_back(c.type->to_string());
    plan.key_columns.push_back(c.key);
    plan.columns.push_back({c.name, c.type, ColumnNamespace::kValue, ""});
    plan.schema += (plan.schema.empty() ? "`" : ", `") + c.name + "` " + c.type->to_string() +
                   (c.key ? " KEY" : "");
  }
}

std::string new_query_id() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return "query_" +
         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

void plan_store(const DataSource& table, const BoundQuery& pull, PullPlan& plan) {
  plan.store = kAggregateStore;
  if (table.window) {
    plan.store_kind = table.window->type == SourceWindowType::kSession ? PullStoreKind::kSession
                                                                       : PullStoreKind::kWindow;
    if (plan.store_kind == PullStoreKind::kWindow) plan.window_size_ms = table.window->size_ms;
  }
  std::vector<int> keys;
  for (size_t i = 0; i < pull.scope.columns.size(); ++i) {
    const ScopeColumn& c = pull.scope.columns[i];
    if (!c.pseudo && c.ns == ColumnNamespace::kKey) keys.push_back(static_cast<int>(i));
  }
  plan.bounds = pull_bounds(pull, keys, table.window.has_value(), plan.window_size_ms);
  KeyBounds& bounds = plan.bounds.keys;
  // A session store has no scan without keys: a scan reads the whole key range instead.
  const bool session = plan.store_kind == PullStoreKind::kSession;
  if (bounds.kind == KeyBounds::Kind::kScan && session)
    bounds = {KeyBounds::Kind::kRange, {}, {}, {}};
  if (bounds.kind != KeyBounds::Kind::kRange) return;
  const auto key = key_columns(table);
  auto ranges = key.size() == 1 ? store_ranges(bounds, table.formats.key_format, *key.front().type)
                                : std::nullopt;
  if (ranges) {
    plan.ranges = std::move(*ranges);
  } else if (session) {
    refuse("Pull queries on the session-windowed table `" + table.name +
           "` need its keys (WHERE key = ... or IN (...)) here: a scan of its store serves only " +
           "one KAFKA key of type STRING, INT or BIGINT.");
  } else {
    bounds.kind = KeyBounds::Kind::kScan;
  }
}

}  // namespace

PullPlan plan_pull_query(const Engine& engine, const parser::Query& query) {
  check_clauses(query);
  BoundQuery pull = bind_query(query, engine.catalog(), functions(), QueryContext{});
  check_columns(pull);
  window_columns(query, pull);
  if (pull.table_functions)
    throw SqlError("Pull queries don't support table functions here yet." +
                   std::string(kPullQueryHelp));
  const DataSource& source = *pull.from;
  PullPlan plan;
  plan.query_id = new_query_id();
  plan.source = source.name;
  plan.limit = pull.limit;
  describe_columns(pull, plan);
  std::unique_ptr<AggregateResults> results;
  if (source.kind == SourceKind::kStream) {
    if (source.window)
      throw SqlError("Pull queries on windowed streams are not supported here yet." +
                     std::string(kPullQueryHelp));
    plan.stream = StreamScan{source.topic, row_serde(source.formats, key_columns(source), true),
                             row_serde(source.formats, value_columns(source), false)};
  } else {
    const PersistentQuery& materializing = materializing_query(engine, source);
    plan.materializing_query = materializing.id;
    results = aggregate_results(materializing, source, engine);
    plan_store(source, pull, plan);
    if (!results) plan.store = kTableQueryStore;
  }
  plan.rows = std::make_unique<SourcePullRows>(std::move(results), pull, slots_of(pull, source));
  return plan;
}

}  // namespace oxbow::sql
