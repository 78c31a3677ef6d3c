#include "cli/sql_entity_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "common/properties.h"
#include "sql/engine/description_output.h"
#include "sql/engine/topic_output.h"
#include "sql/server/entities.h"

namespace oxbow::cli {

namespace {

using nlohmann::json;
using namespace oxbow::sql;

std::string text(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

int number(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_number() ? found->get<int>() : 0;
}

const json& array(const json& object, const char* key) {
  static const json kEmpty = json::array();
  auto found = object.find(key);
  return found != object.end() && found->is_array() ? *found : kEmpty;
}

std::vector<std::string> strings(const json& items) {
  std::vector<std::string> out;
  for (const auto& i : items)
    if (i.is_string()) out.push_back(i.get<std::string>());
  return out;
}

// The inverse of the server's schema_json: a SchemaInfo back into a type.
SqlTypePtr schema_type(const json& schema) {
  std::string name = text(schema, "type");
  if (name == "ARRAY") return SqlType::array(schema_type(schema.at("memberSchema")));
  if (name == "MAP") return SqlType::map(SqlType::string(), schema_type(schema.at("memberSchema")));
  if (name == "STRUCT") {
    std::vector<SqlField> fields;
    for (const auto& f : array(schema, "fields"))
      fields.push_back({text(f, "name"), schema_type(f.at("schema"))});
    return SqlType::structure(std::move(fields));
  }
  if (name == "DECIMAL") {
    const json& p = schema.at("parameters");
    return SqlType::decimal(number(p, "precision"), number(p, "scale"));
  }
  for (auto base : {SqlBaseType::kBoolean, SqlBaseType::kInteger, SqlBaseType::kBigint,
                    SqlBaseType::kDouble, SqlBaseType::kString, SqlBaseType::kBytes,
                    SqlBaseType::kDate, SqlBaseType::kTime, SqlBaseType::kTimestamp})
    if (name == SqlType::of(base)->base_name()) return SqlType::of(base);
  throw std::runtime_error("unknown type in the server's answer: " + name);
}

std::vector<FieldInfo> fields(const json& items) {
  std::vector<FieldInfo> out;
  for (const auto& f : items) {
    FieldInfo field{text(f, "name"), schema_type(f.at("schema")), {}, {}};
    std::string type = text(f, "type");
    if (type == "KEY") field.field_type = FieldInfo::FieldType::kKey;
    if (type == "HEADER") field.field_type = FieldInfo::FieldType::kHeader;
    if (f.contains("headerKey")) field.header_key = text(f, "headerKey");
    out.push_back(std::move(field));
  }
  return out;
}

std::optional<std::string> window_type(const json& object) {
  if (!object.contains("windowType") || !object["windowType"].is_string()) return std::nullopt;
  return object["windowType"].get<std::string>();
}

std::vector<RunningQuery> running_queries(const json& items) {
  std::vector<RunningQuery> out;
  for (const auto& q : items) {
    RunningQuery query{text(q, "queryString"),
                       strings(array(q, "sinks")),
                       strings(array(q, "sinkKafkaTopics")),
                       text(q, "id"),
                       {},
                       text(q, "queryType")};
    if (q.contains("statusCount") && q["statusCount"].is_object())
      for (const auto& [status, count] : q["statusCount"].items())
        if (count.is_number()) query.status_count[status] = count.get<int>();
    out.push_back(std::move(query));
  }
  return out;
}

std::string sources_text(const json& items, SourceKind kind) {
  std::vector<DataSource> sources;
  for (const auto& s : items) {
    DataSource source;
    source.kind = kind;
    source.name = text(s, "name");
    source.topic = text(s, "topic");
    source.formats.key_format = text(s, "keyFormat");
    source.formats.value_format = text(s, "valueFormat");
    if (s.value("isWindowed", false)) source.window = SourceWindow{};
    sources.push_back(std::move(source));
  }
  return sources_table(sources, kind);
}

SourceDescription source_description(const json& s) {
  SourceDescription d;
  d.name = text(s, "name");
  d.window_type = window_type(s);
  d.read_queries = running_queries(array(s, "readQueries"));
  d.write_queries = running_queries(array(s, "writeQueries"));
  d.fields = fields(array(s, "fields"));
  d.type = text(s, "type");
  d.timestamp = text(s, "timestamp");
  d.statistics = text(s, "statistics");
  d.error_stats = text(s, "errorStats");
  d.extended = s.value("extended", false);
  d.key_format = text(s, "keyFormat");
  d.value_format = text(s, "valueFormat");
  d.topic = text(s, "topic");
  d.partitions = number(s, "partitions");
  d.replication = number(s, "replication");
  d.statement = text(s, "statement");
  return d;
}

QueryDescription query_description(const json& q) {
  QueryDescription d;
  d.id = text(q, "id");
  d.statement_text = text(q, "statementText");
  d.window_type = window_type(q);
  d.fields = fields(array(q, "fields"));
  d.sources = strings(array(q, "sources"));
  d.sinks = strings(array(q, "sinks"));
  d.topology = text(q, "topology");
  d.execution_plan = text(q, "executionPlan");
  d.overridden_properties = server::text_fields(q, "overriddenProperties");
  d.status = text(q, "state");
  d.query_type = text(q, "queryType");
  return d;
}

std::string topics_text(const json& items) {
  std::vector<TopicInfo> topics;
  for (const auto& t : items) {
    TopicInfo topic{text(t, "name"), {}, 0, 0};
    for (const auto& r : array(t, "replicaInfo"))
      if (r.is_number()) topic.replicas.push_back(r.get<int>());
    topics.push_back(std::move(topic));
  }
  return topics_table(topics, false);
}

// A session's SET properties are listed at its level, the server's others at SERVER's.
std::string properties_text(const json& entity) {
  auto overwritten = strings(array(entity, "overwrittenProperties"));
  std::vector<std::vector<std::string>> rows = {{"Property", "Scope", "Level", "Value"}};
  for (const auto& p : array(entity, "properties")) {
    bool session =
        std::find(overwritten.begin(), overwritten.end(), text(p, "name")) != overwritten.end();
    rows.push_back(
        {text(p, "name"), text(p, "scope"), session ? "SESSION" : "SERVER", text(p, "value")});
  }
  return text_table(rows);
}

std::string functions_text(const json& items) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : items) rows.push_back({text(f, "name"), text(f, "category")});
  std::sort(rows.begin(), rows.end());
  rows.insert(rows.begin(), {"Function Name", "Category"});
  return text_table(rows);
}

// A description wrapped at word boundaries within the 80 columns after its label, its further
// lines indented under the first, as ksqlDB's CLI prints a function's texts.
std::string labelled(std::string_view indent, const std::string& label, std::string description) {
  description = std::string(trim(description));
  if (description.empty()) return "";
  std::string head = fmt::format("{}{:<12}: ", indent, label);
  const size_t label_width = head.size() + (indent.empty() ? 0 : 1);  // a tab counts as two
  const size_t width = 80 - label_width;
  std::string out = head, line;
  std::istringstream words(description);
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(label_width, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

std::string function_text(const json& entity) {
  std::string name = text(entity, "name");
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out = fmt::format("{:<12}: {}\n", "Name", name);
  if (!trim(text(entity, "author")).empty())
    out += fmt::format("{:<12}: {}\n", "Author", text(entity, "author"));
  if (!trim(text(entity, "version")).empty())
    out += fmt::format("{:<12}: {}\n", "Version", text(entity, "version"));
  out += labelled("", "Overview", text(entity, "description"));
  out += fmt::format("{:<12}: {}\n{:<12}: {}\n{:<12}: \n", "Type", text(entity, "type"), "Jar",
                     text(entity, "path"), "Variations");
  for (const auto& variant : array(entity, "functions")) {
    std::string arguments;
    for (const auto& a : array(variant, "arguments")) {
      std::string type = text(a, "type") + (a.value("isVariadic", false) ? "[]" : "");
      arguments += (arguments.empty() ? "" : ", ") +
                   (text(a, "name").empty() ? type : text(a, "name") + " " + type);
    }
    out += fmt::format("\n\t{:<12}: {}({})\n\t{:<12}: {}\n", "Variation", name, arguments,
                       "Returns", text(variant, "returnType"));
    out += labelled("\t", "Description", text(variant, "description"));
    for (const auto& a : array(variant, "arguments"))
      out += labelled("\t", text(a, "name"), text(a, "description"));
  }
  return out;
}

std::string variables_text(const json& items) {
  std::vector<std::vector<std::string>> rows = {{"Variable Name", "Value"}};
  for (const auto& v : items) rows.push_back({text(v, "name"), text(v, "value")});
  return text_table(rows);
}

template <typename Describe>
std::string each(const json& items, Describe describe) {
  std::string out;
  for (const auto& item : items) out += describe(item) + "\n";
  return out;
}

std::string body_text(const json& entity) {
  std::string type = text(entity, "@type");
  if (type == "currentStatus")
    return text_table(
        {{"Message"}, {text(entity.value("commandStatus", json::object()), "message")}});
  if (type == "streams") return sources_text(array(entity, "streams"), SourceKind::kStream);
  if (type == "tables") return sources_text(array(entity, "tables"), SourceKind::kTable);
  if (type == "queries") return queries_table(running_queries(array(entity, "queries")));
  if (type == "sourceDescription")
    return source_description_text(source_description(entity.at("sourceDescription")));
  if (type == "source_descriptions")
    return each(array(entity, "sourceDescriptions"),
                [](const json& s) { return source_description_text(source_description(s)); });
  if (type == "queryDescription")
    return query_description_text(query_description(entity.at("queryDescription")));
  if (type == "query_descriptions")
    return each(array(entity, "queryDescriptions"),
                [](const json& q) { return query_description_text(query_description(q)); });
  if (type == "kafka_topics") return topics_text(array(entity, "topics"));
  if (type == "properties") return properties_text(entity);
  if (type == "function_names") return functions_text(array(entity, "functions"));
  if (type == "variables") return variables_text(array(entity, "variables"));
  if (type == "describe_function") return function_text(entity);
  return entity.dump(2) + "\n";
}

}  // namespace

std::string entity_text(const json& entity) {
  std::string out = body_text(entity);
  for (const auto& w : array(entity, "warnings")) out += "WARNING: " + text(w, "message") + "\n";
  return out;
}

std::string error_text(const std::string& body) {
  json error = json::parse(body, nullptr, false);
  if (error.is_object() && error.contains("message") && error["message"].is_string())
    return error["message"].get<std::string>();
  return body;
}

}  // namespace oxbow::cli
