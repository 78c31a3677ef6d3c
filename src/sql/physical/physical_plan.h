#pragma once
// The physical plan of a persistent query (issue 42's pipeline, docs/sql/plan-pipeline.md): the
// execution steps ksqlDB's planner makes of the logical plan (its ExecutionStep classes:
// StreamSource, StreamFilter, StreamSelectKey, StreamGroupBy, StreamAggregate, StreamTableJoin,
// TableSink...), each with its query context (the name its logger, internal topics and stores
// take), the schema of the rows it gives, its formats and the properties ksqlDB's upgrade
// validation compares. EXPLAIN prints it as ksqlDB prints its execution plan, and CREATE OR
// REPLACE compares the old query's plan with the new one's (upgrade_validation.cpp).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sql/logical/logical_plan.h"

namespace oxbow::sql::physical {

// How ksqlDB's ExecutionStep.validateUpgrade treats a step of the old plan.
enum class Check {
  kPassive,      // filters and projections: skipped on either side
  kMatch,        // the same step, with equal compared properties, must be in the replacement
  kSource,       // the replacement reaches the same source through passive steps only
  kUnsupported,  // "Upgrades not yet supported for ..."
};

struct Step {
  std::string type;     // ksqlDB's class name: "StreamSource", "TableSink"...
  std::string context;  // its query context: "KsqlTopic/Source", "Aggregate/GroupBy"...
  logical::Schema schema;
  // The formats it reads or writes: a source's, a sink's, a repartition topic's or a store's
  // (empty for steps that serialize nothing).
  std::string key_format, value_format;
  Check check = Check::kUnsupported;
  // Whether the step declares itself ENFORCING when met as the replacement's step (only
  // StreamSink and StreamSource do; the others' declaration is the "not yet supported" refusal).
  bool enforcing = false;
  // What the upgrade validation compares, in ksqlDB's words ("topicName", "group by clause").
  std::vector<std::pair<std::string, std::string>> compared;
  // What else the step is built from, for its text ("keyExpression", "selectExpressions").
  std::vector<std::pair<std::string, std::string>> details;
  // The expressions the planner compiles for it that the query's shape does not give it: a
  // pushed-down filter's conjuncts. Borrowed from the bound query the plan was built from: only
  // the planner reads them, while that query lives.
  std::vector<const BoundExpr*> expressions;
  // A source step: the scope columns of its records that the query reads (the optimizer's
  // projection pruning); the planner leaves the others out of the rows it makes.
  std::vector<int> columns_read;
  // The steps it reads: one, two for a join, none for a source.
  std::vector<std::shared_ptr<const Step>> sources;

  // The operation EXPLAIN names it by (ksqlDB's PlanSummary): "SOURCE", "REKEY", "JOIN"...
  std::string operation() const;
};

using StepPtr = std::shared_ptr<const Step>;

// The steps of `root` (a persistent query's logical plan over `query`) writing into `sink`.
StepPtr build_physical_plan(const logical::Node& root, const BoundQuery& query,
                            const DataSource& sink);

// The plan as ksqlDB's EXPLAIN prints its execution plan: one step a line from the sink down,
// " > [ OPERATION ] | Schema: ... | Logger: <query id>.<context with dots>", each step's sources
// under it indented by tabs as ksqlDB indents them.
std::string physical_plan_text(const Step& root, const std::string& query_id);

// ksqlDB's upgrade validation of `old` (the running query's plan) against `replacement`: throws
// SqlError with ksqlDB's message when the replacement may not take the old query's place.
void validate_upgrade(const Step& old, const Step& replacement);

}  // namespace oxbow::sql::physical
