#pragma once
// The text of SHOW TOPICS and PRINT as ksqlDB writes it: pure functions over records and topic
// facts (bytes in, lines out), so that every rule is tested without a cluster.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sql/engine/topic_access.h"

namespace oxbow::sql {

// ksqlDB's guess of a topic's key and value formats (its RecordFormatter): each side starts with
// every format in ksqlDB's order (keys also windowed: SESSION(f), HOPPING(f), TUMBLING(f), f)
// and drops those that fail to read a record; a record is written in the first format left.
class RecordFormatter {
 public:
  explicit RecordFormatter(const RegistryDecoders& registry = {});
  // One line per record. A batch narrows the formats before any of its records is written, as
  // ksqlDB rewrites a batch whose first format was dropped while reading it.
  std::vector<std::string> format(std::span<const TopicRecord> records);
  // The formats still possible (without the raw-bytes fallback), or ksqlDB's shrug when only
  // nulls were seen.
  std::vector<std::string> key_formats() const { return keys_.names(); }
  std::vector<std::string> value_formats() const { return values_.names(); }

  struct Named {
    std::string name;
    FormatDecoder decode;
    bool fallback = false;  // the raw bytes: never fails, never listed
  };
  class Candidates {
   public:
    explicit Candidates(std::vector<Named> formats) : formats_(std::move(formats)) {}
    void narrow(const std::optional<std::string>& bytes);
    std::string render(const std::optional<std::string>& bytes) const;
    std::vector<std::string> names() const;

   private:
    std::vector<Named> formats_;
    bool seen_data_ = false;
  };

 private:
  Candidates keys_, values_;
};

// PRINT's output over batches of records as they are read (ksqlDB's TopicStreamWriter): the
// "Key format: " and "Value format: " lines whenever the guesses change, then every interval-th
// record until `limit` records are written.
class PrintSession {
 public:
  PrintSession(int64_t interval, std::optional<int64_t> limit,
               const RegistryDecoders& registry = {});
  std::vector<std::string> lines(std::span<const TopicRecord> records);
  bool done() const { return limit_ && written_ >= *limit_; }

 private:
  RecordFormatter formatter_;
  int64_t interval_;
  std::optional<int64_t> limit_;
  int64_t polled_ = 0, written_ = 0;
  std::vector<std::string> shown_keys_, shown_values_;  // the formats last printed
};

// Pieces of a record's line, as ksqlDB (Java) writes them.
std::string rowtime_text(int64_t timestamp);          // "2020/05/06 10:28:01.123 Z", or "N/A"
std::string java_bytes_text(std::string_view bytes);  // Kafka's Bytes.toString
bool is_java_text(std::string_view bytes);            // UTF-8 that Java decodes without a U+FFFD
bool is_jackson_json(std::string_view text);          // what ksqlDB's JSON reader accepts

// SHOW TOPICS as ksqlDB's CLI prints it: "Kafka Topic | Partitions | Partition Replicas" (and
// with EXTENDED "Consumers | ConsumerGroups"), the replicas one number when every partition has
// the same, else a list.
std::string topics_table(const std::vector<TopicInfo>& topics, bool extended);

// A table as ksqlDB's CLI draws one: rows[0] the headers, a rule of dashes under them and after
// the last row, the cells padded to their column's widest and separated by " | ".
std::string text_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace oxbow::sql
