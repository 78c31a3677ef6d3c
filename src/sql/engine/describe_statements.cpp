// SHOW STREAMS|TABLES|QUERIES [EXTENDED], DESCRIBE [EXTENDED] and the descriptions EXPLAIN <id>
// gives: the catalog's sources and the persistent queries as ksqlDB's REST entities
// (descriptions.h), with the queries' counters as each source topic's runtime statistics.
#include <algorithm>

#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"

namespace oxbow::sql {

namespace {

std::optional<std::string> window_type_name(const std::optional<SourceWindow>& window) {
  if (!window) return std::nullopt;
  if (window->type == SourceWindowType::kSession) return "SESSION";
  return window->type == SourceWindowType::kHopping ? "HOPPING" : "TUMBLING";
}

// ksqlDB's EntityUtil.buildSourceSchemaEntity: the columns in order, keys and headers marked.
std::vector<FieldInfo> fields_of(const DataSource& source) {
  std::vector<FieldInfo> fields;
  for (const auto& c : source.columns) {
    FieldInfo f{c.name, c.type, std::nullopt, std::nullopt};
    if (c.ns == ColumnNamespace::kKey) f.field_type = FieldInfo::FieldType::kKey;
    if (c.ns == ColumnNamespace::kHeaders || c.ns == ColumnNamespace::kHeader)
      f.field_type = FieldInfo::FieldType::kHeader;
    if (c.ns == ColumnNamespace::kHeader) f.header_key = c.header_key;
    fields.push_back(std::move(f));
  }
  return fields;
}

// The cluster's topics, listed once per statement when the engine has a cluster: a source's
// partitions and replication come from its topic there (as ksqlDB describes the topic), else
// from what its CREATE declared (the topic is still to be made).
class TopicFacts {
 public:
  explicit TopicFacts(TopicAccess* access) : access_(access) {}

  // Partitions and replication of `source`'s topic; a failed listing adds ksqlDB's warning.
  std::pair<int, int> of(const DataSource& source, std::vector<std::string>& warnings) {
    if (access_ && !listed_) {
      listed_ = true;
      try {
        topics_ = access_->list_topics(false);
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    }
    if (!error_.empty()) {
      warnings.push_back("Error from Kafka: " + error_);
    } else {
      for (const auto& t : topics_)
        if (t.name == source.topic)
          return {static_cast<int>(t.replicas.size()), t.replicas.empty() ? 0 : t.replicas[0]};
    }
    if (!source.partitions) return {0, 0};
    return {*source.partitions, source.replicas.value_or(1)};
  }

 private:
  TopicAccess* access_;
  bool listed_ = false;
  std::vector<TopicInfo> topics_;
  std::string error_;
};

// The statistic `name` summed over the traffic of `topic` in `by_topic` of every query, its time
// the latest; none when no query has counted a record there (ksqlDB's sensors come with the
// first record).
void add_statistic(std::vector<TopicStatistic>& out, const std::string& name,
                   const std::vector<PersistentQuery>& queries, const std::string& topic,
                   std::map<std::string, std::shared_ptr<TopicTraffic>> QueryCounters::*by_topic,
                   bool failures) {
  TopicStatistic stat{name, 0, 0};
  for (const auto& q : queries) {
    if (!q.counters) continue;
    auto found = ((*q.counters).*by_topic).find(topic);
    if (found == ((*q.counters).*by_topic).end()) continue;
    const TopicTraffic& t = *found->second;
    stat.value +=
        static_cast<double>((failures ? t.failed : t.messages).load(std::memory_order_relaxed));
    stat.timestamp =
        std::max(stat.timestamp,
                 (failures ? t.last_failed_ms : t.last_message_ms).load(std::memory_order_relaxed));
  }
  if (stat.value > 0) out.push_back(std::move(stat));
}

SourceDescription describe_source(const DataSource& source, bool extended,
                                  const std::vector<PersistentQuery>& queries,
                                  const Catalog& catalog, TopicFacts& topics,
                                  std::vector<std::string>& warnings) {
  SourceDescription d;
  d.name = source.name;
  d.window_type = window_type_name(source.window);
  for (const auto& q : queries) {
    if (std::find(q.sources.begin(), q.sources.end(), source.name) != q.sources.end())
      d.read_queries.push_back(running_query(q, catalog));
    if (q.sink == source.name) d.write_queries.push_back(running_query(q, catalog));
  }
  d.fields = fields_of(source);
  d.type = source.kind == SourceKind::kTable ? "TABLE" : "STREAM";
  d.timestamp = source.timestamp_column.value_or("");
  d.extended = extended;
  d.key_format = source.formats.key_format;
  d.value_format = source.formats.value_format;
  d.topic = source.topic;
  std::tie(d.partitions, d.replication) = topics.of(source, warnings);
  d.statement = source.statement;
  if (extended) {
    add_statistic(d.statistics_list, "consumer-total-messages", queries, source.topic,
                  &QueryCounters::consumed, false);
    add_statistic(d.statistics_list, "total-messages", queries, source.topic,
                  &QueryCounters::produced, false);
    add_statistic(d.error_stats_list, "consumer-failed-messages", queries, source.topic,
                  &QueryCounters::consumed, true);
    d.statistics = statistics_text(d.statistics_list, "last-message");
    d.error_stats = statistics_text(d.error_stats_list, "last-failed");
  }
  return d;
}

}  // namespace

RunningQuery running_query(const PersistentQuery& query, const Catalog& catalog) {
  RunningQuery r;
  r.query_string = query.statement;
  r.sinks = {query.sink};
  const DataSource* sink = catalog.find_source(query.sink);
  r.sink_kafka_topics = {sink ? sink->topic : query.sink};
  r.id = query.id;
  r.status_count[query.paused ? "PAUSED" : "RUNNING"] = 1;
  return r;
}

QueryDescription describe_query(const PersistentQuery& query, const DataSource* result) {
  QueryDescription d;
  d.id = query.id;
  d.statement_text = query.statement;
  if (result) {
    d.window_type = window_type_name(result->window);
    d.fields = fields_of(*result);
  }
  d.sources = query.sources;
  std::sort(d.sources.begin(), d.sources.end());
  d.sources.erase(std::unique(d.sources.begin(), d.sources.end()), d.sources.end());
  if (!query.sink.empty()) d.sinks = {query.sink};
  d.topology = query.topology.describe().toString();
  d.execution_plan = query.execution_plan;
  d.overridden_properties = query.overridden_properties;
  d.status = query.paused ? "PAUSED" : "RUNNING";
  auto app_id = query.streams_config.find("application.id");
  if (app_id != query.streams_config.end()) d.consumer_group_id = app_id->second;
  return d;
}

// "STREAMS" or "TABLES": the catalog's sources of that kind, by name.
std::vector<DataSource> Engine::sources_of(const std::string& kinds) const {
  SourceKind kind = kinds == "TABLES" ? SourceKind::kTable : SourceKind::kStream;
  std::vector<DataSource> out;
  for (const auto& [name, source] : catalog_.sources())
    if (source.kind == kind) out.push_back(source);
  return out;
}

StatementResult Engine::describe_sources(const std::vector<const DataSource*>& sources,
                                         bool extended, bool list) {
  StatementResult r;
  TopicFacts topics(topic_access_.get());
  for (const DataSource* s : sources)
    r.source_descriptions.push_back(
        describe_source(*s, extended, queries_, catalog_, topics, r.warnings));
  // One listing serves every source: its failure is one warning.
  std::sort(r.warnings.begin(), r.warnings.end());
  r.warnings.erase(std::unique(r.warnings.begin(), r.warnings.end()), r.warnings.end());
  r.entity = list ? StatementResult::Entity::kSourceDescriptionList
                  : StatementResult::Entity::kSourceDescription;
  return r;
}

StatementResult Engine::show(const parser::ShowList& show) {
  if (show.what == "STREAMS" || show.what == "TABLES") {
    StatementResult r;
    r.sources = sources_of(show.what);
    if (!show.extended) {
      r.entity = show.what == "TABLES" ? StatementResult::Entity::kTables
                                       : StatementResult::Entity::kStreams;
      return r;
    }
    std::vector<const DataSource*> listed;
    for (const auto& s : r.sources) listed.push_back(&s);
    StatementResult described = describe_sources(listed, true, true);
    described.sources.clear();
    return described;
  }
  if (show.what == "QUERIES") {
    StatementResult r;
    for (const auto& q : queries_) {
      if (show.extended)
        r.query_descriptions.push_back(describe_query(q, catalog_.find_source(q.sink)));
      else
        r.queries.push_back(running_query(q, catalog_));
    }
    r.entity = show.extended ? StatementResult::Entity::kQueryDescriptionList
                             : StatementResult::Entity::kQueries;
    return r;
  }
  if (show.what == "PROPERTIES" || show.what == "VARIABLES" || show.what == "TYPES")
    return show_settings(show);
  if (show.what == "FUNCTIONS") return show_functions();
  if (show.what == "TOPICS") return show_topics(show);
  throw SqlError("SHOW " + show.what + " is not supported by the engine yet.");
}

StatementResult Engine::describe(const parser::Describe& d) {
  if (d.what == "STREAMS" || d.what == "TABLES") {
    std::vector<DataSource> sources = sources_of(d.what);
    std::vector<const DataSource*> listed;
    for (const auto& s : sources) listed.push_back(&s);
    return describe_sources(listed, d.extended, true);
  }
  if (d.what == "FUNCTION") return describe_function(d.name.text);
  if (d.what != "SOURCE")
    throw SqlError("DESCRIBE " + d.what + " is not supported by the engine yet.");
  const DataSource* source = catalog_.find_source(d.name.text);
  if (!source) throw SqlError("Could not find STREAM/TABLE '" + d.name.text + "' in the Metastore");
  return describe_sources({source}, d.extended, false);
}

}  // namespace oxbow::sql
