// The physical plan built from the logical tree, as ksqlDB's SchemaKStream/SchemaKTable calls lay
// out its execution steps: a source step for each source (re-keyed and its columns prefixed with
// its alias in a join), a join step over both sides, WHERE's filter, PARTITION BY's re-key, the
// table functions' flat map, an aggregation's Prepare-GroupBy-Aggregate-HavingFilter-Project
// steps, the projection and the sink. Each step knows how ksqlDB's upgrade validation treats it.
#include "sql/physical/physical_internal.h"
#include "sql/physical/physical_plan.h"

namespace oxbow::sql::physical {

namespace {

using logical::Node;
using logical::NodeKind;

std::string expressions_text(const std::vector<const BoundExpr*>& exprs) {
  std::vector<std::string> texts;
  for (const BoundExpr* e : exprs) texts.push_back(format(*e->parsed));
  return list_text(texts);
}

bool is_table(const logical::Schema& schema) {
  return schema.kind == SourceKind::kTable;
}

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

const char* join_type_text(parser::JoinType type) {
  switch (type) {
    case parser::JoinType::kInner:
      return "INNER";
    case parser::JoinType::kLeft:
      return "LEFT";
    case parser::JoinType::kRight:
      return "RIGHT";
    case parser::JoinType::kFull:
      return "OUTER";
  }
  return "INNER";
}

class Builder {
 public:
  Builder(const BoundQuery& q, const DataSource& sink) : q_(q), sink_(sink) {}

  StepPtr build(const Node& n) {
    switch (n.kind) {
      case NodeKind::kSource:
        return source(n, "KsqlTopic");
      case NodeKind::kJoin:
        return join(n);
      case NodeKind::kFilter:
        return filter(n);
      case NodeKind::kPartitionBy:
        return partition_by(n);
      case NodeKind::kAggregate:
        return aggregate(n);
      case NodeKind::kTableFunction: {
        auto step = over(n, build(n.input()), "StreamFlatMap", "FlatMap", Check::kUnsupported);
        step->details = {{"tableFunctions", expressions_text(n.calls)}};
        return step;
      }
      case NodeKind::kProject:
        return project(n);
      case NodeKind::kSink:
        return sink(n);
    }
    return nullptr;
  }

 private:
  // A step of `type` over `input`, giving `n`'s rows.
  static std::shared_ptr<Step> over(const Node& n, StepPtr input, std::string type,
                                    std::string context, Check check) {
    auto step = std::make_shared<Step>();
    step->type = std::move(type);
    step->context = std::move(context);
    step->schema = n.schema;
    step->check = check;
    if (input) step->sources.push_back(std::move(input));
    return step;
  }
  void internal_formats(Step& step) const {
    step.key_format = q_.from->formats.key_format;
    step.value_format = q_.from->formats.value_format;
  }

  // A source step: its topic, formats and schema; `prefix` names its context (KsqlTopic, or
  // KafkaTopic_<side> in a join).
  StepPtr source(const Node& n, const std::string& prefix) const {
    const DataSource& s = *n.source;
    bool table = s.kind == SourceKind::kTable;
    auto step = over(n, nullptr, "", prefix + "/Source", Check::kUnsupported);
    if (s.window) {
      step->type = table ? "WindowedTableSource" : "WindowedStreamSource";
    } else {
      step->type = table ? "TableSource" : "StreamSource";
      step->check = Check::kSource;
      step->enforcing = !table;
      step->compared = {{"topicName", s.topic}};
    }
    step->key_format = s.formats.key_format;
    step->value_format = s.formats.value_format;
    step->details = {{"topicName", s.topic}};
    step->columns_read = n.columns_read;
    return step;
  }

  // Names of the steps of the join `joins_after` joins below the outermost: nested ones "L_".
  static std::string level(size_t joins_after) {
    std::string prefix;
    for (size_t i = 0; i < joins_after; ++i) prefix += "L_";
    return prefix;
  }

  // The key format of the rows `n` gives: its source's, or its join's.
  std::string key_format_of(const Node& n) const {
    if (n.kind == NodeKind::kSource) return n.source->formats.key_format;
    if (n.kind == NodeKind::kJoin) return join_key_format(n);
    return key_format_of(n.input());
  }
  // ksqlDB's JoinNode.resolveKeyFormats: the left side's key format when it keeps its keys,
  // else the right side's when it does, else the first key format of the sources joined that
  // is not NONE (KAFKA, ksqlDB's default, when none has one). A foreign-key join keeps the left
  // table's keys.
  std::string join_key_format(const Node& n) const {
    if (!n.rekey_left || n.join->kind == JoinKind::kForeignKey) return key_format_of(n.input(0));
    if (!n.rekey_right) return key_format_of(n.input(1));
    std::vector<const DataSource*> joined = {q_.from};
    for (const auto& j : q_.joins) {
      joined.push_back(j.right);
      if (&j == n.join) break;
    }
    for (const DataSource* s : joined)
      if (s->formats.key_format != "NONE") return s->formats.key_format;
    return "KAFKA";
  }

  // One side of a join: its source or the joins below, the pushed-down filter, its re-key by the
  // join expression (when the optimizer found its rows keyed otherwise, or they are keyed in
  // another key format than the join's), and its columns prefixed with its alias.
  StepPtr join_side(const Node& join, const Node& n, const BoundExpr& key, bool right,
                    size_t joins_after) {
    std::string side = level(joins_after) + (right ? "Right" : "Left");
    bool rekey = right ? join.rekey_right : join.rekey_left;
    if (join.join->kind != JoinKind::kForeignKey && key_format_of(n) != join_key_format(join))
      rekey = true;
    const Node* source = &n;
    StepPtr step;
    if (n.kind == NodeKind::kJoin) return rekey ? rekeyed(n, build(n), key, join, side) : build(n);
    if (n.kind == NodeKind::kFilter) {  // WHERE's conjuncts pushed below the first join
      source = &n.input();
      auto filter = over(n, this->source(*source, "KafkaTopic_" + side), "StreamFilter",
                         "PushedDownWhereFilter", Check::kPassive);
      filter->details = {{"filterExpression", expressions_text(n.predicates)}};
      filter->expressions = n.predicates;
      step = filter;
    } else {
      step = this->source(n, "KafkaTopic_" + side);
    }
    if (rekey) step = rekeyed(*source, step, key, join, side);
    bool table = is_table(source->schema);
    auto alias = over(*source, step, table ? "TableSelect" : "StreamSelect", "PrependAlias" + side,
                      Check::kPassive);
    return alias;
  }
  // `step` re-keyed by `key` into the join's key format (ksqlDB's <side>SourceKeyed): a stream
  // through a repartition, a table (only ever into another key format) through its changes.
  StepPtr rekeyed(const Node& n, StepPtr step, const BoundExpr& key, const Node& join,
                  const std::string& side) const {
    bool table = is_table(n.schema);
    auto keyed = over(n, std::move(step), table ? "TableSelectKey" : "StreamSelectKey",
                      side + "SourceKeyed", Check::kMatch);
    // The side's own column, before its columns take the alias.
    std::string text = key.kind == BoundKind::kColumn
                           ? q_.scope.columns[static_cast<size_t>(key.column)].name
                           : format(*key.parsed);
    keyed->compared = {{"keyExpressions", list_text({text})}};
    keyed->schema.window.reset();
    keyed->key_format = join_key_format(join);
    keyed->value_format = q_.from->formats.value_format;
    return keyed;
  }

  StepPtr join(const Node& n) {
    const BoundJoin& j = *n.join;
    size_t below = 0;  // the joins under this one
    while (below < q_.joins.size() && &q_.joins[below] != &j) ++below;
    size_t joins_after = q_.joins.size() - 1 - below;
    auto step =
        over(n, nullptr, join_step(j.kind), level(joins_after) + "Join", Check::kUnsupported);
    step->sources.push_back(join_side(n, n.input(0), *j.left_key, false, joins_after));
    step->sources.push_back(join_side(n, n.input(1), *j.right_key, true, joins_after));
    std::string key;
    for (const auto& c : n.schema.columns)
      if (c.key) key = c.name;
    step->details = {{"joinType", join_type_text(j.type)}, {"keyColName", key}};
    if (j.kind != JoinKind::kForeignKey) {
      internal_formats(*step);
      step->key_format = join_key_format(n);
    }
    return step;
  }

  StepPtr filter(const Node& n) {
    StepPtr input = build(n.input());
    bool table = is_table(n.input().schema);
    auto step = over(n, input, table ? "TableFilter" : "StreamFilter",
                     n.having ? "Aggregate/HavingFilter" : "WhereFilter", Check::kPassive);
    step->details = {{"filterExpression", expressions_text(n.predicates)}};
    return step;
  }

  // PARTITION BY the key the rows already have is no step (ksqlDB's selectKey returns its input).
  StepPtr partition_by(const Node& n) {
    StepPtr input = build(n.input());
    if (n.keeps_key) return input;
    bool table = is_table(n.schema);
    auto step =
        over(n, input, table ? "TableSelectKey" : "StreamSelectKey", "PartitionBy", Check::kMatch);
    step->compared = {{"keyExpressions", n.keys.empty() ? "[null]" : expressions_text(n.keys)}};
    internal_formats(*step);
    return step;
  }

  // GROUP BY the source's key (the optimizer's decision) stays where it is, with no repartition,
  // unless the records' keys are windowed (the window is part of their bytes) or the result's key
  // format is another.
  bool groups_by_key(const Node& aggregate) const {
    return aggregate.groups_by_key && !q_.from->window &&
           sink_.formats.key_format == q_.from->formats.key_format;
  }

  // ksqlDB's AggregateNode: the columns the aggregation reads selected (Prepare), grouped,
  // aggregated; HAVING and the projection come as the nodes above.
  StepPtr aggregate(const Node& n) {
    const Node& input = n.input();
    bool table = is_table(input.schema);
    auto prepare = over(input, build(input), table ? "TableSelect" : "StreamSelect",
                        "Aggregate/Prepare", Check::kPassive);
    std::shared_ptr<Step> group;
    if (table) {
      group = over(input, prepare, "TableGroupBy", "Aggregate/GroupBy", Check::kUnsupported);
    } else if (groups_by_key(n)) {
      group = over(input, prepare, "StreamGroupByKey", "Aggregate/GroupBy", Check::kMatch);
    } else {
      group = over(input, prepare, "StreamGroupBy", "Aggregate/GroupBy", Check::kMatch);
      group->compared = {{"group by clause", expressions_text(n.keys)}};
    }
    group->details = {{"groupByExpressions", expressions_text(n.keys)}};
    internal_formats(*group);
    std::shared_ptr<Step> step;
    if (table) {
      step = over(n, group, "TableAggregate", "Aggregate/Aggregate", Check::kUnsupported);
    } else if (n.window) {
      step = over(n, group, "StreamWindowedAggregate", "Aggregate/Aggregate", Check::kUnsupported);
    } else {
      AggregateAnalysis analysis(q_);
      step = over(n, group, "StreamAggregate", "Aggregate/Aggregate", Check::kMatch);
      step->compared = {{"columns not part of aggregate", analysis.required_text()},
                        {"aggregate functions", analysis.calls_text()},
                        {"aggregate argument types", analysis.arg_types_text()}};
    }
    step->details = {{"aggregationFunctions", expressions_text(n.calls)}};
    if (q_.emit == parser::EmitType::kFinal) step->details.push_back({"emitStrategy", "FINAL"});
    internal_formats(*step);
    return step;
  }

  // The projection: the aggregation's (Aggregate/Project) or the query's.
  StepPtr project(const Node& n) {
    const Node* below = &n.input();
    if (below->kind == NodeKind::kFilter && below->having) below = &below->input();
    bool aggregated = below->kind == NodeKind::kAggregate;
    bool table = is_table(n.input().schema);
    auto step = over(n, build(n.input()), table ? "TableSelect" : "StreamSelect",
                     aggregated ? "Aggregate/Project" : "Project", Check::kPassive);
    std::vector<std::string> selected;
    for (const auto& c : q_.columns)
      if (!c.key) selected.push_back(format(*c.expr->parsed) + " AS " + c.name);
    step->details = {{"selectExpressions", list_text(selected)}};
    return step;
  }

  // The sink (a transient query has none: its rows go to the client).
  StepPtr sink(const Node& n) {
    if (sink_.name.empty()) return build(n.input());
    bool stream = sink_.kind == SourceKind::kStream;
    auto step =
        over(n, build(n.input()), stream ? "StreamSink" : "TableSink", sink_.name, Check::kMatch);
    step->enforcing = stream;
    step->key_format = sink_.formats.key_format;
    step->value_format = sink_.formats.value_format;
    step->details = {{"topicName", sink_.topic}};
    return step;
  }

  const BoundQuery& q_;
  const DataSource& sink_;
};

}  // namespace

StepPtr build_physical_plan(const logical::Node& root, const BoundQuery& query,
                            const DataSource& sink) {
  return Builder(query, sink).build(root);
}

}  // namespace oxbow::sql::physical
