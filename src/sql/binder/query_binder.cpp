#include "sql/binder/query_binder.h"

#include <algorithm>
#include <set>

#include "sql/binder/expression_binder.h"
#include "sql/binder/sql_error.h"

namespace oxbow::sql {

namespace {

using parser::Expr;
using parser::ExprKind;

bool has_aggregate(const BoundExpr& e) {
  if (e.aggregate) return true;
  for (const auto& a : e.args)
    if (has_aggregate(*a)) return true;
  return false;
}

void aggregate_names(const BoundExpr& e, std::set<std::string>& out) {
  if (e.aggregate) out.insert(e.op);
  for (const auto& a : e.args) aggregate_names(*a, out);
}

// Whether every column `e` reads outside aggregate calls is one of the grouping expressions (as
// ksqlDB matches them: by their text, so `a + b` is not `b + a`).
bool covered(const BoundExpr& e, const std::set<std::string>& grouped, const Scope& scope) {
  if (grouped.count(format(*e.parsed)) || e.aggregate) return true;
  if (e.kind == BoundKind::kColumn) {
    const ScopeColumn& c = scope.columns[static_cast<size_t>(e.column)];
    return c.pseudo && (c.name == "WINDOWSTART" || c.name == "WINDOWEND");  // the key's window
  }
  for (const auto& a : e.args)
    if (!covered(*a, grouped, scope)) return false;
  return true;
}

// "A", "A and B", "A, B and C" (or with " or "), as ksqlDB's messages list names.
std::string and_list(const std::vector<std::string>& names, const char* last = " and ") {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return out;
}

class QueryBinder {
 public:
  QueryBinder(const parser::Query& q, const Catalog& catalog, const FunctionRegistry& functions,
              const QueryContext& context)
      : q_(q), catalog_(catalog), functions_(functions), context_(context) {}

  BoundQuery run() {
    bind_sources();
    if (q_.where) out_.where = binder("WHERE").bind_condition(*q_.where);
    bind_grouping();
    bind_projection();
    bind_aggregation();
    bind_partition_by();
    name_columns();
    out_.window = q_.window;
    out_.emit = q_.emit;
    out_.limit = q_.limit;
    return std::move(out_);
  }

 private:
  ExpressionBinder binder(const char* clause) {
    return ExpressionBinder(out_.scope, functions_, catalog_, clause);
  }

  void bind_sources() {
    out_.from = catalog_.find_source(q_.from.source.text);
    if (!out_.from) throw SqlError(q_.from.source.text + " does not exist.");
    out_.from_alias = q_.from.alias ? q_.from.alias->text : out_.from->name;
    out_.scope.add_source(*out_.from, out_.from_alias);
    bind_joins(q_, catalog_, functions_, out_);
    // A windowed aggregation's rows carry their window's bounds.
    if (q_.window && !out_.from->window)
      for (const char* bound : {"WINDOWSTART", "WINDOWEND"})
        out_.scope.columns.push_back(
            {out_.from_alias, bound, SqlType::bigint(), ColumnNamespace::kKey, true});
  }

  void bind_grouping() {
    if (q_.window && q_.group_by.empty())
      throw SqlError("WINDOW clause requires a GROUP BY clause.");
    if (q_.window && out_.from->kind == SourceKind::kTable && q_.joins.empty())
      throw SqlError("Windowing not supported for table aggregations.");
    std::set<std::string> seen;
    for (const auto& g : q_.group_by) {
      BoundExprPtr b = binder("GROUP BY").bind(*g);
      std::set<std::string> aggregates;
      aggregate_names(*b, aggregates);
      if (!aggregates.empty())
        throw SqlError("GROUP BY does not support aggregate functions: " + *aggregates.begin() +
                       " is an aggregate function.");
      if (!seen.insert(format(*g)).second)
        throw SqlError("Duplicate GROUP BY expression: " + format(*g));
      out_.group_by.push_back(std::move(b));
    }
  }

  void bind_projection() {
    for (const auto& item : q_.select) {
      if (item.expr->kind == ExprKind::kStar) {
        expand_star(item.expr->qualifier);
        continue;
      }
      BoundExprPtr b = binder("SELECT").bind(*item.expr);
      std::string name = item.alias ? item.alias->text : "";
      if (item.alias && is_system_column_name(name))
        throw SqlError("`" + name +
                       "` is a reserved column name. You cannot use it as an alias for a column.");
      // A join's qualified pseudo column is named `ALIAS_ROWTIME`, which is no reserved name. A
      // transient query (push or pull) may select one as it is, as ksqlDB allows.
      bool prefixed = !out_.joins.empty() && !item.expr->qualifier.empty();
      if (!item.alias && !prefixed && context_.sink && b->kind == BoundKind::kColumn &&
          out_.scope.columns[b->column].pseudo)
        throw SqlError("Reserved column name in select: `" + out_.scope.columns[b->column].name +
                       "`. Please remove or alias the column.");
      pending_.push_back({std::move(name), b->type, false, nullptr});
      select_.push_back(std::move(b));
    }
  }

  void expand_star(const std::string& qualifier) {
    if (!qualifier.empty() && std::find(out_.scope.sources.begin(), out_.scope.sources.end(),
                                        qualifier) == out_.scope.sources.end())
      throw SqlError("'" + qualifier + "' is not a valid stream/table name or alias.");
    if (qualifier.empty() && out_.scope.synthetic_key) {  // ksqlDB puts it first
      stars_.push_back(std::make_unique<Expr>());
      stars_.back()->kind = ExprKind::kColumn;
      stars_.back()->name = out_.scope.synthetic_key->name;
      BoundExprPtr b = binder("SELECT").bind(*stars_.back());
      pending_.push_back({out_.scope.synthetic_key->name, b->type, false, nullptr});
      select_.push_back(std::move(b));
    }
    // Each source's keys, then (from a join, as ksqlDB's PlanNode.orderColumns) a windowed
    // source's WINDOWSTART and WINDOWEND, then its values; never ROWTIME and the like.
    auto is_bound = [](const ScopeColumn& c) {
      return c.pseudo && (c.name == "WINDOWSTART" || c.name == "WINDOWEND");
    };
    for (const auto& source : out_.scope.sources) {
      if (!qualifier.empty() && source != qualifier) continue;
      for (int pass = 0; pass < 3; ++pass)
        for (size_t i = 0; i < out_.scope.columns.size(); ++i) {
          const ScopeColumn& c = out_.scope.columns[i];
          bool wanted = pass == 1 ? !out_.joins.empty() && is_bound(c)
                                  : !c.pseudo && (c.ns == ColumnNamespace::kKey) == (pass == 0);
          if (c.source == source && wanted) add_star_column(i);
        }
    }
  }

  void add_star_column(size_t i) {
    const ScopeColumn& c = out_.scope.columns[i];
    stars_.push_back(std::make_unique<Expr>());
    stars_.back()->kind = ExprKind::kColumn;
    Expr& ref = *stars_.back();
    ref.name = c.name;
    ref.qualifier = c.source;
    auto b = std::make_unique<BoundExpr>();
    b->kind = BoundKind::kColumn;
    b->type = c.type;
    b->column = static_cast<int>(i);
    b->parsed = &ref;
    std::string name = out_.joins.empty() ? c.name : c.source + "_" + c.name;
    pending_.push_back({name, c.type, false, nullptr});
    select_.push_back(std::move(b));
  }

  void bind_aggregation() {
    bool aggregates = false;
    for (const auto& s : select_) aggregates = aggregates || has_aggregate(*s);
    bool table_functions = false;
    for (const auto& s : select_) table_functions = table_functions || has_table_function(*s);
    if (table_functions && (aggregates || !q_.group_by.empty()))
      throw SqlError("Table functions cannot be used with aggregations.");
    // ksqlDB's QueryAnalyzer looks at the FROM source only: a stream joined to tables may.
    if (table_functions && out_.from->kind == SourceKind::kTable)
      throw SqlError("Table source is not supported with table functions");
    out_.table_functions = table_functions;
    if (q_.having) {
      out_.having = binder("HAVING").bind_condition(*q_.having);
      aggregates = aggregates || has_aggregate(*out_.having);
    }
    if (q_.group_by.empty()) {
      if (q_.having) throw SqlError("HAVING clause requires a GROUP BY clause.");
      if (aggregates)
        throw SqlError(
            "Aggregate functions require a GROUP BY clause (ksqlDB does not aggregate "
            "a whole stream into one row).");
      if (q_.emit == parser::EmitType::kFinal)
        throw SqlError("EMIT FINAL is only supported for windowed aggregations.");
      return;
    }
    if (!aggregates)
      throw SqlError(
          "GROUP BY requires aggregate functions in either the SELECT or HAVING "
          "clause.");
    if (q_.emit == parser::EmitType::kFinal && !q_.window)
      throw SqlError("EMIT FINAL is only supported for windowed aggregations.");
    out_.aggregate = true;
    std::set<std::string> grouped;
    for (const auto& g : out_.group_by) grouped.insert(format(*g->parsed));
    std::vector<std::string> uncovered;
    for (const auto& s : select_)
      if (!covered(*s, grouped, out_.scope)) uncovered.push_back(format(*s->parsed));
    if (!uncovered.empty()) {
      std::string listed;
      for (const auto& u : uncovered) listed += (listed.empty() ? "" : ", ") + u;
      throw SqlError("Non-aggregate SELECT expression(s) not part of GROUP BY: " + listed +
                     "\nEither add the column(s) to the GROUP BY or remove them from the SELECT.");
    }
    if (out_.having && !covered(*out_.having, grouped, out_.scope))
      throw SqlError(
          "Non-aggregate HAVING expression not part of GROUP BY: " + format(*out_.having->parsed) +
          "\nConsider switching the HAVING clause to a WHERE clause before the GROUP "
          "BY.");
    if (out_.from->kind == SourceKind::kTable && out_.joins.empty()) {
      std::set<std::string> used;
      for (const auto& s : select_) aggregate_names(*s, used);
      std::vector<std::string> stream_only;
      for (const char* f : {"EARLIEST_BY_OFFSET", "LATEST_BY_OFFSET", "MAX", "MIN"})
        if (used.count(f)) stream_only.push_back(f);
      if (!stream_only.empty())
        throw SqlError("The aggregation functions " + and_list(stream_only) +
                       " cannot be applied to a table source, only to a stream source.");
    }
  }

  void bind_partition_by() {
    if (q_.partition_by.empty()) return;
    if (out_.aggregate) throw SqlError("PARTITION BY cannot be used with GROUP BY.");
    bool has_null = false;
    for (const auto& p : q_.partition_by) has_null = has_null || p->kind == ExprKind::kNull;
    if (has_null && q_.partition_by.size() > 1)
      throw SqlError("Cannot PARTITION BY multiple columns including NULL");
    out_.partition_by_null = has_null;
    for (const auto& p : q_.partition_by) {
      if (p->kind == ExprKind::kNull) continue;
      try {
        out_.partition_by.push_back(binder("PARTITION BY").bind(*p));
      } catch (const SqlError& e) {
        std::string what = e.what();
        if (what.find("PARTITION BY column '") == 0) {
          std::string name = what.substr(21, what.find('\'', 21) - 21);
          throw SqlError(what + " '" + name +
                         "' must be a column in the source schema since PARTITION BY is applied "
                         "on the input.");
        }
        throw;
      }
    }
  }

  // The result's columns: keys first, each named as ksqlDB names it.
  void name_columns() {
    std::set<std::string> source_names;
    for (const auto& c : out_.scope.columns) source_names.insert(c.name);
    int generated = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      OutputColumn& c = pending_[i];
      const BoundExpr& e = *select_[i];
      if (!c.name.empty()) continue;
      if (e.kind == BoundKind::kColumn) {
        const ScopeColumn& col = out_.scope.columns[e.column];
        // As ksqlDB's AstSanitizer: a qualified name from a join is prefixed with its source's
        // alias when another source has a column of that name (a pseudo column always).
        bool prefixed = !out_.joins.empty() && !e.parsed->qualifier.empty() &&
                        (col.pseudo || clashes(col.name));
        c.name = prefixed ? col.source + "_" + col.name : col.name;
      } else if (e.parsed->kind == ExprKind::kColumn) {  // the synthetic key, unaliased
        c.name = e.parsed->name;
      } else if (e.kind == BoundKind::kDereference) {
        c.name = e.op;
      } else {
        std::string name;
        do name = "KSQL_COL_" + std::to_string(generated++);
        while (source_names.count(name));
        c.name = name;
      }
    }
    mark_keys();
    std::set<std::string> values;
    for (size_t i = 0; i < pending_.size(); ++i) {
      OutputColumn& c = pending_[i];
      if (!c.key && !values.insert(c.name).second)
        throw SqlError("Duplicate value columns found in schema: `" + c.name + "` " +
                       c.type->to_string());
    }
    bool any_value = false;
    for (const auto& c : pending_) any_value = any_value || !c.key;
    if (!any_value && context_.sink) throw SqlError("The projection contains no value columns.");
    out_.result_kind =
        out_.aggregate || (out_.joins.empty() && out_.from->kind == SourceKind::kTable) ||
                (!out_.joins.empty() && out_.joins.back().kind != JoinKind::kStreamTable &&
                 out_.joins.back().kind != JoinKind::kStreamStream)
            ? SourceKind::kTable
            : SourceKind::kStream;
    for (size_t i = 0; i < pending_.size(); ++i) pending_[i].expr = std::move(select_[i]);
    std::stable_partition(pending_.begin(), pending_.end(),
                          [](const OutputColumn& c) { return c.key; });
    out_.columns = std::move(pending_);
    out_.synthesized = std::move(stars_);
  }

  // Whether more than one of the query's sources has a column `name`.
  bool clashes(const std::string& name) const {
    std::vector<const DataSource*> sources = {out_.from};
    for (const auto& j : out_.joins) sources.push_back(j.right);
    int having = 0;
    for (const DataSource* s : sources)
      having += std::any_of(s->columns.begin(), s->columns.end(),
                            [&name](const Column& c) { return c.name == name; });
    return having > 1;
  }

  // Which projected columns are the result's key, and that a persistent query projects it.
  void mark_keys() {
    std::vector<std::string> wanted;  // the key expressions, as written
    const char* what = "key column";
    if (out_.aggregate) {
      what = "grouping expression";
      for (const auto& g : out_.group_by) wanted.push_back(format(*g->parsed));
    } else if (out_.partition_by_null) {
      return;  // no key: the source's key columns, if projected, are values
    } else if (!out_.partition_by.empty()) {
      what = "partitioning expression";
      for (const auto& p : out_.partition_by) wanted.push_back(format(*p->parsed));
    } else if (!out_.joins.empty() && out_.joins.front().kind == JoinKind::kForeignKey) {
      return mark_foreign_key_join_key();
    } else if (!out_.joins.empty()) {
      return mark_join_key();
    } else {
      for (const auto& c : out_.from->columns)
        if (c.ns == ColumnNamespace::kKey) wanted.push_back(c.name);
    }
    std::vector<std::string> missing;
    for (const auto& w : wanted) {
      bool found = false;
      for (size_t i = 0; i < pending_.size(); ++i)
        if (key_matches(*select_[i], w)) {
          pending_[i].key = true;
          found = true;
        }
      if (!found) missing.push_back(w);
    }
    if (missing.empty() || !context_.sink) return;
    std::string plural = missing.size() > 1 ? "s " : " ";
    std::string example;
    for (const auto& m : missing) example += (example.empty() ? "" : ", ") + m;
    throw SqlError("The query used to build `" + *context_.sink + "` must include the " + what +
                   plural + and_list(missing) + " in its projection (eg, SELECT " + example +
                   "...).");
  }

  bool key_matches(const BoundExpr& projected, const std::string& wanted) const {
    if (format(*projected.parsed) == wanted) return true;
    if (projected.kind != BoundKind::kColumn) return false;
    const ScopeColumn& c = out_.scope.columns[projected.column];
    return c.name == wanted || c.source + "." + c.name == wanted;
  }

  // A foreign-key join's result is keyed by the left table's primary key.
  void mark_foreign_key_join_key() {
    for (const auto& c : out_.from->columns) {
      if (c.ns != ColumnNamespace::kKey) continue;
      bool found = false;
      for (size_t i = 0; i < pending_.size(); ++i)
        if (key_matches(*select_[i], c.name)) found = pending_[i].key = true;
      if (!found && context_.sink)
        throw SqlError(
            "Primary key column missing in projection. For foreign-key table-table "
            "joins, the projection must include all primary key columns from the "
            "left input table (`" +
            out_.from_alias + "`). Missing column: `" + c.name + "`.");
    }
  }

  // A join's result is keyed by the first of its viable key columns (ksqlDB's JoinTree) that the
  // projection selects, or by its synthetic key, which the projection must then select.
  void mark_join_key() {
    if (const auto& synthetic = out_.scope.synthetic_key) {
      for (size_t i = 0; i < pending_.size(); ++i)
        if (format(*select_[i]->parsed) == synthetic->name) return void(pending_[i].key = true);
      if (context_.sink)
        throw SqlError(
            "Key missing from projection (ie, SELECT). See https://cnfl.io/2LV7ouS.\n"
            "The query used to build `" +
            *context_.sink + "` must include the join expression " + synthetic->name +
            " in its projection (eg, SELECT " + synthetic->name + "...).\n" + synthetic->name +
            " was added as a synthetic key column because the join criteria did not "
            "match any source column. This expression must be included in the "
            "projection and may be aliased.");
      return;
    }
    std::vector<const BoundExpr*> viable = viable_join_key_columns(out_, out_.joins.size());
    for (const BoundExpr* v : viable)
      for (size_t i = 0; i < pending_.size(); ++i)
        if (select_[i]->kind == BoundKind::kColumn && select_[i]->column == v->column)
          return void(pending_[i].key = true);
    if (!context_.sink || viable.empty()) return;
    std::vector<std::string> names;
    for (const BoundExpr* v : viable) {
      const ScopeColumn& c = out_.scope.columns[static_cast<size_t>(v->column)];
      names.push_back(c.source + "." + c.name);
    }
    std::string listed = and_list(names, " or ");
    throw SqlError("The query used to build `" + *context_.sink + "` must include the join " +
                   (names.size() == 1 ? "expression " : "expressions ") + listed +
                   " in its projection (eg, SELECT " + names.front() + "...).");
  }

  const parser::Query& q_;
  const Catalog& catalog_;
  const FunctionRegistry& functions_;
  const QueryContext& context_;
  BoundQuery out_;
  std::vector<OutputColumn> pending_;   // the projection's columns, in order
  std::vector<BoundExprPtr> select_;    // their expressions, in the same order
  std::vector<parser::ExprPtr> stars_;  // the column references `*` stands for
};

}  // namespace

BoundQuery bind_query(const parser::Query& query, const Catalog& catalog,
                      const FunctionRegistry& functions, const QueryContext& context) {
  return QueryBinder(query, catalog, functions, context).run();
}

}  // namespace oxbow::sql
