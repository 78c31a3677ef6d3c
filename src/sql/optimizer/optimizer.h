#pragma once
// The rewrites over a logical plan (step 3 of docs/sql/plan-pipeline.md): passes that take the
// plain tree logical/ builds and record, in its nodes, what the physical plan and the planner can
// skip or do earlier. Each pass is its own file and reads the bound query the tree borrows from.
#include "sql/binder/query_binder.h"
#include "sql/logical/logical_plan.h"

namespace oxbow::sql::optimizer {

// The passes below, in order: push-down adds a node the others then see.
void optimize(logical::Node& root, const BoundQuery& q);

// WHERE's conjuncts over the FROM stream alone, also checked on its records before an INNER or
// LEFT first join (a kFilter marked pushed_down between the source and the join).
void push_down_predicates(logical::Node& root, const BoundQuery& q);

// The re-keys rows need not go through: a PARTITION BY of the key the rows have (keeps_key), a
// GROUP BY of the FROM source's key (groups_by_key), a join side already keyed by its join
// expression (rekey_left/rekey_right false).
void eliminate_repartitions(logical::Node& root, const BoundQuery& q);

// Each source's columns that some operator above reads (columns_read).
void prune_projections(logical::Node& root, const BoundQuery& q);

}  // namespace oxbow::sql::optimizer
