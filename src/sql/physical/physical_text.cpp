// The physical plan's text, as ksqlDB's EXPLAIN prints its execution plan (PlanSummary): each
// step's operation, schema and logger name, sources under it.
#include <cctype>
#include <map>

#include "sql/physical/physical_plan.h"

namespace oxbow::sql::physical {

std::string Step::operation() const {
  static const std::map<std::string, std::string> kOperations = {
      {"StreamAggregate", "AGGREGATE"},
      {"StreamWindowedAggregate", "AGGREGATE"},
      {"TableAggregate", "AGGREGATE"},
      {"StreamFilter", "FILTER"},
      {"TableFilter", "FILTER"},
      {"StreamFlatMap", "FLAT_MAP"},
      {"StreamGroupBy", "GROUP_BY"},
      {"StreamGroupByKey", "GROUP_BY"},
      {"TableGroupBy", "GROUP_BY"},
      {"StreamSelect", "PROJECT"},
      {"TableSelect", "PROJECT"},
      {"StreamSelectKey", "REKEY"},
      {"TableSelectKey", "REKEY"},
      {"StreamSink", "SINK"},
      {"TableSink", "SINK"},
      {"StreamSource", "SOURCE"},
      {"WindowedStreamSource", "SOURCE"},
      {"TableSource", "SOURCE"},
      {"WindowedTableSource", "SOURCE"},
      {"StreamStreamJoin", "JOIN"},
      {"StreamTableJoin", "JOIN"},
      {"TableTableJoin", "JOIN"},
      {"ForeignKeyTableTableJoin", "JOIN"},
      {"TableSuppress", "SUPPRESS"},
  };
  auto it = kOperations.find(type);
  return it == kOperations.end() ? type : it->second;
}

namespace {

// A column name as ksqlDB's schema text gives it: quoted only when it is no plain identifier.
std::string identifier(const std::string& name) {
  bool plain = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name)
    plain = plain && (std::isupper(static_cast<unsigned char>(c)) ||
                      std::isdigit(static_cast<unsigned char>(c)) || c == '_');
  return plain ? name : "`" + name + "`";
}

std::string schema_text(const logical::Schema& schema) {
  std::string out;
  for (const auto& c : schema.columns)
    out += (out.empty() ? "" : ", ") + identifier(c.name) + " " + c.type->to_string() +
           (c.key ? " KEY" : "");
  return out;
}

// A query context as a logger name's part: "KsqlTopic/Source" -> "KsqlTopic.Source".
std::string dotted(std::string context) {
  for (char& c : context)
    if (c == '/') c = '.';
  return context;
}

// ksqlDB indents a step at depth d by 2d tabs (each level prefixes its sources' first lines).
void print(const Step& step, size_t depth, const std::string& query_id, std::string& out) {
  out += std::string(depth * 2, '\t') + " > [ " + step.operation() +
         " ] | Schema: " + schema_text(step.schema) + " | Logger: " + query_id + "." +
         dotted(step.context) + "\n";
  for (const auto& source : step.sources) print(*source, depth + 1, query_id, out);
}

}  // namespace

std::string physical_plan_text(const Step& root, const std::string& query_id) {
  std::string out;
  print(root, 0, query_id, out);
  return out;
}

}  // namespace oxbow::sql::physical
