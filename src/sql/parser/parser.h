#pragma once
// The KSQL parser: a hand-written recursive-descent parser of ksqlDB's dialect (our own grammar;
// ksqlDB's grammar file is under the Confluent Community License and was not used), with ksqlDB's
// positions and messages in its errors (parse_error.h). The statements it knows are those of
// docs/sql/ksqldb-facts.md §1.1; what they mean is the binder's business.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sql/parser/ast.h"
#include "sql/parser/parse_error.h"

namespace oxbow::sql::parser {

// Every statement of `text`, each ended by `;` (a missing last one is an error, as in ksqlDB).
// Throws ParseError.
std::vector<Statement> parse(std::string_view text);

// One expression, alone (tests, the CLI, defaults). Throws ParseError.
ExprPtr parse_expression(std::string_view text);

// The milliseconds in one of ksqlDB's time units, upper-cased (MILLISECOND(S), SECOND(S),
// MINUTE(S), HOUR(S), DAY(S)); nullopt for any other word.
std::optional<int64_t> time_unit_ms(std::string_view unit);

// Whether `upper` (upper-cased) is one of ksqlDB's reserved words, which an unquoted name may
// not be.
bool is_reserved(std::string_view upper);

}  // namespace oxbow::sql::parser
