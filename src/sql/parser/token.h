#pragma once
// The tokens of the KSQL dialect (docs/sql/ksqldb-facts.md §1.3-1.4), as the lexer hands them to
// the parser. Keywords are not tokens of their own: a word is a kWord whose `upper` text the parser
// compares, so that non-reserved keywords stay usable as names and the reserved ones are refused
// only where a name is expected.
#include <cstddef>
#include <cstdint>
#include <string>

namespace oxbow::sql::parser {

// 1-based, as ksqlDB reports them ("line 1:35: ...").
struct Position {
  int line = 1;
  int column = 1;
};

enum class TokenKind {
  kWord,        // an unquoted word: `upper` is its upper-cased text
  kQuotedName,  // `name` or "name": `text` is the name, case kept
  kString,      // 'text' ('' inside is one quote): `text` is the value
  kInteger,     // digits
  kDecimal,     // digits '.' digits (ksqlDB: a DECIMAL literal)
  kFloat,       // a number with an exponent (a DOUBLE literal)
  kVariable,    // ${name}: `text` is the name
  kSymbol,      // an operator or punctuation: `text` is it ("<=", "->", ":=", ...)
  kEnd,         // the end of the input
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;   // as written (quotes removed for names and strings)
  std::string upper;  // kWord: text upper-cased
  Position position;
  size_t offset = 0;  // of its first character in the text

  bool is_word(const char* keyword) const { return kind == TokenKind::kWord && upper == keyword; }
  bool is_symbol(const char* symbol) const { return kind == TokenKind::kSymbol && text == symbol; }
};

}  // namespace oxbow::sql::parser
