#include "sql/server/entities.h"

#include "sql/engine/variables.h"
#include "sql/parser/parser.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

std::string command_id(const parser::Statement& s) {
  auto kind = [](bool table) { return std::string(table ? "table/" : "stream/"); };
  if (const auto* create = std::get_if<parser::CreateSource>(&s.body))
    return kind(create->table) + create->name.text + "/create";
  if (const auto* drop = std::get_if<parser::DropSource>(&s.body))
    return kind(drop->table) + drop->name.text + "/drop";
  if (const auto* insert = std::get_if<parser::InsertInto>(&s.body))
    return "stream/" + insert->target.text + "/create";
  if (const auto* type = std::get_if<parser::CreateType>(&s.body))
    return "type/" + type->name.text + "/create";
  if (const auto* type = std::get_if<parser::DropType>(&s.body))
    return "type/" + type->name.text + "/drop";
  if (const auto* control = std::get_if<parser::QueryControl>(&s.body))
    return "terminate/" + (control->all ? std::string("ALL") : control->query_id) + "/execute";
  return "";
}

json warnings_json(const std::vector<std::string>& warnings) {
  json out = json::array();
  for (const auto& w : warnings) out.push_back({{"message", w}});
  return out;
}

json strings(const std::vector<std::string>& items) {
  json out = json::array();
  for (const auto& i : items) out.push_back(i);
  return out;
}

json source_list(const std::vector<DataSource>& sources) {
  json out = json::array();
  for (const auto& s : sources)
    out.push_back({{"type", s.kind == SourceKind::kTable ? "TABLE" : "STREAM"},
                   {"name", s.name},
                   {"topic", s.topic},
                   {"keyFormat", s.formats.key_format},
                   {"valueFormat", s.formats.value_format},
                   {"isWindowed", s.window.has_value()}});
  return out;
}

json queries_json(const std::vector<RunningQuery>& queries) {
  json out = json::array();
  for (const auto& q : queries) out.push_back(running_query_json(q));
  return out;
}

json properties_json(const StatementResult& r, const PropertyList& server_properties) {
  json listed = json::array(), overwritten = json::array();
  auto scope = [](const std::string& name) {
    return name.starts_with("ksql.streams.") ? "KAFKA_STREAMS" : "KSQL";
  };
  for (const auto& [name, value] : server_properties)
    listed.push_back({{"name", name}, {"scope", scope(name)}, {"value", value}});
  for (const auto& [name, value] : r.settings) {
    listed.push_back({{"name", name}, {"scope", scope(name)}, {"value", value}});
    overwritten.push_back(name);
  }
  return {{"properties", listed},
          {"overwrittenProperties", overwritten},
          {"defaultProperties", json::array()}};
}

json topics_json(const StatementResult::TopicList& list) {
  json out = json::array();
  for (const auto& t : list.topics) out.push_back({{"name", t.name}, {"replicaInfo", t.replicas}});
  return out;
}

json functions_json(const std::vector<StatementResult::FunctionText>& functions) {
  json out = json::array();
  for (const auto& f : functions)
    out.push_back({{"name", f.name}, {"type", f.type}, {"category", f.category}});
  return out;
}

// The entity's own fields for a result of describe_statements.cpp and the lists; null for none.
json described(const StatementResult& r) {
  using E = StatementResult::Entity;
  auto list = [](const auto& items, auto one) {
    json out = json::array();
    for (const auto& i : items) out.push_back(one(i));
    return out;
  };
  switch (r.entity) {
    case E::kStreams:
      return {{"@type", "streams"}, {"streams", source_list(r.sources)}};
    case E::kTables:
      return {{"@type", "tables"}, {"tables", source_list(r.sources)}};
    case E::kQueries:
      return {{"@type", "queries"}, {"queries", queries_json(r.queries)}};
    case E::kSourceDescription:
      return {{"@type", "sourceDescription"},
              {"sourceDescription", source_description_json(r.source_descriptions.at(0))}};
    case E::kSourceDescriptionList:
      return {{"@type", "source_descriptions"},
              {"sourceDescriptions", list(r.source_descriptions, source_description_json)}};
    case E::kQueryDescription:
      return {{"@type", "queryDescription"},
              {"queryDescription", query_description_json(r.query_descriptions.at(0))}};
    case E::kQueryDescriptionList:
      return {{"@type", "query_descriptions"},
              {"queryDescriptions", list(r.query_descriptions, query_description_json)}};
    case E::kNone:
      break;
  }
  return nullptr;
}

// ksqlDB's FunctionDescriptionList: the function, then each variant's arguments, return type and
// description. Built-in functions are all this engine has: ksqlDB's author and path for those.
json function_description(const StatementResult::FunctionText& f) {
  json variants = json::array();
  for (const auto& v : f.variants) {
    json arguments = json::array();
    for (const auto& a : v.arguments)
      arguments.push_back(
          {{"name", a.name}, {"type", a.type}, {"description", ""}, {"isVariadic", a.variadic}});
    variants.push_back(
        {{"arguments", arguments}, {"returnType", v.returns}, {"description", v.description}});
  }
  return {{"@type", "describe_function"}, {"name", f.name}, {"description", f.description},
          {"author", "Confluent"},        {"version", ""},  {"path", "internal"},
          {"functions", variants},        {"type", f.type}};
}

json listed(const StatementResult& r, const StatementInfo& info,
            const PropertyList& server_properties) {
  if (info.describes_function && r.functions.size() == 1)
    return function_description(r.functions.front());
  if (info.listed == "PROPERTIES") {
    json out = properties_json(r, server_properties);
    out["@type"] = "properties";
    return out;
  }
  if (info.listed == "TOPICS" && r.topics)
    return {{"@type", "kafka_topics"}, {"topics", topics_json(*r.topics)}};
  if (info.listed == "FUNCTIONS")
    return {{"@type", "function_names"}, {"functions", functions_json(r.functions)}};
  if (info.listed == "VARIABLES") {
    json variables = json::array();
    for (const auto& [name, value] : r.settings)
      variables.push_back({{"name", name}, {"value", value}});
    return {{"@type", "variables"}, {"variables", variables}};
  }
  return nullptr;
}

}  // namespace

StatementInfo statement_info(std::string_view text) {
  StatementInfo info;
  try {
    auto statements = parser::parse(text);
    if (statements.size() != 1) return info;
    const auto& s = statements.front();
    info.parsed = true;
    info.command_id = command_id(s);
    if (const auto* show = std::get_if<parser::ShowList>(&s.body)) info.listed = show->what;
    if (const auto* describe = std::get_if<parser::Describe>(&s.body))
      info.describes_function = describe->what == "FUNCTION";
    if (const auto* drop = std::get_if<parser::DropSource>(&s.body); drop && drop->delete_topic)
      info.topic_deleted_with = drop->name.text;
    info.streamed = std::holds_alternative<std::unique_ptr<parser::Query>>(s.body) ||
                    std::holds_alternative<parser::Print>(s.body);
  } catch (const std::exception&) {
  }
  return info;
}

std::map<std::string, std::string> text_fields(const nlohmann::json& object, const char* field) {
  std::map<std::string, std::string> out;
  auto found = object.find(field);
  if (found == object.end() || !found->is_object()) return out;
  for (const auto& [name, value] : found->items())
    out[name] = value.is_string() ? value.get<std::string>() : value.dump();
  return out;
}

std::string with_session_variables(const json& request, std::string statement) {
  auto variables = text_fields(request, "sessionVariables");
  return variables.empty() ? statement : substitute_variables(statement, variables);
}

std::string json_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json schema_json(const SqlType& type) {
  json fields = nullptr, member = nullptr;
  if (type.base() == SqlBaseType::kStruct) {
    fields = json::array();
    for (const auto& f : type.fields()) fields.push_back(field_json({f.name, f.type, {}, {}}));
  }
  if (type.base() == SqlBaseType::kArray || type.base() == SqlBaseType::kMap)
    member = schema_json(*type.element());
  json out = {{"type", type.base_name()}, {"fields", fields}, {"memberSchema", member}};
  if (type.base() == SqlBaseType::kDecimal)
    out["parameters"] = {{"precision", type.precision()}, {"scale", type.scale()}};
  return out;
}

json field_json(const FieldInfo& field) {
  json out = {{"name", field.name}, {"schema", schema_json(*field.schema)}};
  if (field.field_type)
    out["type"] = *field.field_type == FieldInfo::FieldType::kKey ? "KEY" : "HEADER";
  if (field.header_key) out["headerKey"] = *field.header_key;
  return out;
}

json running_query_json(const RunningQuery& q) {
  return {{"queryString", q.query_string},
          {"sinks", strings(q.sinks)},
          {"sinkKafkaTopics", strings(q.sink_kafka_topics)},
          {"id", q.id},
          {"statusCount", q.status_count},
          {"queryType", q.query_type},
          {"state", q.state()}};
}

json source_description_json(const SourceDescription& s) {
  json fields = json::array();
  for (const auto& f : s.fields) fields.push_back(field_json(f));
  json out = {{"name", s.name},
              {"readQueries", queries_json(s.read_queries)},
              {"writeQueries", queries_json(s.write_queries)},
              {"fields", fields},
              {"type", s.type},
              {"timestamp", s.timestamp},
              {"statistics", s.statistics},
              {"errorStats", s.error_stats},
              {"extended", s.extended},
              {"keyFormat", s.key_format},
              {"valueFormat", s.value_format},
              {"topic", s.topic},
              {"partitions", s.partitions},
              {"replication", s.replication},
              {"statement", s.statement},
              {"queryOffsetSummaries", json::array()},
              {"sourceConstraints", strings(s.source_constraints)},
              {"clusterStatistics", json::array()},
              {"clusterErrorStats", json::array()}};
  if (s.window_type) out["windowType"] = *s.window_type;
  return out;
}

json query_description_json(const QueryDescription& q) {
  json fields = json::array();
  for (const auto& f : q.fields) fields.push_back(field_json(f));
  json out = {{"id", q.id},
              {"statementText", q.statement_text},
              {"fields", fields},
              {"sources", strings(q.sources)},
              {"sinks", strings(q.sinks)},
              {"topology", q.topology},
              {"executionPlan", q.execution_plan},
              {"overriddenProperties", q.overridden_properties},
              {"ksqlHostQueryStatus", json::object()},
              {"queryType", q.query_type},
              {"queryErrors", json::array()},
              {"tasksMetadata", json::array()},
              {"state", q.status},
              {"consumerGroupId", q.consumer_group_id}};
  if (q.window_type) out["windowType"] = *q.window_type;
  return out;
}

json entity_json(const StatementResult& result, const StatementInfo& info, int64_t sequence_number,
                 const PropertyList& server_properties) {
  json out = described(result);
  if (out.is_null()) out = listed(result, info, server_properties);
  if (out.is_null() && !result.message.empty()) {
    json status = {{"status", "SUCCESS"}, {"message", result.message}};
    if (!result.query_id.empty()) status["queryId"] = result.query_id;
    out = {{"@type", "currentStatus"},
           {"commandId", info.command_id},
           {"commandStatus", status},
           {"commandSequenceNumber", sequence_number}};
  }
  if (out.is_null()) return out;
  out["statementText"] = result.statement;
  out["warnings"] = warnings_json(result.warnings);
  return out;
}

}  // namespace oxbow::sql::server
