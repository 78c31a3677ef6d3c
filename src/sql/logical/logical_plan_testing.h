#pragma once
// What the tests of logical plans and their rewrites compare trees by (logical_plan_test.cpp,
// optimizer/optimizer_test.cpp).
#include <string>

#include "sql/logical/logical_plan.h"

namespace oxbow::sql::logical {

// The operators from the top down: "Sink(Project(Filter(Source)))".
inline std::string shape(const Node& n) {
  static const char* const kNames[] = {"Source",    "Join",          "Filter",  "PartitionBy",
                                       "Aggregate", "TableFunction", "Project", "Sink"};
  std::string out = kNames[static_cast<size_t>(n.kind)];
  if (n.inputs.empty()) return out;
  out += "(";
  for (size_t i = 0; i < n.inputs.size(); ++i) out += (i ? ", " : "") + shape(*n.inputs[i]);
  return out + ")";
}

// A filter's conjuncts: "(A > 1) AND (B = 2)".
inline std::string predicates(const Node& n) {
  std::string out;
  for (const BoundExpr* p : n.predicates) out += (out.empty() ? "" : " AND ") + format(*p->parsed);
  return out;
}

}  // namespace oxbow::sql::logical
