#pragma once
// Splits a KSQL text into tokens (token.h). Comments (`-- ...` to the end of the line, `/* ... */`)
// and white space separate tokens and are dropped. Unquoted words are upper-cased, as ksqlDB's
// lexer does; a word may start with a digit when a letter, `_` or `@` follows (`1st`), which is
// how ksqlDB tells it from a number.
#include <string_view>
#include <vector>

#include "sql/parser/token.h"

namespace oxbow::sql::parser {

// The tokens of `text`, ending with one kEnd. Throws ParseError on an unterminated string,
// quoted name or comment, and on a character no token starts with.
std::vector<Token> tokenize(std::string_view text);

}  // namespace oxbow::sql::parser
