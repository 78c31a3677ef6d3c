#pragma once
// What ksqlDB's CLI prints of a statement's result beyond its status message: SHOW TOPICS' table,
// and SHOW STREAMS|TABLES|QUERIES [EXTENDED], DESCRIBE [EXTENDED] and EXPLAIN's entity after a
// blank line, each description of a list followed by one. Empty for the other statements.
// `oxbow sql run` prints it; the public API (include/oxbow/sql/) hands it out.
#include <string>

#include "sql/engine/engine.h"

namespace oxbow::sql {

std::string result_text(const StatementResult& result);

}  // namespace oxbow::sql
