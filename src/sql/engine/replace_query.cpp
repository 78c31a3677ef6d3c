// CREATE OR REPLACE ... AS SELECT over a sink that exists (docs/sql/ksqldb-facts.md §1.8): the
// query writing into it keeps its id, its application id and so its state, and gets the new
// statement's topology, for the changes ksqlDB allows. ksqlDB decides in two steps, and so does
// this file: the sink must keep its topic and formats and every old column where it was (its
// metastore's check), then the two queries' physical plans must agree step by step (its
// ExecutionStep upgrade validation, sql/physical/upgrade_validation.cpp, over the steps of
// sql/physical/, each of which knows how that validation treats it).
#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {

namespace {

// "[a, b]", as Java prints a list.
std::string list_text(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return "[" + out + "]";
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
  physical::StepPtr plan = physical_plan(query, sink);
  if (!writers.empty() && writers.front()->physical_plan)
    physical::validate_upgrade(*writers.front()->physical_plan, *plan);
  register_schemas(sink, settings_.schema_registry_url, true);
  if (writers.empty())
    return start_query(
        std::string(old.kind == SourceKind::kTable ? "CTAS_" : "CSAS_") + old.name + "_", query,
        sink, text);
  PersistentQuery& q = *writers.front();
  // The id, application id and counters stay: the new topology names its stores and internal
  // topics as the old one did, so it carries on from the old one's state.
  streams::Topology topology = plan_query(*plan, query, sink, q.counters);
  q.statement = text;
  q.sources = {query.from->name};
  for (const auto& j : query.joins) q.sources.push_back(j.right->name);
  q.topology = std::move(topology);
  q.physical_plan = std::move(plan);
  q.execution_plan = physical::physical_plan_text(*q.physical_plan, q.id);
  StatementResult r;
  r.message = "Created query with ID " + q.id;
  r.query_id = q.id;
  r.affected_queries.push_back(q.id);  // the runner restarts it with its new topology
  return r;
}

}  // namespace oxbow::sql
