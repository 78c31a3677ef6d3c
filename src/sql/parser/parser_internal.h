#pragma once
// The parser's cursor over the tokens and its rules, shared by the statement rules (parser.cpp,
// parser_query.cpp) and the expression rules (parser_expressions.cpp).
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "sql/parser/ast.h"
#include "sql/parser/parse_error.h"
#include "sql/parser/token.h"

namespace oxbow::sql::parser {

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens)
      : text_(text), tokens_(std::move(tokens)) {}

  std::vector<Statement> statements();
  ExprPtr lone_expression();

  // Statements (parser.cpp).
  Statement statement();
  // Queries and their clauses (parser_query.cpp).
  std::unique_ptr<Query> query();
  // Expressions and types (parser_expressions.cpp).
  ExprPtr expression();
  TypeSpec type();

 private:
  // The cursor.
  const Token& peek(size_t ahead = 0) const;
  const Token& next();
  bool at_word(const char* keyword, size_t ahead = 0) const { return peek(ahead).is_word(keyword); }
  bool at_symbol(const char* symbol) const { return peek().is_symbol(symbol); }
  bool accept_word(const char* keyword);
  bool accept_symbol(const char* symbol);
  void expect_word(const char* keyword);
  void expect_symbol(const char* symbol);
  [[noreturn]] void fail_expecting(const std::string& expected) const;
  [[noreturn]] void fail_near(const Token& token) const;

  // Names and literals.
  Name name();  // an identifier: a quoted name or an unreserved word
  bool at_name() const;
  int64_t integer();
  int64_t duration_ms();  // n unit
  std::string string_literal();

  // Statement parts (parser.cpp).
  Statement create();
  CreateSource create_source(bool or_replace, bool source);
  Statement insert();
  Statement drop();
  Statement show();
  Statement describe();
  Statement print();
  Statement explain();
  std::vector<ColumnDef> column_definitions();
  ColumnDef column_definition();
  std::vector<Property> with_properties();
  [[noreturn]] void unknown_statement() const;

  // Query parts (parser_query.cpp).
  SelectItem select_item();
  Relation relation();
  JoinClause join(JoinType type, Position position);
  WithinClause within();
  WindowClause window();
  std::vector<ExprPtr> expression_list_maybe_parenthesized(const char* clause);

  // Expression levels (parser_expressions.cpp), loosest first.
  ExprPtr chain(ExprPtr (Parser::*operand)(), ExprKind kind,
                std::initializer_list<const char*> operators);
  ExprPtr or_expression();
  ExprPtr and_expression();
  ExprPtr not_expression();
  ExprPtr predicate();
  ExprPtr concatenation();
  ExprPtr additive();
  ExprPtr multiplicative();
  ExprPtr unary();
  ExprPtr postfix();
  ExprPtr primary();
  ExprPtr word_expression();
  ExprPtr function_call(Name name);
  ExprPtr case_expression(Position position);
  ExprPtr lambda_or_expression();
  std::vector<ExprPtr> parenthesized_list();

  // Deeply nested input (a fuzzer's "((((...") is refused before the recursion exhausts the stack.
  static constexpr int kMaxDepth = 256;
  struct Nesting {
    explicit Nesting(Parser& parser);
    ~Nesting() { --parser_.depth_; }
    Parser& parser_;
  };
  // A left-associative chain (a + b + c ...) deepens the tree by one a link: counted in `added`,
  // given back by the caller.
  void deepen(int& added);

  std::string_view text_;
  std::vector<Token> tokens_;
  int depth_ = 0;
  size_t at_ = 0;
  int open_brackets_ = 0;  // so that a missing ')' at the end says so
};

ExprPtr make_expr(ExprKind kind, Position position);

}  // namespace oxbow::sql::parser
