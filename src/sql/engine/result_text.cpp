#include "sql/engine/result_text.h"

#include "sql/engine/description_output.h"
#include "sql/engine/topic_output.h"

namespace oxbow::sql {

namespace {

std::string entity_text(const StatementResult& r) {
  using Entity = StatementResult::Entity;
  std::string out;
  switch (r.entity) {
    case Entity::kNone:
      break;
    case Entity::kStreams:
    case Entity::kTables:
      out = "\n" + sources_table(r.sources, r.entity == Entity::kTables ? SourceKind::kTable
                                                                        : SourceKind::kStream);
      break;
    case Entity::kQueries:
      out = "\n" + queries_table(r.queries);
      break;
    case Entity::kSourceDescription:
    case Entity::kQueryDescription:
      for (const auto& d : r.source_descriptions) out += "\n" + source_description_text(d);
      for (const auto& d : r.query_descriptions) out += "\n" + query_description_text(d);
      break;
    case Entity::kSourceDescriptionList:
    case Entity::kQueryDescriptionList:
      out = "\n";
      for (const auto& d : r.source_descriptions) out += source_description_text(d) + "\n";
      for (const auto& d : r.query_descriptions) out += query_description_text(d) + "\n";
      break;
  }
  return out;
}

}  // namespace

std::string result_text(const StatementResult& result) {
  std::string out;
  if (result.topics) out = topics_table(result.topics->topics, result.topics->extended);
  return out + entity_text(result);
}

}  // namespace oxbow::sql
