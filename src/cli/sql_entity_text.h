#pragma once
// What `oxbow sql` prints of the server's /ksql answers: the JSON entities (src/sql/server/
// entities.h writes them) read back into the engine's descriptions, so that ksqlDB's CLI text
// comes from the same functions `oxbow sql run` prints with (sql/engine/description_output.h).
#include <string>

#include <nlohmann/json.hpp>

namespace oxbow::cli {

// The text ksqlDB's CLI prints for one entity of a /ksql response: currentStatus' message table,
// the tables of SHOW STREAMS|TABLES|QUERIES|TOPICS|PROPERTIES|FUNCTIONS, DESCRIBE and EXPLAIN's
// blocks; an entity of another type as its JSON. Then its warnings.
std::string entity_text(const nlohmann::json& entity);

// The message of an error body (statement_error, generic_error), or the body itself when it is
// not one.
std::string error_text(const std::string& body);

}  // namespace oxbow::cli
