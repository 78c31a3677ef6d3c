#include "sql/parser/lexer.h"

#include <array>
#include <cctype>

#include "sql/parser/parse_error.h"

namespace oxbow::sql::parser {

namespace {

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '@';
}
bool digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

std::string upper_of(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Longest first, so that "<=" is not read as "<" then "=".
constexpr std::array<std::string_view, 8> kTwoCharSymbols = {
    "<>", "!=", "<=", ">=", "||", "->", "=>", ":="};
constexpr std::string_view kOneCharSymbols = "=<>+-*/%()[],.;:";

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space_and_comments();
      Token token;
      token.position = here();
      token.offset = pos_;
      if (at_end()) {
        out.push_back(std::move(token));
        return out;
      }
      read_token(token);
      out.push_back(std::move(token));
    }
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  Position here() const { return {line_, column_}; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  void skip_space_and_comments() {
    while (!at_end()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        advance();
      } else if (peek() == '-' && peek(1) == '-') {
        while (!at_end() && peek() != '\n') advance();
      } else if (peek() == '/' && peek(1) == '*') {
        Position start = here();
        advance();
        advance();
        while (!at_end() && !(peek() == '*' && peek(1) == '/')) advance();
        if (at_end()) throw ParseError(start, "Unterminated comment: '/*' has no '*/'");
        advance();
        advance();
      } else {
        return;
      }
    }
  }

  void read_token(Token& token) {
    char c = peek();
    if (c == '\'') return read_quoted(token, '\'', TokenKind::kString, "string");
    if (c == '`') return read_quoted(token, '`', TokenKind::kQuotedName, "quoted identifier");
    if (c == '"') return read_quoted(token, '"', TokenKind::kQuotedName, "quoted identifier");
    if (c == '$' && peek(1) == '{') return read_variable(token);
    if (digit(c) || (c == '.' && digit(peek(1)))) return read_number_or_word(token);
    if (word_char(c)) return read_word(token, pos_);
    for (auto symbol : kTwoCharSymbols)
      if (text_.substr(pos_, 2) == symbol) return take_symbol(token, 2);
    if (kOneCharSymbols.find(c) != std::string_view::npos) return take_symbol(token, 1);
    throw ParseError(here(), std::string("Syntax error at or near '") + c + "' at line " +
                                 std::to_string(line_) + ":" + std::to_string(column_));
  }

  void take_symbol(Token& token, size_t length) {
    token.kind = TokenKind::kSymbol;
    token.text = std::string(text_.substr(pos_, length));
    for (size_t i = 0; i < length; ++i) advance();
  }

  // The quote doubled inside stands for itself ('it''s', `a``b`).
  void read_quoted(Token& token, char quote, TokenKind kind, const char* what) {
    Position start = here();
    advance();
    token.kind = kind;
    for (;;) {
      if (at_end()) throw ParseError(start, std::string("Unterminated ") + what);
      if (peek() == quote) {
        if (peek(1) != quote) break;
        advance();
      }
      token.text.push_back(peek());
      advance();
    }
    advance();
  }

  void read_variable(Token& token) {
    Position start = here();
    advance();
    advance();
    while (!at_end() && peek() != '}') {
      token.text.push_back(peek());
      advance();
    }
    if (at_end()) throw ParseError(start, "Unterminated variable reference: '${' has no '}'");
    advance();
    token.kind = TokenKind::kVariable;
  }

  void read_word(Token& token, size_t start) {
    while (!at_end() && word_char(peek())) advance();
    token.kind = TokenKind::kWord;
    token.text = std::string(text_.substr(start, pos_ - start));
    token.upper = upper_of(token.text);
  }

  // 12, 1.5, .5, 1e3, 1.5E-2; a word when letters follow digits (`1st`, ksqlDB's DIGIT_IDENTIFIER).
  void read_number_or_word(Token& token) {
    size_t start = pos_;
    while (digit(peek())) advance();
    bool decimal = false;
    if (peek() == '.' && digit(peek(1))) {
      decimal = true;
      advance();
      while (digit(peek())) advance();
    } else if (peek() == '.' && !word_char(peek(1)) && pos_ > start) {
      decimal = true;  // "1." is a decimal
      advance();
    }
    bool exponent = false;
    if ((peek() == 'e' || peek() == 'E') &&
        (digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && digit(peek(2))))) {
      exponent = true;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      while (digit(peek())) advance();
    }
    if (!decimal && !exponent && word_char(peek())) return read_word(token, start);
    token.kind = exponent ? TokenKind::kFloat : decimal ? TokenKind::kDecimal : TokenKind::kInteger;
    token.text = std::string(text_.substr(start, pos_ - start));
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view text) {
  return Lexer(text).run();
}

}  // namespace oxbow::sql::parser
