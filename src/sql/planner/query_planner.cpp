#include "sql/planner/query_planner.h"

#include "sql/planner/planner_internal.h"

#include <spdlog/spdlog.h>

#include <time.h>

#include <set>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/processor.h"
#include "oxbow/streams/streams_builder.h"
#include "sql/binder/sql_error.h"
#include "sql/execution/program.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {

streams::Topology plan_query(const physical::Step& plan, const BoundQuery& q,
                             const DataSource& sink, std::shared_ptr<QueryCounters> counters,
                             RowCallback rows) {
  const planning::Output out{sink, std::move(rows)};
  planning::PlanShape shape = planning::shape_of(plan, q);
  bool table_source = shape.relation->type.find("TableSource") != std::string::npos;
  if (shape.group_by && !shape.joined()) {
    if (table_source) return planning::plan_table_aggregate(q, shape, out, std::move(counters));
    return planning::plan_aggregate(q, shape, out, std::move(counters));
  }
  if (shape.joined() || table_source)
    return planning::plan_relational(q, shape, out, std::move(counters));
  streams::StreamsBuilder builder;
  auto stream = builder.stream<Row, Row>(q.from->topic, planning::consumed_from(*q.from, counters));
  planning::select_onto(stream, q, shape, out, std::move(counters), false);
  return builder.build();
}

streams::Topology plan_query(const physical::Step& plan, const BoundQuery& q,
                             const DataSource& sink, std::shared_ptr<QueryCounters> counters) {
  return plan_query(plan, q, sink, std::move(counters), nullptr);
}

namespace planning {

namespace {

void mark_columns_read(const physical::Step& step, std::vector<bool>& read) {
  for (int c : step.columns_read) read.at(static_cast<size_t>(c)) = true;
  for (const auto& s : step.sources) mark_columns_read(*s, read);
}

}  // namespace

PlanShape shape_of(const physical::Step& plan, const BoundQuery& q) {
  PlanShape shape;
  const physical::Step* at = &plan;
  // By type and context: a sink's context is its name, which a quoted name can make anything.
  for (; at->sources.size() == 1; at = at->sources.front().get()) {
    if (at->type.ends_with("SelectKey") && at->context == "PartitionBy") shape.partition_by = at;
    if (at->type.find("GroupBy") != std::string::npos) shape.group_by = at;
  }
  shape.relation = at;
  std::vector<bool> read(q.scope.columns.size());
  mark_columns_read(plan, read);
  shape.in_rows.resize(q.scope.columns.size());
  for (size_t i = 0; i < q.scope.columns.size(); ++i) {
    const ScopeColumn& c = q.scope.columns[i];
    shape.in_rows[i] = read[i] || c.pseudo || c.ns != ColumnNamespace::kValue;
  }
  return shape;
}

RowLayout row_layout(const BoundQuery& q, const PlanShape& shape, const DataSource& source,
                     const std::string& alias, bool windowed) {
  RowLayout layout;
  layout.key_count = key_columns(source).size();
  layout.windowed = windowed;
  uint32_t value = 0;
  for (size_t i = 0; i < q.scope.columns.size(); ++i) {
    const ScopeColumn& c = q.scope.columns[i];
    if (c.source != alias || c.pseudo || c.ns != ColumnNamespace::kValue) continue;
    if (shape.in_rows[i]) layout.values.push_back(value);
    ++value;
  }
  return layout;
}

JoinSide side_of(const physical::Step& side) {
  JoinSide out;
  const physical::Step* at = &side;
  for (; at->sources.size() == 1; at = at->sources.front().get()) {
    if (at->type.ends_with("SelectKey")) out.rekey = at;
    if (at->context == "PushedDownWhereFilter") out.pushed = at;
  }
  out.relation = at;
  return out;
}

bool windowed_source(const BoundQuery& q) {
  return q.from->window && q.joins.empty();
}

std::vector<int> input_row_index(const BoundQuery& q, const PlanShape& shape) {
  std::set<std::string> windowed;  // the aliases of windowed sources
  if (q.from->window) windowed.insert(q.from_alias);
  for (const auto& j : q.joins)
    if (j.right->window) windowed.insert(j.alias);
  std::vector<int> row_index;
  int next = 0;
  for (size_t i = 0; i < q.scope.columns.size(); ++i) {
    const ScopeColumn& c = q.scope.columns[i];
    bool window_bound = c.name == "WINDOWSTART" || c.name == "WINDOWEND";
    bool readable = c.pseudo ? (c.name == "ROWTIME" || c.name == "ROWPARTITION" ||
                                c.name == "ROWOFFSET" || (window_bound && windowed.count(c.source)))
                             : c.ns == ColumnNamespace::kKey ||
                                   (c.ns == ColumnNamespace::kValue && shape.in_rows[i]);
    row_index.push_back(readable ? next++ : -1);
  }
  return row_index;
}

const Row& InputRow::fill(const Row& key, const Row& value, int64_t timestamp,
                          const std::optional<streams::RecordMetadata>& metadata) {
  size_t at = 0;
  const size_t key_count = layout_.key_count;
  for (size_t k = 0; k < key_count; ++k)
    if (k < key.size())
      row_[at++] = key[k];
    else
      row_[at++].set_null();
  for (uint32_t k : layout_.values)
    if (k < value.size())
      row_[at++] = value[k];
    else
      row_[at++].set_null();
  row_[at++].set_bigint(timestamp);
  row_[at++].set_integer(metadata ? metadata->partition : 0);
  row_[at++].set_bigint(metadata ? metadata->offset : 0);
  if (layout_.windowed) {  // the key's window bounds (source_key_serde)
    for (size_t k = key_count; k < key_count + 2; ++k) {
      if (k < key.size())
        row_[at++] = key[k];
      else
        row_[at++].set_null();
    }
  }
  return row_;
}

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void report_error(QueryCounters& counters, const std::string& error, const std::string& where) {
  counters.expression_errors.fetch_add(1, std::memory_order_relaxed);
  std::string message = "Error computing expression for column " + where + ": " + error;
  if (!counters.log) return spdlog::warn("{}", message);
  counters.log->log({counters.query_id + ".Project", now_ms(),
                     ProcessingLogEntry::Type::kRecordProcessingError, message, "", ""});
}

streams::Serde<Row> logged_source_serde(const DataSource& source, bool key,
                                        std::shared_ptr<QueryCounters> counters) {
  auto inner =
      key ? source_key_serde(source) : row_serde(source.formats, value_columns(source), false);
  // Logs a record that does not deserialize, then lets Streams' handler skip and count it.
  // Records are counted as their values are read (a tombstone, never deserialized, is not).
  std::shared_ptr<TopicTraffic> traffic = QueryCounters::traffic(counters->consumed, source.topic);
  auto logged = [key, counters, traffic](std::string_view topic, const std::exception& e) {
    counters->deserialization_errors.fetch_add(1, std::memory_order_relaxed);
    if (key) traffic->count_message();  // its value is never read
    traffic->count_failure();
    if (counters->log)
      counters->log->log({counters->query_id + ".KsqlTopic.Source.deserializer", now_ms(),
                          ProcessingLogEntry::Type::kDeserializationError,
                          std::string("Failed to deserialize ") + (key ? "key" : "value") +
                              " from topic: " + std::string(topic) + ". " + e.what(),
                          key ? "key" : "value", std::string(topic)});
  };
  auto read = inner.deserialize;
  auto counted = key ? std::shared_ptr<TopicTraffic>() : traffic;
  inner.deserialize = [read, logged, counted](std::string_view topic, std::string_view bytes) {
    if (counted) counted->count_message();
    try {
      return read(topic, bytes);
    } catch (const streams::SerializationException& e) {
      logged(topic, e);
      throw;
    }
  };
  if (auto read_into = inner.deserialize_into)
    inner.deserialize_into = [read_into, logged, counted](std::string_view topic,
                                                          std::string_view bytes, Row& row) {
      if (counted) counted->count_message();
      try {
        read_into(topic, bytes, row);
      } catch (const streams::SerializationException& e) {
        logged(topic, e);
        throw;
      }
    };
  return inner;
}

streams::Serde<Row> sink_value_serde(const DataSource& sink,
                                     const std::shared_ptr<QueryCounters>& counters) {
  auto serde = row_serde(sink.formats, value_columns(sink), false);
  std::shared_ptr<TopicTraffic> traffic = QueryCounters::traffic(counters->produced, sink.topic);
  auto write = serde.serialize;
  serde.serialize = [write, traffic](std::string_view topic, const Row& row) {
    traffic->count_message();
    return write(topic, row);
  };
  if (auto write_into = serde.serialize_into)
    serde.serialize_into = [write_into, traffic](std::string_view topic, const Row& row,
                                                 std::string& out) {
      traffic->count_message();
      write_into(topic, row, out);
    };
  return serde;
}

streams::Consumed<Row, Row> consumed_from(const DataSource& source,
                                          const std::shared_ptr<QueryCounters>& counters) {
  return streams::Consumed<Row, Row>::with(logged_source_serde(source, true, counters),
                                           logged_source_serde(source, false, counters));
}

void unsupported(const std::string& what) {
  throw SqlError(what + " is not supported by the engine yet.");
}

}  // namespace planning

int64_t coarse_now_ms() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

void TopicTraffic::count_message() {
  messages.fetch_add(1, std::memory_order_relaxed);
  last_message_ms.store(coarse_now_ms(), std::memory_order_relaxed);
}

void TopicTraffic::count_failure() {
  failed.fetch_add(1, std::memory_order_relaxed);
  last_failed_ms.store(coarse_now_ms(), std::memory_order_relaxed);
}

std::shared_ptr<TopicTraffic> QueryCounters::traffic(
    std::map<std::string, std::shared_ptr<TopicTraffic>>& by_topic, const std::string& topic) {
  auto& slot = by_topic[topic];
  if (!slot) slot = std::make_shared<TopicTraffic>();
  return slot;
}

streams::ProcessingExceptionHandler processing_error_handler(
    std::shared_ptr<QueryCounters> counters) {
  return [counters](const streams::ErrorHandlerContext& context, const streams::Record*,
                    const std::exception& e) {
    counters->processing_errors.fetch_add(1, std::memory_order_relaxed);
    std::string message = "Error processing record in " + std::string(context.processorNodeId()) +
                          " (task " + std::string(context.taskId()) + "): " + e.what();
    if (counters->log)
      counters->log->log({counters->query_id + "." + std::string(context.processorNodeId()),
                          planning::now_ms(), ProcessingLogEntry::Type::kRecordProcessingError,
                          message, "", ""});
    else
      spdlog::warn("{}", message);
    return streams::ProcessingExceptionHandlerResponse::CONTINUE;
  };
}

}  // namespace oxbow::sql
