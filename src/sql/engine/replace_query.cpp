// CREATE OR REPLACE ... AS SELECT over a sink that exists (docs/sql/ksqldb-facts.md §1.8): the
// query writing into it keeps its id and gets the new statement's topology, for the changes
// ksqlDB allows: another filter or projection over the same stream, value columns added at the
// end. A query that aggregates, joins or reads a windowed source cannot be replaced, nor a sink
// written by several queries or a SOURCE stream or table.
#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"

namespace oxbow::sql {

namespace {

// `old` upgrades to `replacement`: the same keys, the old value columns first and unchanged.
bool upgrade_compatible(const DataSource& old, const DataSource& replacement) {
  std::vector<const Column*> before, after;
  for (const auto& c : old.columns) before.push_back(&c);
  for (const auto& c : replacement.columns) after.push_back(&c);
  if (after.size() < before.size()) return false;
  for (size_t i = 0; i < before.size(); ++i)
    if (before[i]->name != after[i]->name || before[i]->ns != after[i]->ns ||
        !before[i]->type->equals(*after[i]->type))
      return false;
  for (size_t i = before.size(); i < after.size(); ++i)
    if (after[i]->ns == ColumnNamespace::kKey) return false;
  return true;
}

}  // namespace

StatementResult Engine::replace_query(const DataSource& old, const BoundQuery& query,
                                      const DataSource& sink, const std::string& text) {
  const char* kind = old.kind_name();
  if (old.read_only)
    throw SqlError(std::string("Cannot add ") + kind + " '" + old.name +
                   "': CREATE OR REPLACE is not supported on source " + kind + "s.");
  std::vector<PersistentQuery*> writers;
  for (auto& q : queries_)
    if (q.sink == old.name) writers.push_back(&q);
  if (writers.size() > 1) {
    std::string ids;
    for (const auto* q : writers) ids += (ids.empty() ? "" : ", ") + q->id;
    throw SqlError("REPLACE for sink " + old.name +
                   " is not supported because there are multiple queries writing into it: [" + ids +
                   "]");
  }
  if (query.aggregate || !query.joins.empty() || query.window || query.from->window)
    throw SqlError(
        "CREATE OR REPLACE of a query with an aggregation, a join or a window is "
        "not supported (ksqlDB upgrades filters and projections only).");
  if (!upgrade_compatible(old, sink))
    throw SqlError("Cannot upgrade data source: DataSource '`" + old.name +
                   "`' has schema = " + old.schema_text() +
                   " which is not upgrade compatible with " + sink.schema_text());
  if (writers.empty())
    return start_query(
        std::string(old.kind == SourceKind::kTable ? "CTAS_" : "CSAS_") + old.name + "_", query,
        sink, text);
  PersistentQuery& q = *writers.front();
  q.statement = text;
  q.sources = {query.from->name};
  q.topology = plan_query(query, sink, q.counters);
  StatementResult r;
  r.message = "Created query with ID " + q.id;
  r.query_id = q.id;
  r.affected_queries.push_back(q.id);  // the runner restarts it with its new topology
  return r;
}

}  // namespace oxbow::sql
