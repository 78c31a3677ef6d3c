// The logical plan's text, as EXPLAIN and DESCRIBE EXTENDED's execution plan print it: one
// operator a line (ksqlDB's "> [ PROJECT ] | Schema: ..."), each input indented two more.
#include "sql/logical/logical_plan.h"

namespace oxbow::sql::logical {

std::string Schema::text() const {
  std::string out;
  for (const auto& c : columns)
    out += (out.empty() ? "" : ", ") + ("`" + c.name + "` " + c.type->to_string()) +
           (c.key ? " KEY" : "");
  return out;
}

namespace {

std::string listed(const std::vector<const BoundExpr*>& exprs, const char* separator) {
  std::string out;
  for (const BoundExpr* e : exprs) out += (out.empty() ? "" : separator) + format(*e->parsed);
  return out;
}

// The operator's line, without its schema.
std::string step(const Node& n) {
  switch (n.kind) {
    case NodeKind::kSource: {
      std::string alias = n.alias != n.source->name ? " AS " + n.alias : "";
      return "[ SOURCE ] | " + n.source->name + alias + " (topic " + n.source->topic + ")";
    }
    case NodeKind::kJoin: {
      static const char* const kTypes[] = {"INNER", "LEFT", "RIGHT", "FULL"};
      auto type = static_cast<size_t>(n.join->type);
      return std::string("[ JOIN ] | ") + (type < 4 ? kTypes[type] : "") + " " + n.join->alias +
             " ON " + format(*n.join->left_key->parsed) + " = " +
             format(*n.join->right_key->parsed);
    }
    case NodeKind::kFilter:
      return std::string("[ FILTER ] | ") + (n.having ? "HAVING " : "WHERE ") +
             listed(n.predicates, " AND ") + (n.pushed_down ? " (pushed down)" : "");
    case NodeKind::kPartitionBy:
      return "[ REPARTITION ] | PARTITION BY " + (n.keys.empty() ? "NULL" : listed(n.keys, ", "));
    case NodeKind::kAggregate:
      return "[ AGGREGATE ] | GROUP BY " + listed(n.keys, ", ") + (n.window ? " | windowed" : "");
    case NodeKind::kTableFunction:
      return "[ FLAT MAP ] | " + listed(n.calls, ", ");
    case NodeKind::kProject:
      return "[ PROJECT ]";
    case NodeKind::kSink:
      return "[ SINK ] | " + (n.sink.empty() ? std::string("(transient)") : n.sink);
  }
  return "";
}

void print(const Node& n, size_t depth, std::string& out) {
  out += std::string(depth * 2, ' ') + " > " + step(n) + " | Schema: " + n.schema.text() + "\n";
  for (const auto& input : n.inputs) print(*input, depth + 1, out);
}

}  // namespace

std::string logical_plan_text(const Node& root) {
  std::string out;
  print(root, 0, out);
  return out;
}

}  // namespace oxbow::sql::logical
