// The statements that look at the Kafka cluster rather than the catalog: SHOW | LIST [ALL]
// TOPICS [EXTENDED] and PRINT, through the TopicAccess the engine was given.
#include <algorithm>
#include <cctype>

#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/engine/print_topic.h"
#include "sql/engine/topic_output.h"

namespace oxbow::sql {

namespace {

// ksqlDB's hidden topics (ksql.hidden.topics' default, which covers its own `_confluent-ksql-`
// prefix): left out of SHOW TOPICS, shown by SHOW ALL TOPICS.
bool hidden(const std::string& name) {
  for (const char* literal :
       {"_schemas", "connect-configs", "connect-offsets", "connect-status", "connect-statuses"})
    if (name == literal) return true;
  return name.starts_with("_confluent") || name.starts_with("__confluent");
}

// Kafka's own internal topics, which ksqlDB never lists (its admin client lists topics without
// the internal ones, SHOW ALL TOPICS too).
bool kafka_internal(const std::string& name) {
  return name == "__consumer_offsets" || name == "__transaction_state";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ksqlDB keeps an unquoted topic name's case (PRINT's name is case-sensitive); the parser
// upper-cased it, so it is read again from the statement's text, just after PRINT.
std::string print_topic_name(const parser::Print& print, const std::string& text) {
  if (print.topic.quoted) return print.topic.text;
  size_t i = text.find_first_of(" \t\r\n");
  if (i == std::string::npos) return print.topic.text;
  i = text.find_first_not_of(" \t\r\n", i);
  if (i == std::string::npos) return print.topic.text;
  size_t end = text.find_first_of(" \t\r\n;", i);
  std::string written = text.substr(i, end == std::string::npos ? std::string::npos : end - i);
  std::string upper = written;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper == print.topic.text ? written : print.topic.text;
}

}  // namespace

TopicAccess& Engine::cluster(const std::string& text) const {
  if (!topic_access_)
    throw SqlError("This statement needs a Kafka cluster and the engine was given none: " + text);
  return *topic_access_;
}

StatementResult Engine::show_topics(const parser::ShowList& show) {
  std::vector<TopicInfo> topics = cluster("SHOW TOPICS").list_topics(show.extended);
  std::erase_if(topics, [&](const TopicInfo& t) {
    return kafka_internal(t.name) || (!show.all && hidden(t.name));
  });
  std::sort(topics.begin(), topics.end(),
            [](const TopicInfo& a, const TopicInfo& b) { return a.name < b.name; });
  StatementResult r;
  r.topics = StatementResult::TopicList{show.extended, std::move(topics)};
  return r;
}

std::string checked_print_topic(TopicAccess& access, const parser::Print& print,
                                const std::string& text) {
  const std::string topic = print_topic_name(print, text);
  std::vector<std::string> near;
  bool exists = false;
  for (const auto& t : access.list_topics(false)) {
    exists = exists || t.name == topic;
    if (lower(t.name) == lower(topic)) near.push_back(t.name);
  }
  if (!exists) {
    std::string suggestions;
    std::sort(near.begin(), near.end());
    for (const auto& name : near) suggestions += "\n\tprint " + name + ";";
    throw SqlError("Could not find topic '" + topic +
                   "', or the KSQL user does not have permissions to list the topic. Topic names "
                   "are case-sensitive." +
                   (near.empty() ? "" : "\nDid you mean:" + suggestions));
  }
  int64_t interval = print.interval.value_or(1);
  if (interval < 1)
    throw SqlError("INTERVAL must be greater than one, but was: " + std::to_string(interval));
  return topic;
}

void print_records(TopicAccess& access, const std::string& topic, const parser::Print& print,
                   const PrintOutput& output) {
  PrintSession session(print.interval.value_or(1), print.limit, output.registry);
  if (session.done()) return;  // LIMIT 0
  access.read(topic, print.from_beginning, [&](const ReadBatch& batch) {
    for (const auto& line : session.lines(batch.records)) output.line(line);
    if (session.done() || (output.stop && output.stop())) return false;
    return print.limit || !batch.caught_up || !output.end_when_caught_up;
  });
}

StatementResult Engine::print_topic(const parser::Print& print, const std::string& text) {
  TopicAccess& access = cluster(text);
  const std::string topic = checked_print_topic(access, print, text);
  StatementResult r;
  PrintOutput output = print_output_;
  if (!output.line) output.line = [&r](const std::string& line) { r.printed.push_back(line); };
  print_records(access, topic, print, output);
  return r;
}

}  // namespace oxbow::sql
