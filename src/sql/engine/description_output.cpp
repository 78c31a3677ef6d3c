#include "sql/engine/description_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "sql/engine/topic_output.h"

namespace oxbow::sql {

namespace {

const char* const kQueryStatuses[] = {"RUNNING", "ERROR", "UNRESPONSIVE", "PAUSED"};

// Java's ISO_OFFSET_DATE_TIME of an instant at UTC: 2020-08-05T16:28:56.314Z, the fraction
// without its trailing zeros and left out when whole.
std::string iso_instant_text(int64_t ms) {
  int64_t seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  int millis = static_cast<int>(ms - seconds * 1000);
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::string text = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", utc.tm_year + 1900,
                                 utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  if (millis) {
    std::string fraction = fmt::format("{:03}", millis);
    while (fraction.back() == '0') fraction.pop_back();
    text += "." + fraction;
  }
  return text + "Z";
}

std::string labelled(const std::string& label, const std::string& value) {
  return fmt::format("{:<20} : {}\n", label, value);
}

// ksqlDB's Console.formatFieldType.
std::string field_type_text(const FieldInfo& field, const std::optional<std::string>& window_type,
                            bool table) {
  std::string type = schema_type_text(*field.schema);
  if (field.field_type == FieldInfo::FieldType::kHeader)
    return fmt::format("{:<16} {}", type,
                       field.header_key ? "(header('" + *field.header_key + "'))" : "(headers)");
  if (field.field_type == FieldInfo::FieldType::kKey)
    return fmt::format("{:<16} {}{}", type, table ? "(primary key)" : "(key)",
                       window_type ? " (Window type: " + *window_type + ")" : "");
  return type;
}

std::string schema_table(const std::optional<std::string>& window_type,
                         const std::vector<FieldInfo>& fields, bool table) {
  if (fields.empty()) return "";
  std::vector<std::vector<std::string>> rows = {{"Field", "Type"}};
  for (const auto& f : fields) rows.push_back({f.name, field_type_text(f, window_type, table)});
  return text_table(rows);
}

std::string single_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// "Queries that read from this STREAM" (and, as ksqlDB words it, "write from").
std::string queries_text(const std::vector<RunningQuery>& queries, const std::string& type,
                         const std::string& operation) {
  if (queries.empty()) return "";
  std::string out = "\nQueries that " + operation + " from this " + type +
                    "\n-----------------------------------\n";
  for (const auto& q : queries)
    out += q.id + " (" + q.state() + ") : " + single_line(q.query_string) + "\n";
  return out + "\nFor query topology and execution plan please run: EXPLAIN <QueryId>\n";
}

std::string names_text(const std::vector<std::string>& names, const std::string& title,
                       const std::string& hint) {
  if (names.empty()) return "";
  std::string out = "\n" + title + "\n-----------------------------------\n";
  for (const auto& n : names) out += n + "\n";
  return out + "\n" + hint + "\n";
}

// "\n<title padded to 20>\n<rule padded to 20>\n<text>\n", nothing for no text.
std::string section(const std::string& title, const std::string& text) {
  if (text.empty()) return "";
  return fmt::format("\n{:<20}\n{:<20}\n{}\n", title, std::string(title.size(), '-'), text);
}

}  // namespace

std::string RunningQuery::state() const {
  auto error = status_count.find("ERROR");
  return error != status_count.end() && error->second != 0 ? "ERROR" : "RUNNING";
}

std::string RunningQuery::status_text() const {
  std::string out;
  for (const char* status : kQueryStatuses) {
    auto found = status_count.find(status);
    if (found == status_count.end()) continue;
    out += (out.empty() ? "" : ",") + found->first + ":" + std::to_string(found->second);
  }
  return out;
}

std::string schema_type_text(const SqlType& type) {
  switch (type.base()) {
    case SqlBaseType::kString:
      return "VARCHAR(STRING)";
    case SqlBaseType::kArray:
      return "ARRAY<" + schema_type_text(*type.element()) + ">";
    case SqlBaseType::kMap:
      return "MAP<STRING, " + schema_type_text(*type.element()) + ">";
    case SqlBaseType::kStruct: {
      std::string out;
      for (const auto& f : type.fields())
        out += (out.empty() ? "" : ", ") + f.name + " " + schema_type_text(*f.type);
      return "STRUCT<" + out + ">";
    }
    case SqlBaseType::kDecimal:
      return fmt::format("DECIMAL({}, {})", type.precision(), type.scale());
    default:
      return type.base_name();
  }
}

std::string statistics_text(const std::vector<TopicStatistic>& statistics,
                            const std::string& last_label) {
  std::string out;
  for (const auto& s : statistics)
    out += s.value == std::round(s.value) ? fmt::format("{:>16}:{:>10.0f} ", s.name, s.value)
                                          : fmt::format("{:>16}:{:>10.2f} ", s.name, s.value);
  if (statistics.empty()) return out;
  int64_t last = statistics.front().timestamp;
  return out + fmt::format("{:>16}: {:>9}", last_label, last ? iso_instant_text(last) : "n/a");
}

std::string sources_table(const std::vector<DataSource>& sources, SourceKind kind) {
  std::vector<const DataSource*> sorted;
  for (const auto& s : sources) sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(),
            [](const DataSource* a, const DataSource* b) { return a->name < b->name; });
  std::vector<std::vector<std::string>> rows = {
      {kind == SourceKind::kTable ? "Table Name" : "Stream Name", "Kafka Topic", "Key Format",
       "Value Format", "Windowed"}};
  for (const DataSource* s : sorted)
    rows.push_back({s->name, s->topic, s->formats.key_format, s->formats.value_format,
                    s->window ? "true" : "false"});
  return text_table(rows);
}

std::string queries_table(const std::vector<RunningQuery>& queries) {
  std::vector<std::vector<std::string>> rows = {
      {"Query ID", "Query Type", "Status", "Sink Name", "Sink Kafka Topic", "Query String"}};
  auto joined = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
    return out;
  };
  for (const auto& q : queries)
    rows.push_back({q.id, q.query_type, q.status_text(), joined(q.sinks),
                    joined(q.sink_kafka_topics), single_line(q.query_string)});
  return text_table(rows) + "For detailed information on a Query run: EXPLAIN <Query ID>;\n";
}

std::string source_description_text(const SourceDescription& source) {
  bool table = source.type == "TABLE";
  std::string out = labelled("Name", source.name);
  if (!source.extended)
    return out + schema_table(source.window_type, source.fields, table) +
           "For runtime statistics and query details run: DESCRIBE <Stream,Table> EXTENDED;\n";
  out += labelled("Type", source.type);
  out += labelled("Timestamp field",
                  source.timestamp.empty() ? "Not set - using <ROWTIME>" : source.timestamp);
  out += labelled("Key format", source.key_format);
  out += labelled("Value format", source.value_format);
  if (!source.topic.empty())
    out += labelled(
        "Kafka topic",
        source.topic + (source.partitions != 0 ? fmt::format(" (partitions: {}, replication: {})",
                                                             source.partitions, source.replication)
                                               : ""));
  out += labelled("Statement", source.statement) + "\n";
  out += schema_table(source.window_type, source.fields, table);
  out += queries_text(source.read_queries, source.type, "read");
  out += queries_text(source.write_queries, source.type, "write");
  // As ksqlDB's CLI prints the statistics of a server that gives no per-host ones.
  out += "\nLocal runtime statistics\n------------------------\n";
  out += source.statistics + "\n" + source.error_stats + "\n";
  return out + "(Statistics of the local KSQL server interaction with the Kafka topic " +
         source.topic + ")\n";
}

std::string query_description_text(const QueryDescription& query) {
  std::string out = labelled("ID", query.id) + labelled("Query Type", query.query_type);
  if (!query.statement_text.empty()) out += labelled("SQL", query.statement_text);
  out += "\n" + schema_table(query.window_type, query.fields, false);
  out += names_text(query.sources, "Sources that this query reads from: ",
                    "For source description please run: DESCRIBE [EXTENDED] <SourceId>");
  out += names_text(query.sinks, "Sinks that this query writes to: ",
                    "For sink description please run: DESCRIBE [EXTENDED] <SinkId>");
  out += section("Execution plan", query.execution_plan);
  out += section("Processing topology", query.topology);
  if (!query.overridden_properties.empty()) {
    std::vector<std::vector<std::string>> rows = {{"Property", "Value"}};
    for (const auto& [name, value] : query.overridden_properties) rows.push_back({name, value});
    out += "\nOverridden Properties\n---------------------\n" + text_table(rows);
  }
  return out + "\n";  // where ksqlDB lists the query's errors, none kept here
}

}  // namespace oxbow::sql
