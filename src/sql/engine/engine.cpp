#include "sql/engine/engine.h"

#include "sql/binder/sql_error.h"
#include "sql/binder/with_properties.h"
#include "sql/engine/variables.h"
#include "sql/logical/logical_plan.h"
#include "sql/optimizer/optimizer.h"
#include "sql/parser/parser.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {

namespace {

// The optimized plan of `query` into `sink` (empty: transient): what EXPLAIN prints and the
// physical plan is built from.
std::unique_ptr<logical::Node> plan_of(const BoundQuery& query, const std::string& sink) {
  std::unique_ptr<logical::Node> plan = logical::build_logical_plan(query, sink);
  optimizer::optimize(*plan, query);
  return plan;
}

// The window of a query's result: its WINDOW's, or its windowed source's when its rows keep
// their windowed keys.
std::optional<SourceWindow> result_window(const BoundQuery& query) {
  return plan_of(query, "")->schema.window;
}

std::string capitalized(const char* kind) {
  std::string s = kind;
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace

// The logical plan, from the sink down to the sources, one step a line.
std::string logical_plan(const BoundQuery& q, const std::string& sink) {
  return logical::logical_plan_text(*plan_of(q, sink));
}

physical::StepPtr physical_plan(const BoundQuery& q, const DataSource& sink) {
  return physical::build_physical_plan(*plan_of(q, sink.name), q, sink);
}

std::vector<StatementResult> Engine::execute(std::string_view text) {
  // The serdes the statements build find ksql.schema.registry.url here.
  SchemaRegistryScope registry(settings_.schema_registry_url);
  if (!settings_.registry_columns) settings_.registry_columns = registry_columns;
  std::vector<StatementResult> results;
  if (text.find("${") == std::string_view::npos) {
    for (const parser::Statement& s : parser::parse(text)) results.push_back(execute_one(s));
    return results;
  }
  // Variables DEFINEd by one statement stand in the next: each statement substituted on its own.
  for (const std::string& piece : split_statements(text))
    for (const parser::Statement& s : parser::parse(substitute_variables(piece, variables_)))
      results.push_back(execute_one(s));
  return results;
}

StatementResult Engine::execute_one(const parser::Statement& s) {
  {
    StatementResult r;
    if (const auto* create = std::get_if<parser::CreateSource>(&s.body)) {
      r = create->query ? create_as_select(*create, s.text) : create_source(*create, s.text);
    } else if (const auto* drop = std::get_if<parser::DropSource>(&s.body)) {
      r = drop_source(*drop);
    } else if (const auto* insert = std::get_if<parser::InsertInto>(&s.body)) {
      r = insert_into(*insert, s.text);
    } else if (const auto* listed = std::get_if<parser::ShowList>(&s.body)) {
      r = show(*listed);
    } else if (const auto* described = std::get_if<parser::Describe>(&s.body)) {
      r = describe(*described);
    } else if (const auto* explained = std::get_if<parser::Explain>(&s.body)) {
      r = explain(*explained, s.text);
    } else if (const auto* control = std::get_if<parser::QueryControl>(&s.body)) {
      r = control_query(*control);
    } else if (const auto* type = std::get_if<parser::CreateType>(&s.body)) {
      r = create_type(*type);
    } else if (const auto* dropped = std::get_if<parser::DropType>(&s.body)) {
      r = drop_type(*dropped);
    } else if (const auto* set = std::get_if<parser::SetProperty>(&s.body)) {
      r = set_property(*set);
    } else if (const auto* define = std::get_if<parser::DefineVariable>(&s.body)) {
      r = define_variable(*define);
    } else if (const auto* values = std::get_if<parser::InsertValues>(&s.body)) {
      r = insert_values(*values);
    } else if (const auto* print = std::get_if<parser::Print>(&s.body)) {
      r = print_topic(*print, s.text);
    } else {
      throw SqlError("This statement is not supported by the engine yet: " + s.text);
    }
    r.statement = s.text;
    return r;
  }
}

const PersistentQuery* Engine::query(const std::string& id) const {
  for (const auto& q : queries_)
    if (q.id == id) return &q;
  return nullptr;
}

StatementResult Engine::create_source(const parser::CreateSource& create, const std::string& text) {
  BoundCreate bound = bind_create_source(create, catalog_, settings_);
  StatementResult r;
  if (bound.warning) r.warnings.push_back(*bound.warning);
  if (bound.skip) return r;
  register_schemas(bound.source, settings_.schema_registry_url, false);
  r.message = capitalized(bound.source.kind_name()) + " created";
  bound.source.statement = text;
  catalog_.put_source(std::move(bound.source));
  return r;
}

// CREATE STREAM ... AS SELECT: the sink takes the result's columns, the source's formats and
// partition count unless WITH says otherwise, and the sink's name as its topic.
StatementResult Engine::create_as_select(const parser::CreateSource& create,
                                         const std::string& text) {
  const std::string& name = create.name.text;
  const char* kind = create.table ? "table" : "stream";
  std::optional<DataSource> replaced;
  if (const DataSource* existing = catalog_.find_source(name)) {
    if (create.if_not_exists) {
      StatementResult r;
      r.warnings.push_back(std::string("A ") + kind + " with the same name already exists.");
      return r;
    }
    if (!create.or_replace || (existing->kind == SourceKind::kTable) != create.table)
      throw SqlError(std::string("Cannot add ") + kind + " '" + name + "': A " +
                     existing->kind_name() + " with the same name already exists");
    replaced = *existing;
  }
  BoundQuery query = bind_query(*create.query, catalog_, functions_, QueryContext{name});
  if (create.table != (query.result_kind == SourceKind::kTable))
    throw SqlError(create.table ? "Invalid result type. Your SELECT query produces a STREAM. "
                                  "Please use CREATE STREAM AS SELECT statement instead."
                                : "Invalid result type. Your SELECT query produces a TABLE. "
                                  "Please use CREATE TABLE AS SELECT statement instead.");
  WithProperties with = read_create_properties(create.properties);
  DataSource sink;
  sink.kind = query.result_kind;
  sink.name = name;
  sink.topic = with.text("KAFKA_TOPIC").value_or(name);
  sink.formats = query.from->formats;
  if (auto f = with.text("FORMAT")) sink.formats.key_format = sink.formats.value_format = *f;
  if (auto f = with.text("KEY_FORMAT")) sink.formats.key_format = *f;
  if (query.partition_by_null) {  // as ksqlDB: a keyless stream's key format is NONE
    if (with.text("KEY_FORMAT") || with.text("FORMAT"))
      throw SqlError("Key format specified for stream without key columns.");
    sink.formats.key_format = "NONE";
  }
  if (auto f = with.text("VALUE_FORMAT")) sink.formats.value_format = *f;
  for (auto* format : {&sink.formats.key_format, &sink.formats.value_format})
    *format = checked_format(*format);
  // As ksqlDB: the sink's serde settings are its own statement's, not the source's.
  sink.formats.wrap_single_value = with.boolean("WRAP_SINGLE_VALUE");
  sink.formats.key_delimiter = with.text("KEY_DELIMITER").value_or(",");
  sink.formats.value_delimiter = with.text("VALUE_DELIMITER").value_or(",");
  bind_registry_properties(sink.formats, with, name);
  sink.partitions = with.integer("PARTITIONS").value_or(query.from->partitions.value_or(1));
  sink.statement = text;
  for (const auto& c : query.columns)
    sink.columns.push_back(
        {c.name, c.type, c.key ? ColumnNamespace::kKey : ColumnNamespace::kValue, ""});
  sink.window = result_window(query);
  // A replacement registers its schemas once ksqlDB's checks have let it through.
  if (!replaced) register_schemas(sink, settings_.schema_registry_url, true);
  std::string prefix = create.table ? "CTAS_" : "CSAS_";
  StatementResult r = replaced ? replace_query(*replaced, query, sink, text)
                               : start_query(prefix + name + "_", query, sink, text);
  catalog_.put_source(std::move(sink));
  return r;
}

StatementResult Engine::start_query(const std::string& id_prefix, const BoundQuery& query,
                                    const DataSource& sink, const std::string& text) {
  PersistentQuery q;
  q.id = id_prefix + std::to_string(next_query_);
  q.sink = sink.name;
  q.sources.push_back(query.from->name);
  for (const auto& j : query.joins) q.sources.push_back(j.right->name);
  q.statement = text;
  q.counters = std::make_shared<QueryCounters>();
  q.counters->query_id = q.id;
  q.counters->log = processing_log_;
  q.physical_plan = physical_plan(query, sink);
  q.topology = plan_query(*q.physical_plan, query, sink, q.counters);
  q.execution_plan = physical::physical_plan_text(*q.physical_plan, q.id);
  q.overridden_properties = properties_;
  q.processing_errors = processing_error_handler(q.counters);
  // ksqlDB's application id (QueryApplicationId), with its default service id "default_".
  q.streams_config = {{"application.id", "_confluent-ksql-default_query_" + q.id},
                      {"default.deserialization.exception.handler",
                       "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler"},
                      // A runner that does not install processing_errors still goes on.
                      {"processing.exception.handler",
                       "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler"}};
  ++next_query_;
  StatementResult r;
  r.message = "Created query with ID " + q.id;
  r.query_id = q.id;
  queries_.push_back(std::move(q));
  return r;
}

// INSERT INTO a stream that exists, from a query whose result has exactly its schema.
StatementResult Engine::insert_into(const parser::InsertInto& insert, const std::string& text) {
  const std::string& name = insert.target.text;
  const DataSource* target = catalog_.find_source(name);
  if (!target) throw SqlError(insert.target.position, "Source `" + name + "` does not exist.");
  if (target->kind != SourceKind::kStream)
    throw SqlError("INSERT INTO can only be used to insert into a stream. " + name +
                   " is a table.");
  if (target->read_only) throw SqlError("Cannot insert into read-only stream: " + name);
  for (const auto& c : target->columns)
    if (c.ns == ColumnNamespace::kHeaders || c.ns == ColumnNamespace::kHeader)
      throw SqlError("Cannot insert into " + name + " because it has header columns");
  BoundQuery query = bind_query(*insert.query, catalog_, functions_, QueryContext{name});
  DataSource result;
  result.kind = query.result_kind;
  for (const auto& c : query.columns)
    result.columns.push_back(
        {c.name, c.type, c.key ? ColumnNamespace::kKey : ColumnNamespace::kValue, ""});
  if (result.kind != SourceKind::kStream || result.schema_text() != target->schema_text())
    throw SqlError("Incompatible schema between results and sink.\nResult schema is " +
                   result.schema_text() + "\nSink schema is " + target->schema_text());
  return start_query("INSERTQUERY_", query, *target, text);
}

StatementResult Engine::explain(const parser::Explain& e, const std::string& text) {
  StatementResult r;
  if (!e.statement) {
    const PersistentQuery* q = query(e.query_id);
    if (!q)
      throw SqlError("Query with id:" + e.query_id +
                     " does not exist, use SHOW QUERIES to view the full set of running queries.");
    r.explanation = q->statement + "\n\nPhysical plan:\n" + q->execution_plan + "\nTopology:\n" +
                    q->topology.describe().toString();
    r.query_descriptions.push_back(describe_query(*q, catalog_.find_source(q->sink)));
    r.entity = StatementResult::Entity::kQueryDescription;
    return r;
  }
  const parser::Query* select = nullptr;
  std::string sink;
  const char* id_prefix = "";
  if (const auto* q = std::get_if<std::unique_ptr<parser::Query>>(&e.statement->body))
    select = q->get();
  if (const auto* c = std::get_if<parser::CreateSource>(&e.statement->body)) {
    if (c->query) select = c->query.get();
    sink = c->name.text;
    id_prefix = c->table ? "CTAS_" : "CSAS_";
  }
  if (!select) throw SqlError("EXPLAIN is supported for queries only: " + e.statement->text);
  BoundQuery bound = bind_query(*select, catalog_, functions_,
                                QueryContext{sink.empty() ? std::nullopt : std::optional(sink)});
  DataSource target;
  target.name = sink.empty() ? "EXPLAINED" : sink;
  target.topic = target.name;
  target.formats = bound.from->formats;
  for (const auto& c : bound.columns)
    target.columns.push_back(
        {c.name, c.type, c.key ? ColumnNamespace::kKey : ColumnNamespace::kValue, ""});
  target.window = result_window(bound);
  streams::Topology topology =
      plan_query(*physical_plan(bound, target), bound, target, std::make_shared<QueryCounters>());
  // ksqlDB describes the query the statement would start (its sandbox's), on no host.
  PersistentQuery would_run;
  if (!sink.empty()) {
    would_run.id = id_prefix + sink + "_" + std::to_string(next_query_);
    would_run.sink = sink;
    would_run.streams_config["application.id"] = "_confluent-ksql-default_query_" + would_run.id;
  }
  // A transient query's plan has no sink step, and its steps log under transient_<source>
  // (ksqlDB adds a random number).
  DataSource plan_sink = target;
  plan_sink.name = sink;
  plan_sink.kind = bound.result_kind;
  std::string physical =
      physical::physical_plan_text(*physical_plan(bound, plan_sink),
                                   sink.empty() ? "transient_" + bound.from->name : would_run.id);
  r.explanation = "Logical plan:\n" + logical_plan(bound, sink) + "\nPhysical plan:\n" + physical +
                  "\nTopology:\n" + topology.describe().toString();
  would_run.sources.push_back(bound.from->name);
  for (const auto& j : bound.joins) would_run.sources.push_back(j.right->name);
  // The statement's text after EXPLAIN, as ksqlDB takes it.
  size_t start = text.find_first_not_of(" \t\r\n", std::string_view("EXPLAIN").size());
  would_run.statement = start == std::string::npos ? "" : text.substr(start);
  would_run.topology = std::move(topology);
  would_run.execution_plan = physical;
  would_run.overridden_properties = properties_;
  QueryDescription d = describe_query(would_run, &target);
  d.status.clear();
  if (sink.empty()) d.query_type = "PUSH";  // a transient SELECT
  r.query_descriptions.push_back(std::move(d));
  r.entity = StatementResult::Entity::kQueryDescription;
  return r;
}

StatementResult Engine::drop_source(const parser::DropSource& drop) {
  const std::string& name = drop.name.text;
  const DataSource* source = catalog_.find_source(name);
  const char* kind = drop.table ? "Table" : "Stream";
  if (!source) {
    if (!drop.if_exists) throw SqlError(std::string(kind) + " " + name + " does not exist.");
    // ksqlDB answers (and distributes) it as a drop that found nothing.
    StatementResult r;
    r.message = "Source `" + name + "` does not exist.";
    return r;
  }
  // The CREATE ... AS SELECT query that fills the source goes with it, as in ksqlDB; the queries
  // reading it and INSERT INTO ones writing it must be terminated first.
  auto creates = [&](const PersistentQuery& q) {
    return q.sink == name && (q.id.starts_with("CSAS_") || q.id.starts_with("CTAS_"));
  };
  std::string readers, writers, created_by;
  for (const auto& q : queries_) {
    if (creates(q))
      created_by = q.id;
    else if (q.sink == name)
      writers += (writers.empty() ? "" : ", ") + q.id;
    for (const auto& read : q.sources)
      if (read == name) readers += (readers.empty() ? "" : ", ") + q.id;
  }
  if (!writers.empty() || !readers.empty())
    throw SqlError("Cannot drop " + name + ".\nThe following queries read from this source: " +
                   "[" + readers + "].\nThe following queries write into this source: [" + writers +
                   "].\nYou need to terminate them before dropping " + name + ".");
  std::string message = "Source `" + name + "` (topic: " + source->topic + ") was dropped.";
  catalog_.drop_source(name);
  StatementResult r;
  r.message = message;
  if (!created_by.empty()) {
    std::erase_if(queries_, [&](const PersistentQuery& q) { return q.id == created_by; });
    r.affected_queries.push_back(created_by);
  }
  return r;
}

}  // namespace oxbow::sql
