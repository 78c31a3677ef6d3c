#pragma once
// The SQL engine: statements in, the catalog changed and persistent queries made (each with the
// Streams topology that runs it). What runs the topologies (one shared runtime for all queries)
// is the SQL server's (issue 43); tests run them in the TopologyTestDriver.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/streams/serde.h"
#include "oxbow/streams/topology.h"
#include "sql/binder/ddl_binder.h"
#include "sql/binder/function_registry.h"
#include "sql/catalog/catalog.h"
#include "sql/engine/descriptions.h"
#include "sql/engine/topic_access.h"
#include "sql/physical/physical_plan.h"
#include "sql/planner/query_planner.h"

namespace oxbow::sql {

// The logical plan as EXPLAIN prints it: from the sink (none: transient) down to the sources.
std::string logical_plan(const BoundQuery& query, const std::string& sink);
// The physical plan of `query` writing into `sink` (a transient query's: no name, no sink step).
physical::StepPtr physical_plan(const BoundQuery& query, const DataSource& sink);

struct PersistentQuery {
  std::string id;  // CSAS_<SINK>_<n>, as ksqlDB names them
  std::string sink;
  std::vector<std::string> sources;  // what it reads
  std::string statement;
  streams::Topology topology;
  // The Streams settings it runs with: as ksqlDB, a record that does not deserialize is logged,
  // counted and skipped (its LogMetricAndContinueExceptionHandler), never stops the query.
  std::map<std::string, std::string> streams_config;
  std::shared_ptr<QueryCounters> counters;
  // For the runtime that runs it (KafkaStreams' or the test driver's
  // setProcessingExceptionHandler): a node's exception on a record is logged and counted, and
  // the query goes on.
  streams::ProcessingExceptionHandler processing_errors;
  bool paused = false;  // PAUSE / RESUME: the runner's to honour
  // Its execution steps: what EXPLAIN prints and what a CREATE OR REPLACE of the query must
  // stay compatible with.
  physical::StepPtr physical_plan;
  std::string execution_plan;  // physical_plan_text: ksqlDB's executionPlan
  std::map<std::string, std::string> overridden_properties;  // SET when it started
};

// A record INSERT VALUES made, for the caller to produce.
struct InsertedRecord {
  std::string topic;
  std::optional<std::string> key;  // none for a stream without key columns
  std::string value;
  int64_t timestamp = 0;
};
// How INSERT VALUES writes a row into `target`, its serdes made once (a registry format's from
// the registry of the thread's SchemaRegistryScope): also /inserts-stream's, for many rows.
class InsertWriter {
 public:
  explicit InsertWriter(const DataSource& target);
  // `key` and `value` hold the target's key and value columns in its order.
  InsertedRecord record(const Row& key, const Row& value, int64_t timestamp) const;

 private:
  std::string topic_;
  std::optional<streams::Serde<Row>> key_serde_;  // none without key columns
  streams::Serde<Row> value_serde_;
};

struct StatementResult {
  std::string statement;
  std::string message;   // ksqlDB's currentStatus message
  std::string query_id;  // a persistent query's, if one was made
  std::vector<std::string> warnings;
  std::string explanation;  // EXPLAIN: the logical and physical plans and the Streams topology
  // Which of ksqlDB's entities (its JSON "@type") the fields below make, for the statements of
  // describe_statements.cpp: kNone for the others.
  enum class Entity {
    kNone,
    kStreams,                // SHOW|LIST STREAMS: `sources`
    kTables,                 // SHOW|LIST TABLES: `sources`
    kQueries,                // SHOW QUERIES: `queries`
    kSourceDescription,      // DESCRIBE <source>: one of `source_descriptions`
    kSourceDescriptionList,  // DESCRIBE STREAMS|TABLES, SHOW STREAMS|TABLES EXTENDED
    kQueryDescription,       // EXPLAIN <id> or <statement>: one of `query_descriptions`
    kQueryDescriptionList,   // SHOW QUERIES EXTENDED
  };
  Entity entity = Entity::kNone;
  std::vector<DataSource> sources;  // as they were then, by name
  std::vector<SourceDescription> source_descriptions;
  std::vector<QueryDescription> query_descriptions;
  std::vector<RunningQuery> queries;
  // TERMINATE / PAUSE / RESUME: the queries it applied to (the runner stops or pauses them);
  // CREATE OR REPLACE: the query whose topology it replaced (the runner restarts it).
  std::vector<std::string> affected_queries;
  // SHOW PROPERTIES / VARIABLES / TYPES: names and values.
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<InsertedRecord> inserted;  // INSERT VALUES
  // SHOW FUNCTIONS (every function, by name) and DESCRIBE FUNCTION (one, with its variants).
  struct FunctionText {
    std::string name, type, category, description;
    struct Variant {
      std::string signature, returns, description;
      // Each parameter: its name, its type as the signature prints it (a repeating one's element
      // type) and whether it repeats, as ksqlDB's describe_function entity lists them.
      struct Argument {
        std::string name, type;
        bool variadic = false;
      };
      std::vector<Argument> arguments;
    };
    std::vector<Variant> variants;  // DESCRIBE FUNCTION only
  };
  std::vector<FunctionText> functions;
  // SHOW TOPICS (topic_statements.cpp): the cluster's topics by name, hidden ones left out.
  struct TopicList {
    bool extended = false;
    std::vector<TopicInfo> topics;
  };
  std::optional<TopicList> topics;
  std::vector<std::string> printed;  // PRINT: its lines, unless a PrintOutput took them
};

// EXPLAIN's and SHOW QUERIES EXTENDED's description of `query`, the fields and window those of
// `result` (its sink, or a transient query's result) (describe_statements.cpp).
QueryDescription describe_query(const PersistentQuery& query, const DataSource* result);
// SHOW QUERIES' row of `query`, and the sink's topic from `catalog`.
RunningQuery running_query(const PersistentQuery& query, const Catalog& catalog);

class Engine {
 public:
  explicit Engine(DdlSettings settings = {}) : settings_(std::move(settings)) {}

  // Each statement of `text` in order; stops at the first that fails (throws ParseError or
  // SqlError, with what the statements before it did kept). ${name} stands for the value of a
  // variable DEFINEd before the statement (ksqlDB's variable substitution).
  std::vector<StatementResult> execute(std::string_view text);

  const Catalog& catalog() const { return catalog_; }
  const std::vector<PersistentQuery>& queries() const { return queries_; }
  const PersistentQuery* query(const std::string& id) const;

  // Where the queries started from now on write what they could not do with a record (a record
  // that does not deserialize, an expression that fails): by default the last 1,000 entries,
  // kept in memory (a MemoryProcessingLog).
  void set_processing_log(std::shared_ptr<ProcessingLog> log) { processing_log_ = std::move(log); }
  const std::shared_ptr<ProcessingLog>& processing_log() const { return processing_log_; }

  // The cluster SHOW TOPICS and PRINT look at (without one they fail), and PRINT's output.
  void set_topic_access(std::shared_ptr<TopicAccess> access, PrintOutput output = {}) {
    topic_access_ = std::move(access);
    print_output_ = std::move(output);
  }

 private:
  StatementResult create_source(const parser::CreateSource& create, const std::string& text);
  StatementResult create_as_select(const parser::CreateSource& create, const std::string& text);
  StatementResult drop_source(const parser::DropSource& drop);
  StatementResult explain(const parser::Explain& explain, const std::string& text);
  // describe_statements.cpp
  StatementResult show(const parser::ShowList& show);
  StatementResult describe(const parser::Describe& describe);
  std::vector<DataSource> sources_of(const std::string& kinds) const;
  StatementResult describe_sources(const std::vector<const DataSource*>& sources, bool extended,
                                   bool list);
  StatementResult insert_into(const parser::InsertInto& insert, const std::string& text);
  StatementResult execute_one(const parser::Statement& statement);
  // replace_query.cpp: CREATE OR REPLACE ... AS SELECT over an existing sink.
  StatementResult replace_query(const DataSource& old, const BoundQuery& query,
                                const DataSource& sink, const std::string& text);
  // session_statements.cpp
  StatementResult control_query(const parser::QueryControl& control);
  StatementResult create_type(const parser::CreateType& create);
  StatementResult drop_type(const parser::DropType& drop);
  StatementResult set_property(const parser::SetProperty& set);
  StatementResult define_variable(const parser::DefineVariable& define);
  StatementResult show_settings(const parser::ShowList& show);
  StatementResult show_functions() const;
  StatementResult describe_function(const std::string& name) const;
  StatementResult insert_values(const parser::InsertValues& insert);
  // topic_statements.cpp
  StatementResult show_topics(const parser::ShowList& show);
  StatementResult print_topic(const parser::Print& print, const std::string& text);
  TopicAccess& cluster(const std::string& text) const;
  // A persistent query writing `query`'s rows into `sink`, its id `id_prefix` and a counter.
  StatementResult start_query(const std::string& id_prefix, const BoundQuery& query,
                              const DataSource& sink, const std::string& text);

  DdlSettings settings_;
  Catalog catalog_;
  FunctionRegistry functions_;
  std::vector<PersistentQuery> queries_;
  std::map<std::string, std::string> properties_;  // SET
  std::map<std::string, std::string> variables_;   // DEFINE
  std::shared_ptr<ProcessingLog> processing_log_ = std::make_shared<MemoryProcessingLog>();
  std::shared_ptr<TopicAccess> topic_access_;
  PrintOutput print_output_;
  int next_query_ = 0;
};

}  // namespace oxbow::sql
