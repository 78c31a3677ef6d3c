#pragma once
// The engine's statement results as ksqlDB's /ksql entities (its rest-model KsqlEntity
// subclasses, by their JSON "@type"): currentStatus, streams, tables, queries, properties,
// sourceDescription, source_descriptions, queryDescription, query_descriptions, kafka_topics,
// function_names, describe_function. Pure functions, tested without a cluster.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sql/engine/engine.h"

namespace oxbow::sql::server {

// What the parser tells of one statement that the result does not.
struct StatementInfo {
  std::string command_id;  // ksqlDB's CommandId text, "stream/PAGEVIEWS/create"; "" for none
  std::string listed;      // SHOW|LIST <what> ("STREAMS", "PROPERTIES", ...); "" otherwise
  bool describes_function = false;  // DESCRIBE FUNCTION
  // DROP ... DELETE TOPIC: the source whose topic goes with it.
  std::string topic_deleted_with;
  // A SELECT or PRINT: ksqlDB serves them on /query and /query-stream, never on /ksql.
  bool streamed = false;
  // Whether the text parsed as one statement (one with variables may not before they are
  // substituted).
  bool parsed = false;
};

// From the statement's text; an empty info when it does not parse alone (the engine then says
// why, or it holds variables the engine substitutes).
StatementInfo statement_info(std::string_view text);

// Server settings SHOW PROPERTIES lists beside the session's SET ones: (name, value).
using PropertyList = std::vector<std::pair<std::string, std::string>>;

// The entity of one executed statement, or null when ksqlDB would return none. A currentStatus
// carries `sequence_number` as its commandSequenceNumber.
nlohmann::json entity_json(const StatementResult& result, const StatementInfo& info,
                           int64_t sequence_number, const PropertyList& server_properties);

// The object `object[field]` as names and texts (a string as itself, any other value as its JSON
// text: ksqlDB's properties may be sent as numbers or booleans); empty when it is not an object.
std::map<std::string, std::string> text_fields(const nlohmann::json& object, const char* field);

// A /query-stream or /query request's statement with the request's "sessionVariables"
// substituted, as ksqlDB substitutes them (its QueryStreamArgs and KsqlRequest carry them); the
// statement as sent when the request has none.
std::string with_session_variables(const nlohmann::json& request, std::string statement);

// `value` as JSON text; bytes that are not UTF-8 (a statement's text cut inside a character)
// become U+FFFD instead of failing the response.
std::string json_text(const nlohmann::json& value);

// ksqlDB's "fields" element and the "schema" inside it.
nlohmann::json field_json(const FieldInfo& field);
nlohmann::json schema_json(const SqlType& type);
nlohmann::json source_description_json(const SourceDescription& source);
nlohmann::json query_description_json(const QueryDescription& query);
nlohmann::json running_query_json(const RunningQuery& query);

}  // namespace oxbow::sql::server
