// The joins of a query, checked as ksqlDB checks them (docs/sql/ksqldb-facts.md §4.4): the kinds
// of join each pair of sources allows, WITHIN where it is needed and nowhere else, one equality
// between one column of each side, equal key types, tables joined on their primary key (or, from
// a table's other column, a foreign-key join), partition counts that agree, no self joins.
#include <optional>
#include <set>

#include "sql/binder/expression_binder.h"
#include "sql/binder/query_binder.h"
#include "sql/binder/sql_error.h"

namespace oxbow::sql {

namespace {

using parser::JoinType;

std::string join_text(const std::string& left, JoinType type, const std::string& right) {
  switch (type) {
    case JoinType::kInner:
      return left + " [INNER] JOIN " + right;
    case JoinType::kLeft:
      return left + " [LEFT] OUTER JOIN " + right;
    case JoinType::kRight:
      return left + " [RIGHT] OUTER JOIN " + right;
    case JoinType::kFull:
      return left + " [FULL] OUTER JOIN " + right;
  }
  return left + " JOIN " + right;
}

void sources_of(const BoundExpr& e, const Scope& scope, std::set<std::string>& out) {
  if (e.kind == BoundKind::kColumn) out.insert(scope.columns[e.column].source);
  for (const auto& a : e.args) sources_of(*a, scope, out);
}

std::string listed(const std::set<std::string>& sources) {
  std::string out;
  for (const auto& s : sources) out += (out.empty() ? "`" : ", `") + s + "`";
  return out;
}

std::string window_name(const DataSource& s) {
  if (!s.window) return "";
  switch (s.window->type) {
    case SourceWindowType::kSession:
      return "SESSION";
    case SourceWindowType::kHopping:
      return "HOPPING";
    case SourceWindowType::kTumbling:
      return "TUMBLING";
  }
  return "";
}

// Whether `key` is the single primary-key column of the source named `alias` in `scope`.
bool is_primary_key(const BoundExpr& key, const Scope& scope, const DataSource& source) {
  if (key.kind != BoundKind::kColumn) return false;
  const ScopeColumn& c = scope.columns[key.column];
  int keys = 0;
  for (const auto& col : source.columns) keys += col.ns == ColumnNamespace::kKey;
  return keys == 1 && c.ns == ColumnNamespace::kKey && !c.pseudo;
}

void check_windows(const DataSource& left, const std::string& left_alias, const DataSource& right,
                   const std::string& right_alias) {
  if (left.window.has_value() != right.window.has_value()) {
    const auto& [windowed, windowed_alias, plain_alias] =
        left.window ? std::tie(left, left_alias, right_alias)
                    : std::tie(right, right_alias, left_alias);
    throw SqlError("Can not join windowed source to non-windowed source.\n`" + windowed_alias +
                   "` is " + window_name(windowed) + " windowed\n`" + plain_alias +
                   "` is not windowed");
  }
  if (left.window && (left.window->type == SourceWindowType::kSession) !=
                         (right.window->type == SourceWindowType::kSession))
    throw SqlError("Incompatible windowed sources.\nLeft source: " + window_name(left) +
                   "\nRight source: " + window_name(right) +
                   "\nSession windowed sources can only be joined to other session windowed "
                   "sources, and may still not result in expected behaviour as session bounds "
                   "must be an exact match for the join to work\nHopping and tumbling windowed "
                   "sources can only be joined to other hopping and tumbling windowed sources");
}

// Column references compare as ksqlDB compares its qualified references: source and name.
std::string identity(const BoundQuery& q, const BoundExpr& e) {
  if (e.kind != BoundKind::kColumn) return format(*e.parsed);
  const ScopeColumn& c = q.scope.columns[static_cast<size_t>(e.column)];
  return c.source + "." + c.name;
}

// The number ksqlDB's alias generator reads in a column named ROWKEY (0) or ROWKEY_<n>, if any.
std::optional<int> rowkey_number(const std::string& name) {
  static const std::string kPrefix = "ROWKEY";
  if (name == kPrefix) return 0;
  if (name.size() <= kPrefix.size() + 1 || name.compare(0, kPrefix.size() + 1, kPrefix + "_") != 0)
    return std::nullopt;
  std::string digits = name.substr(kPrefix.size() + 1);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(digits);
}

}  // namespace

std::vector<const BoundExpr*> viable_join_key_columns(const BoundQuery& q, size_t joins) {
  std::vector<const BoundExpr*> viable;
  std::set<std::string> equivalent;
  for (size_t n = 0; n < joins; ++n) {
    const BoundJoin& j = q.joins[n];
    if (j.type == JoinType::kFull) {  // either side may be NULL: neither is the key
      viable.clear();
      equivalent.clear();
      continue;
    }
    std::string l = identity(q, *j.left_key), r = identity(q, *j.right_key);
    std::set<std::string> next = {l, r};
    if (equivalent.count(l) || equivalent.count(r))
      next.insert(equivalent.begin(), equivalent.end());
    std::vector<const BoundExpr*> candidates = viable;
    candidates.push_back(j.left_key.get());
    candidates.push_back(j.right_key.get());
    viable.clear();
    std::set<std::string> seen;
    for (const BoundExpr* c : candidates) {
      std::string id = identity(q, *c);
      if (c->kind == BoundKind::kColumn && next.count(id) && seen.insert(id).second)
        viable.push_back(c);
    }
    equivalent = std::move(next);
  }
  return viable;
}

std::string plan_name(const BoundQuery& q, int column) {
  const ScopeColumn& c = q.scope.columns[static_cast<size_t>(column)];
  if (q.joins.empty() || c.pseudo) return c.name;
  return c.source + "_" + c.name;
}

std::string synthetic_key_name(const BoundQuery& q, size_t joins) {
  std::vector<const DataSource*> sources = {q.from};
  for (size_t n = 0; n < joins; ++n) sources.push_back(q.joins[n].right);
  std::set<int> used;
  for (const DataSource* s : sources)
    for (const auto& c : s->columns)
      if (auto number = rowkey_number(c.name)) used.insert(*number);
  int next = 0;
  while (used.count(next)) ++next;
  return next == 0 ? "ROWKEY" : "ROWKEY_" + std::to_string(next);
}

void bind_joins(const parser::Query& query, const Catalog& catalog,
                const FunctionRegistry& functions, BoundQuery& bound) {
  SourceKind left_kind = bound.from->kind;
  std::string left_name = bound.from->name;
  std::set<std::string> joined = {bound.from->name};
  for (size_t n = 0; n < query.joins.size(); ++n) {
    const parser::JoinClause& clause = query.joins[n];
    BoundJoin join;
    join.type = clause.type;
    join.within = clause.within;
    join.right = catalog.find_source(clause.right.source.text);
    if (!join.right) throw SqlError(clause.right.source.text + " does not exist.");
    const DataSource& right = *join.right;
    join.alias = clause.right.alias ? clause.right.alias->text : right.name;
    if (right.name == bound.from->name && n == 0)
      throw SqlError("Can not join '" + right.name + "' to '" + right.name +
                     "': self joins are not yet supported.");
    if (!joined.insert(right.name).second)
      throw SqlError(
          "N-way joins do not support multiple occurrences of the same source. "
          "Source: '" +
          right.name + "'");
    std::string text = join_text(left_name, clause.type, right.name);
    if (left_kind == SourceKind::kTable && right.kind == SourceKind::kStream)
      throw SqlError(
          "Invalid join order: table-stream joins are not supported; only "
          "stream-table joins. Got " +
          text + ".");
    bool stream_stream = left_kind == SourceKind::kStream && right.kind == SourceKind::kStream;
    if (stream_stream && !clause.within)
      throw SqlError(
          "Stream-Stream joins must have a WITHIN clause specified. None was provided. To learn "
          "about how to specify a WITHIN clause with a stream-stream join, please visit: "
          "https://docs.confluent.io/current/ksql/docs/syntax-reference.html"
          "#create-stream-as-select");
    if (!stream_stream && clause.within)
      throw SqlError(std::string("A window definition was provided for a ") +
                     (left_kind == SourceKind::kStream ? "Stream-Table" : "Table-Table") +
                     " join. These joins are not windowed. Please drop the window definition (ie."
                     " the WITHIN clause) and try to execute your join again.");
    bool stream_table = left_kind == SourceKind::kStream && right.kind == SourceKind::kTable;
    if (stream_table && (clause.type == JoinType::kFull || clause.type == JoinType::kRight))
      throw SqlError(std::string("Invalid join type: ") +
                     (clause.type == JoinType::kFull ? "full-outer" : "right-outer") +
                     " join not supported for stream-table join. Got " + text + ".");
    if (n == 0) check_windows(*bound.from, bound.from_alias, right, join.alias);

    // The condition: one equality, one source a side, the source joined on one of them.
    bound.scope.add_source(right, join.alias);
    const parser::Expr& on = *clause.on;
    if (on.kind == parser::ExprKind::kAnd)
      throw SqlError(
          "Invalid join condition: joins on multiple conditions are not yet "
          "supported. Got " +
          format(on) + ".");
    if (on.kind != parser::ExprKind::kComparison || on.text != "=")
      throw SqlError("Unsupported join expression: " + format(on));
    ExpressionBinder binder(bound.scope, functions, catalog, "JOIN ON");
    BoundExprPtr a = binder.bind(*on.args[0]), b = binder.bind(*on.args[1]);
    std::set<std::string> a_sources, b_sources;
    sources_of(*a, bound.scope, a_sources);
    sources_of(*b, bound.scope, b_sources);
    for (const auto* side : {&a_sources, &b_sources})
      if (side->size() != 1) {
        const parser::Expr& bad = *on.args[side == &a_sources ? 0 : 1];
        throw SqlError("Invalid comparison expression '" + format(bad) + "' in join '" +
                       format(on) +
                       "'. Each side of the join comparision must contain "
                       "references from exactly one source.");
      }
    if (a_sources == b_sources)
      throw SqlError(
          "Each side of the join must reference exactly one source and not the same "
          "source. Left side references " +
          listed(a_sources) + " and right references " + listed(b_sources));
    if (a_sources.count(join.alias)) std::swap(a, b), std::swap(a_sources, b_sources);
    if (!b_sources.count(join.alias))
      throw SqlError("A join criteria is expected to reference the source (`" + join.alias +
                     "`) in the FROM clause, instead the right source references " +
                     listed(b_sources) + " and the left source references " + listed(a_sources));
    std::string condition = format(*a->parsed) + " = " + format(*b->parsed);
    if (a->type && b->type && !a->type->equals(*b->type))
      throw SqlError("Invalid join condition: types don't match. Got " + format(*a->parsed) + "{" +
                     a->type->to_string() + "} = " + format(*b->parsed) + "{" +
                     b->type->to_string() + "}.");

    // Kinds, and the tables' keys.
    if (stream_stream) {
      join.kind = JoinKind::kStreamStream;
    } else if (stream_table) {
      join.kind = JoinKind::kStreamTable;
      if (!is_primary_key(*b, bound.scope, right))
        throw SqlError(
            "Invalid join condition: stream-table joins require to join on the "
            "table's primary key. Got " +
            condition + ".");
    } else {
      if (!is_primary_key(*b, bound.scope, right))
        throw SqlError(
            "Invalid join condition: table-table joins require to join on the "
            "primary key of the right input table. Got " +
            condition + ".");
      // Joined from anything but a single-column key of a left table: a foreign-key join.
      bool left_on_key = false;
      if (a->kind == BoundKind::kColumn) {
        const ScopeColumn& c = bound.scope.columns[a->column];
        size_t keys = 0;
        for (const auto& other : bound.scope.columns)
          if (other.source == c.source && !other.pseudo && other.ns == ColumnNamespace::kKey)
            ++keys;
        left_on_key = c.ns == ColumnNamespace::kKey && !c.pseudo && keys == 1;
      }
      join.kind = left_on_key ? JoinKind::kTableTable : JoinKind::kForeignKey;
      if (!left_on_key && n > 0)
        throw SqlError(
            "Invalid join condition: foreign-key table-table joins are not supported "
            "as part of n-way joins. Got " +
            condition + ".");
      if (join.kind == JoinKind::kForeignKey && clause.type == JoinType::kFull)
        throw SqlError(
            "Invalid join type: full-outer join not supported for foreign-key "
            "table-table join. Got " +
            text + ".");
      if (join.kind == JoinKind::kForeignKey && right.window)
        throw SqlError("Foreign-key table-table joins are not supported on windowed tables.");
      if (join.kind == JoinKind::kForeignKey && clause.type == JoinType::kRight)
        throw SqlError("RIGHT OUTER JOIN on a foreign key is not supported");
    }
    const DataSource& left_source = *bound.from;
    if (join.kind != JoinKind::kForeignKey && left_source.partitions && right.partitions &&
        *left_source.partitions != *right.partitions)
      throw SqlError("Can't join `" + bound.from_alias + "` with `" + join.alias +
                     "` since the number of partitions don't match. `" + bound.from_alias +
                     "` partitions = " + std::to_string(*left_source.partitions) + "; `" +
                     join.alias + "` partitions = " + std::to_string(*right.partitions) +
                     ". Please repartition either one so that the number of partitions match.");
    join.left_key = std::move(a);
    join.right_key = std::move(b);
    bound.joins.push_back(std::move(join));
    left_kind = stream_stream || stream_table ? SourceKind::kStream : SourceKind::kTable;
    left_name = text;
  }
  // ksqlDB's analyzer lets only a projection without GROUP BY name the synthetic key.
  size_t joins = bound.joins.size();
  if (joins == 0 || !query.group_by.empty()) return;
  const BoundJoin& last = bound.joins.back();
  if (last.kind == JoinKind::kForeignKey || !viable_join_key_columns(bound, joins).empty()) return;
  bound.scope.synthetic_key =
      SyntheticKey{synthetic_key_name(bound, joins), last.left_key->parsed, last.right_key->parsed};
}

}  // namespace oxbow::sql
