// CREATE OR REPLACE ... AS SELECT over a sink that exists (docs/sql/ksqldb-facts.md §1.8): the
// query writing into it keeps its id, its application id and so its state, and gets the new
// statement's topology, for the changes ksqlDB allows. ksqlDB decides in two steps, and so does
// this file: the sink must keep its topic and formats and every old column where it was (its
// metastore's check), then the two queries' execution plans must agree step by step (its
// ExecutionStep upgrade validation). The plan is modelled here as ksqlDB lays it out, reduced to
// what that validation looks at: filters and projections are passive (may come and go), sinks,
// sources, PARTITION BY, GROUP BY and unwindowed stream aggregations must match, and every other
// step (joins, windowed sources and aggregations, table aggregations, table functions) refuses any
// upgrade.
#include <algorithm>
#include <map>

#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {

// One step of ksqlDB's execution plan: its class name, how its upgrade is checked, the properties
// that must be equal in the replacement, and the steps it reads (two for a join).
struct PlanStep {
  enum class Check {
    kPassive,      // filters and projections: skipped on either side
    kMatch,        // the same step, with equal properties, must be in the replacement
    kSource,       // the replacement reaches the same source through passive steps only
    kUnsupported,  // "Upgrades not yet supported for ..."
  };
  std::string type;
  Check check = Check::kUnsupported;
  // Whether the step declares itself ENFORCING when met as the replacement's step (only
  // StreamSink and StreamSource do; the others' declaration is the "not yet supported" refusal).
  bool enforcing = false;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<PlanStep> sources;
};

namespace {

using Check = PlanStep::Check;

// The steps of ksqlDB's plan in order, the sink first.
class PlanChain {
 public:
  void add(std::string type, Check check, std::vector<std::pair<std::string, std::string>> p = {},
           bool enforcing = false) {
    chain_.push_back(PlanStep{std::move(type), check, enforcing, std::move(p), {}});
  }
  // The chain, each step reading the next, the last reading `below`.
  PlanStep link(std::vector<PlanStep> below) {
    for (auto it = chain_.rbegin(); it != chain_.rend(); ++it) {
      it->sources = std::move(below);
      below = {std::move(*it)};
    }
    return std::move(below.front());
  }

 private:
  std::vector<PlanStep> chain_;
};

std::string list_text(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

// A scope column as ksqlDB names it inside the plan: a join's columns carry their source's alias.
std::string plan_name(const BoundQuery& q, int column) {
  const ScopeColumn& c = q.scope.columns[static_cast<size_t>(column)];
  if (q.joins.empty() || c.pseudo) return c.name;
  return c.source + "_" + c.name;
}

bool is_window_bound(const BoundQuery& q, int column) {
  const ScopeColumn& c = q.scope.columns[static_cast<size_t>(column)];
  return c.pseudo && (c.name == "WINDOWSTART" || c.name == "WINDOWEND");
}

// What ksqlDB's aggregate analysis records of a query: the columns the aggregation reads (its
// "columns not part of aggregate", every column named outside the window bounds, in the order
// SELECT, WHERE, GROUP BY, HAVING name them) and its aggregate calls, each argument that is not a
// column named by the internal column that carries it.
class AggregateAnalysis {
 public:
  explicit AggregateAnalysis(const BoundQuery& q) : q_(q) {
    for (const BoundExpr* e : written_order(q)) visit(*e);
    if (q.where) visit(*q.where);
    for (const auto& g : q.group_by) visit(*g);
    if (q.having) visit(*q.having);
    name_calls();
  }
  std::string required_text() const {
    std::vector<std::string> quoted;
    for (const auto& name : required_) quoted.push_back("`" + name + "`");
    return list_text(quoted);
  }
  std::string calls_text() const { return list_text(call_texts_); }
  // Not compared by ksqlDB, whose check lets SUM(x + 1) become SUM(x * 1.5) (both read the same
  // internal column): here the states' layout follows the arguments' types, so they must stay.
  std::string arg_types_text() const {
    std::vector<std::string> calls;
    for (const BoundExpr* call : calls_) {
      std::string types;
      for (const auto& a : call->args)
        types += (types.empty() ? "" : ", ") + (a->type ? a->type->to_string() : "NULL");
      calls.push_back(call->op + "(" + types + ")");
    }
    return list_text(calls);
  }

 private:
  // The projection as written: the bound columns put the keys first.
  static std::vector<const BoundExpr*> written_order(const BoundQuery& q) {
    std::vector<const BoundExpr*> exprs;
    for (const auto& c : q.columns) exprs.push_back(c.expr.get());
    auto at = [](const BoundExpr* e) {
      return std::make_pair(e->parsed->position.line, e->parsed->position.column);
    };
    if (std::all_of(exprs.begin(), exprs.end(), [](auto* e) { return e->parsed; }))
      std::stable_sort(exprs.begin(), exprs.end(), [&](auto* a, auto* b) { return at(a) < at(b); });
    return exprs;
  }
  void require(const std::string& name) {
    if (std::find(required_.begin(), required_.end(), name) == required_.end())
      required_.push_back(name);
  }
  void visit(const BoundExpr& e) {
    if (e.kind == BoundKind::kColumn) {
      if (!is_window_bound(q_, e.column)) require(plan_name(q_, e.column));
      return;
    }
    if (e.kind == BoundKind::kFunction && e.aggregate) {
      calls_.push_back(&e);
      if (e.args.empty()) require("ROWTIME");  // COUNT(*): ksqlDB counts ROWTIME
    }
    for (const auto& a : e.args) visit(*a);
  }
  // After the required columns, each distinct argument that is not a column gets the next
  // internal column (KSQL_INTERNAL_COL_<n>); a trailing literal (TOPK's k) stays as written.
  void name_calls() {
    std::map<std::string, std::string> internal;
    for (const auto& name : required_) internal[name] = name;
    size_t next = required_.size();
    for (const BoundExpr* call : calls_) {
      std::vector<std::string> args;
      if (call->args.empty()) args.push_back("ROWTIME");
      for (size_t i = 0; i < call->args.size(); ++i) {
        const BoundExpr& a = *call->args[i];
        std::string text =
            a.kind == BoundKind::kColumn ? plan_name(q_, a.column) : format(*a.parsed);
        auto [it, added] = internal.emplace(text, "KSQL_INTERNAL_COL_" + std::to_string(next));
        if (added) ++next;
        bool literal = i > 0 && (a.kind == BoundKind::kLiteral || a.kind == BoundKind::kNull);
        args.push_back(literal ? text : it->second);
      }
      std::string joined;
      for (const auto& a : args) joined += (joined.empty() ? "" : ", ") + a;
      call_texts_.push_back(call->op + "(" + joined + ")");
    }
  }

  const BoundQuery& q_;
  std::vector<std::string> required_;
  std::vector<const BoundExpr*> calls_;
  std::vector<std::string> call_texts_;
};

const char* join_step(JoinKind kind) {
  switch (kind) {
    case JoinKind::kStreamStream:
      return "StreamStreamJoin";
    case JoinKind::kStreamTable:
      return "StreamTableJoin";
    case JoinKind::kTableTable:
      return "TableTableJoin";
    case JoinKind::kForeignKey:
      return "ForeignKeyTableTableJoin";
  }
  return "StreamTableJoin";
}

PlanStep source_step(const DataSource& source) {
  PlanChain chain;
  bool table = source.kind == SourceKind::kTable;
  if (source.window)
    chain.add(table ? "WindowedTableSource" : "WindowedStreamSource", Check::kUnsupported);
  else
    chain.add(table ? "TableSource" : "StreamSource", Check::kSource, {{"topicName", source.topic}},
              !table);
  return chain.link({});
}

// What the query reads: its source, or its joins, the last join on top.
PlanStep input_step(const BoundQuery& q) {
  PlanStep step = source_step(*q.from);
  for (const auto& j : q.joins) {
    PlanChain join;
    join.add(join_step(j.kind), Check::kUnsupported);
    step = join.link({std::move(step), source_step(*j.right)});
  }
  return step;
}

bool input_is_table(const BoundQuery& q) {
  if (q.joins.empty()) return q.from->kind == SourceKind::kTable;
  JoinKind last = q.joins.back().kind;
  return last == JoinKind::kTableTable || last == JoinKind::kForeignKey;
}

// GROUP BY exactly the source's key columns, in order: ksqlDB groups by key (no repartition).
bool groups_by_key(const BoundQuery& q) {
  if (!q.joins.empty() || q.group_by.empty()) return false;
  std::vector<std::string> keys;
  for (const auto& c : q.from->columns)
    if (c.ns == ColumnNamespace::kKey) keys.push_back(c.name);
  if (keys.size() != q.group_by.size()) return false;
  for (size_t k = 0; k < keys.size(); ++k) {
    const BoundExpr& g = *q.group_by[k];
    if (g.kind != BoundKind::kColumn) return false;
    const ScopeColumn& c = q.scope.columns[static_cast<size_t>(g.column)];
    if (c.pseudo || c.ns != ColumnNamespace::kKey || c.name != keys[k]) return false;
  }
  return true;
}

std::string expressions_text(const std::vector<BoundExprPtr>& exprs) {
  std::vector<std::string> texts;
  for (const auto& e : exprs) texts.push_back(format(*e->parsed));
  return list_text(texts);
}

// An aggregation's steps between its sink and its input, as ksqlDB's AggregateNode builds them.
void aggregate_steps(const BoundQuery& q, PlanChain& chain) {
  bool table = input_is_table(q);
  chain.add("TableSelect", Check::kPassive);  // the projection
  if (q.having) chain.add("TableFilter", Check::kPassive);
  if (table) {
    chain.add("TableAggregate", Check::kUnsupported);
    chain.add("TableGroupBy", Check::kUnsupported);
  } else if (q.window) {
    chain.add("StreamWindowedAggregate", Check::kUnsupported);
  } else {
    AggregateAnalysis analysis(q);
    chain.add("StreamAggregate", Check::kMatch,
              {{"columns not part of aggregate", analysis.required_text()},
               {"aggregate functions", analysis.calls_text()},
               {"aggregate argument types", analysis.arg_types_text()}});
  }
  if (!table) {
    if (groups_by_key(q))
      chain.add("StreamGroupByKey", Check::kMatch);
    else
      chain.add("StreamGroupBy", Check::kMatch,
                {{"group by clause", expressions_text(q.group_by)}});
  }
  chain.add(table ? "TableSelect" : "StreamSelect", Check::kPassive);  // the aggregation's input
  if (q.table_functions) chain.add("StreamFlatMap", Check::kUnsupported);
  if (q.where) chain.add(table ? "TableFilter" : "StreamFilter", Check::kPassive);
}

// The steps above the input of a query that neither aggregates nor joins: its filter, PARTITION
// BY, table functions and projection.
void select_steps(const BoundQuery& q, PlanChain& chain) {
  bool table = input_is_table(q);
  chain.add(table ? "TableSelect" : "StreamSelect", Check::kPassive);
  if (q.table_functions) chain.add("StreamFlatMap", Check::kUnsupported);
  // ksqlDB adds no step for PARTITION BY the key the rows already have (selectKey returns its
  // input).
  if ((!q.partition_by.empty() && !partition_by_keeps_key(q)) || q.partition_by_null)
    chain.add(
        table ? "TableSelectKey" : "StreamSelectKey", Check::kMatch,
        {{"keyExpressions", q.partition_by_null ? "[null]" : expressions_text(q.partition_by)}});
  if (q.where) chain.add(table ? "TableFilter" : "StreamFilter", Check::kPassive);
}

std::string class_text(const std::string& type) {
  return "class io.confluent.ksql.execution.plan." + type;
}

[[noreturn]] void not_upgradeable(const std::string& why) {
  throw SqlError("Query is not upgradeable. " + why);
}

void must_match(const PlanStep& self, const PlanStep& to) {
  auto differ = [&](const std::string& what, const std::string& a, const std::string& b) {
    not_upgradeable("Plan step of type " + self.type + " must have matching " + what +
                    ". Values differ: " + a + " vs. " + b);
  };
  if (self.type != to.type) differ("class", class_text(self.type), class_text(to.type));
  for (size_t i = 0; i < self.properties.size(); ++i)
    if (self.properties[i].second != to.properties[i].second)
      differ(self.properties[i].first, self.properties[i].second, to.properties[i].second);
}

void validate(const PlanStep& self, const PlanStep& to);

// A source of the old plan: the replacement must reach the same source through passive steps.
// As ksqlDB's, the walk checks the replacement's first step only, then follows its first child.
void validate_source(const PlanStep& self, const PlanStep& to) {
  const PlanStep* source = &to;
  while (source->type != self.type) {
    if (to.sources.empty())
      not_upgradeable("The root source node of the upgrade tree must be " + self.type +
                      ", but was " + class_text(source->type));
    if (to.sources.size() > 1)
      not_upgradeable("Cannot change a non-join source into a join source.");
    if (to.check != Check::kPassive) {
      if (!to.enforcing) throw SqlError("Upgrades not yet supported for " + to.type);
      not_upgradeable("Cannot add a " + class_text(to.type) +
                      " step that is not in the original query plan.");
    }
    // ksqlDB's loop never ends when the step below is not the source; refuse instead.
    if (source == &to.sources.front())
      not_upgradeable("The root source node of the upgrade tree must be " + self.type +
                      ", but was " + class_text(source->type));
    source = &to.sources.front();
  }
  must_match(self, *source);
}

// ksqlDB's ExecutionStep.validateUpgrade: a passive step hands the comparison over to the other
// plan's step (so each side's passive steps are skipped), a matching step compares and goes on
// below both.
void validate(const PlanStep& self, const PlanStep& to) {
  switch (self.check) {
    case Check::kPassive:
      return validate(to, self.sources.front());
    case Check::kUnsupported:
      throw SqlError("Upgrades not yet supported for " + self.type);
    case Check::kSource:
      return validate_source(self, to);
    case Check::kMatch:
      must_match(self, to);
      return validate(self.sources.front(), to.sources.front());
  }
}

// A column as ksqlDB's LogicalSchema prints it (KEY for tables' keys too).
std::string column_text(const Column& c) {
  std::string out = "`" + c.name + "` " + c.type->to_string();
  if (c.ns == ColumnNamespace::kKey) out += " KEY";
  if (c.ns == ColumnNamespace::kHeaders) out += " HEADERS";
  if (c.ns == ColumnNamespace::kHeader) out += " HEADER('" + c.header_key + "')";
  return out;
}

std::string schema_text(const DataSource& source) {
  std::string out;
  for (const auto& c : source.columns) out += (out.empty() ? "" : ", ") + column_text(c);
  return out;
}

bool same_column(const Column& a, const Column& b) {
  return a.name == b.name && a.ns == b.ns && a.header_key == b.header_key &&
         a.type->equals(*b.type);
}

// The columns of `old` in `keys` (or the others) that `replacement` does not hold at the same
// place: ksqlDB compares columns with their index among their kind.
std::vector<std::string> moved_columns(const DataSource& old, const DataSource& replacement,
                                       bool keys) {
  auto pick = [keys](const DataSource& s) {
    std::vector<const Column*> out;
    for (const auto& c : s.columns)
      if ((c.ns == ColumnNamespace::kKey) == keys) out.push_back(&c);
    return out;
  };
  std::vector<const Column*> before = pick(old), after = pick(replacement);
  std::vector<std::string> moved;
  for (size_t i = 0; i < before.size(); ++i)
    if (i >= after.size() || !same_column(*before[i], *after[i]))
      moved.push_back(column_text(*before[i]));
  return moved;
}

// The sink's topic as ksqlDB's KsqlTopic prints it: its name, key format (with the window) and
// value format. The serde features and format properties ksqlDB prints too are left out.
std::string topic_text(const DataSource& s) {
  std::string window = "Optional.empty";
  if (s.window) {
    const char* type = s.window->type == SourceWindowType::kSession   ? "SESSION"
                       : s.window->type == SourceWindowType::kHopping ? "HOPPING"
                                                                      : "TUMBLING";
    std::string size = s.window->size_ms ? "Optional[" + std::to_string(*s.window->size_ms) + "]"
                                         : "Optional.empty";
    window = std::string("Optional[WindowInfo{type=") + type + ", size=" + size +
             ", emitStrategy=Optional.empty}]";
  }
  return "KsqlTopic{kafkaTopicName='" + s.topic +
         "', keyFormat=KeyFormat{format=FormatInfo{format=" + s.formats.key_format +
         ", properties={}}, features=[], window=" + window +
         "}, valueFormat=ValueFormat{format=FormatInfo{format=" + s.formats.value_format +
         ", properties={}}, features=[]}}";
}

// ksqlDB's metastore check of the sink's replacement (StructuredDataSource.canUpgradeTo): the same
// topic in the same formats, and every old column where it was.
void check_source_upgrade(const DataSource& old, const DataSource& replacement) {
  std::vector<std::string> issues;
  auto issue = [&](const std::string& what, const std::string& a, const std::string& b) {
    issues.push_back("DataSource '`" + old.name + "`' has " + what + " = " + a +
                     " which is not upgradeable to " + b);
  };
  if (topic_text(old) != topic_text(replacement))
    issue("topic", topic_text(old), topic_text(replacement));
  std::string why;
  if (auto keys = moved_columns(old, replacement, true); !keys.empty())
    why =
        "Key columns must be identical. The following key columns are changed, missing or "
        "reordered: " +
        list_text(keys);
  else if (auto values = moved_columns(old, replacement, false); !values.empty())
    why = "The following columns are changed, missing or reordered: " + list_text(values);
  if (!why.empty()) {
    issue("schema", schema_text(old), schema_text(replacement));
    issues.back() += ". (" + why + ")";
  }
  if (issues.empty()) return;
  std::string message = "Cannot upgrade data source: ";
  for (size_t i = 0; i < issues.size(); ++i) message += (i ? "\n\tAND " : "") + issues[i];
  throw SqlError(message);
}

std::vector<PersistentQuery*> writers_of(std::vector<PersistentQuery>& queries,
                                         const std::string& sink) {
  std::vector<PersistentQuery*> writers;
  for (auto& q : queries)
    if (q.sink == sink) writers.push_back(&q);
  return writers;
}

}  // namespace

std::shared_ptr<const PlanStep> upgrade_plan_of(const BoundQuery& q, SourceKind sink_kind) {
  PlanChain chain;
  bool stream_sink = sink_kind == SourceKind::kStream;
  chain.add(stream_sink ? "StreamSink" : "TableSink", Check::kMatch, {}, stream_sink);
  if (q.aggregate)
    aggregate_steps(q, chain);
  else
    select_steps(q, chain);
  return std::make_shared<const PlanStep>(chain.link({input_step(q)}));
}

StatementResult Engine::replace_query(const DataSource& old, const BoundQuery& query,
                                      const DataSource& sink, const std::string& text) {
  const char* kind = old.kind_name();
  if (old.read_only)
    throw SqlError(std::string("Cannot add ") + kind + " '" + old.name +
                   "': CREATE OR REPLACE is not supported on source " + kind + "s.");
  std::vector<PersistentQuery*> writers = writers_of(queries_, old.name);
  if (writers.size() > 1) {
    std::string ids;
    for (const auto* q : writers) ids += (ids.empty() ? "" : ", ") + q->id;
    throw SqlError("REPLACE for sink " + old.name +
                   " is not supported because there are multiple queries writing into it: [" + ids +
                   "]");
  }
  check_source_upgrade(old, sink);
  std::shared_ptr<const PlanStep> plan = upgrade_plan_of(query, sink.kind);
  if (!writers.empty() && writers.front()->upgrade_plan)
    validate(*writers.front()->upgrade_plan, *plan);
  register_schemas(sink, settings_.schema_registry_url, true);
  if (writers.empty())
    return start_query(
        std::string(old.kind == SourceKind::kTable ? "CTAS_" : "CSAS_") + old.name + "_", query,
        sink, text);
  PersistentQuery& q = *writers.front();
  // The id, application id and counters stay: the new topology names its stores and internal
  // topics as the old one did, so it carries on from the old one's state.
  streams::Topology topology = plan_query(query, sink, q.counters);
  q.statement = text;
  q.sources = {query.from->name};
  for (const auto& j : query.joins) q.sources.push_back(j.right->name);
  q.topology = std::move(topology);
  q.upgrade_plan = std::move(plan);
  q.execution_plan = logical_plan(query, sink.name);
  StatementResult r;
  r.message = "Created query with ID " + q.id;
  r.query_id = q.id;
  r.affected_queries.push_back(q.id);  // the runner restarts it with its new topology
  return r;
}

}  // namespace oxbow::sql
