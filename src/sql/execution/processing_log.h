#pragma once
// ksqlDB's processing log (docs/sql/ksqldb-facts.md §3.5): what a query could not do with a
// record (a value or key that did not deserialize, an expression that failed), one entry each,
// while the query goes on. The engine's caller decides where entries go: the topic behind the
// KSQL_PROCESSING_LOG stream (`oxbow sql run`), memory (tests), the log.
//
// An entry's value as ksqlDB writes it (JSON, its processing-log schema):
//   {"LOGGER": "<query id>...", "LEVEL": "ERROR", "TIME": <ms>,
//    "MESSAGE": {"TYPE": 0 | 1, "DESERIALIZATIONERROR": {"TARGET": "key" | "value",
//                 "ERRORMESSAGE": ..., "RECORDB64": null, "CAUSE": [], "topic": ...} | null,
//                "RECORDPROCESSINGERROR": {"ERRORMESSAGE": ..., "RECORD": null, "CAUSE": []} |
//                null, "PRODUCTIONERROR": null, "SERIALIZATIONERROR": null,
//                "KAFKASTREAMSTHREADERROR": null}}
// Records themselves are left out (RECORDB64 and RECORD null), as ksqlDB does by default
// (ksql.logging.processing.rows.include=false).
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace oxbow::sql {

struct ProcessingLogEntry {
  enum class Type { kDeserializationError = 0, kRecordProcessingError = 1 };
  std::string logger;  // the query's id and where: "CSAS_OUT_0.KsqlTopic.Source.deserializer"
  int64_t time_ms = 0;
  Type type = Type::kRecordProcessingError;
  std::string message;
  std::string target;  // deserialization: "key" or "value"
  std::string topic;   // deserialization: the record's topic
};

// The entry's value in ksqlDB's processing-log JSON.
std::string processing_log_json(const ProcessingLogEntry& entry);

// Where a query's entries go; called from the queries' stream threads.
class ProcessingLog {
 public:
  virtual ~ProcessingLog() = default;
  virtual void log(const ProcessingLogEntry& entry) = 0;
};

// Keeps the last `capacity` entries.
class MemoryProcessingLog : public ProcessingLog {
 public:
  explicit MemoryProcessingLog(size_t capacity = 1000) : capacity_(capacity) {}
  void log(const ProcessingLogEntry& entry) override;
  std::vector<ProcessingLogEntry> entries() const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<ProcessingLogEntry> entries_;
};

}  // namespace oxbow::sql
