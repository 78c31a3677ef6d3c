// Expressions, loosest-binding first: OR, AND, NOT, predicates (comparisons, BETWEEN, IN, LIKE,
// IS [NOT] NULL, IS [NOT] DISTINCT FROM), ||, + -, * / %, unary + -, then subscripts, `->` and
// AT TIME ZONE on a primary. Operators of one level associate to the left. And types.
#include <array>

#include "sql/parser/parser.h"
#include "sql/parser/parser_internal.h"

namespace oxbow::sql::parser {

namespace {

ExprPtr binary(ExprKind kind, std::string op, ExprPtr left, ExprPtr right) {
  auto e = make_expr(kind, left->position);
  e->text = std::move(op);
  e->args.push_back(std::move(left));
  e->args.push_back(std::move(right));
  return e;
}

}  // namespace

ExprPtr Parser::expression() {
  Nesting nesting(*this);
  return or_expression();
}

// One level of left-associative operators: operand (op operand)*.
ExprPtr Parser::chain(ExprPtr (Parser::*operand)(), ExprKind kind,
                      std::initializer_list<const char*> operators) {
  ExprPtr left = (this->*operand)();
  int added = 0;
  for (;;) {
    const char* op = nullptr;
    for (const char* candidate : operators)
      if (at_word(candidate) || at_symbol(candidate)) op = candidate;
    if (!op) break;
    next();
    deepen(added);
    left = binary(kind, op, std::move(left), (this->*operand)());
  }
  depth_ -= added;
  return left;
}

ExprPtr Parser::or_expression() {
  return chain(&Parser::and_expression, ExprKind::kOr, {"OR"});
}

ExprPtr Parser::and_expression() {
  return chain(&Parser::not_expression, ExprKind::kAnd, {"AND"});
}

ExprPtr Parser::not_expression() {
  if (!at_word("NOT")) return predicate();
  Nesting nesting(*this);
  auto e = make_expr(ExprKind::kNot, next().position);
  e->args.push_back(not_expression());
  return e;
}

ExprPtr Parser::predicate() {
  ExprPtr left = concatenation();
  static const std::array<const char*, 7> kComparisons = {"=", "<>", "!=", "<", "<=", ">", ">="};
  for (const char* op : kComparisons)
    if (at_symbol(op)) {
      next();
      std::string text = op;
      if (text == "!=") text = "<>";
      return binary(ExprKind::kComparison, text, std::move(left), concatenation());
    }
  if (at_word("IS")) {
    next();
    bool negated = accept_word("NOT");
    if (accept_word("NULL")) {
      auto e = make_expr(ExprKind::kIsNull, left->position);
      e->negated = negated;
      e->args.push_back(std::move(left));
      return e;
    }
    expect_word("DISTINCT");
    expect_word("FROM");
    return binary(ExprKind::kComparison, negated ? "IS NOT DISTINCT FROM" : "IS DISTINCT FROM",
                  std::move(left), concatenation());
  }
  bool negated = false;
  if (at_word("NOT") && (at_word("BETWEEN", 1) || at_word("IN", 1) || at_word("LIKE", 1))) {
    next();
    negated = true;
  }
  if (accept_word("BETWEEN")) {
    auto e = make_expr(ExprKind::kBetween, left->position);
    e->negated = negated;
    e->args.push_back(std::move(left));
    e->args.push_back(concatenation());
    expect_word("AND");
    e->args.push_back(concatenation());
    return e;
  }
  if (accept_word("IN")) {
    auto e = make_expr(ExprKind::kIn, left->position);
    e->negated = negated;
    e->args.push_back(std::move(left));
    for (auto& item : parenthesized_list()) e->args.push_back(std::move(item));
    return e;
  }
  if (accept_word("LIKE")) {
    auto e = make_expr(ExprKind::kLike, left->position);
    e->negated = negated;
    e->args.push_back(std::move(left));
    e->args.push_back(concatenation());
    if (accept_word("ESCAPE")) e->args.push_back(concatenation());
    return e;
  }
  return left;
}

ExprPtr Parser::concatenation() {
  return chain(&Parser::additive, ExprKind::kConcat, {"||"});
}

ExprPtr Parser::additive() {
  return chain(&Parser::multiplicative, ExprKind::kArithmetic, {"+", "-"});
}

ExprPtr Parser::multiplicative() {
  return chain(&Parser::unary, ExprKind::kArithmetic, {"*", "/", "%"});
}

ExprPtr Parser::unary() {
  if (!at_symbol("-") && !at_symbol("+")) return postfix();
  Nesting nesting(*this);
  const Token& sign = next();
  auto e = make_expr(ExprKind::kNegate, sign.position);
  e->text = sign.text;
  e->args.push_back(unary());
  return e;
}

ExprPtr Parser::postfix() {
  ExprPtr e = primary();
  int added = 0;
  for (;;) {
    if (at_symbol("[") || at_symbol("->") || (at_word("AT") && at_word("TIME", 1))) deepen(added);
    if (at_symbol("[")) {
      Position position = next().position;
      ++open_brackets_;
      auto subscript = make_expr(ExprKind::kSubscript, position);
      subscript->args.push_back(std::move(e));
      subscript->args.push_back(expression());
      expect_symbol("]");
      --open_brackets_;
      e = std::move(subscript);
    } else if (at_symbol("->")) {
      Position position = next().position;
      auto field = make_expr(ExprKind::kDereference, position);
      field->name = name().text;
      field->args.push_back(std::move(e));
      e = std::move(field);
    } else if (at_word("AT") && at_word("TIME", 1)) {
      Position position = next().position;
      next();
      expect_word("ZONE");
      auto zone = make_expr(ExprKind::kAtTimeZone, position);
      zone->args.push_back(std::move(e));
      zone->args.push_back(primary());
      e = std::move(zone);
    } else {
      depth_ -= added;
      return e;
    }
  }
}

ExprPtr Parser::primary() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::kInteger:
    case TokenKind::kDecimal:
    case TokenKind::kFloat:
    case TokenKind::kString: {
      auto e = make_expr(t.kind == TokenKind::kInteger   ? ExprKind::kInteger
                         : t.kind == TokenKind::kDecimal ? ExprKind::kDecimal
                         : t.kind == TokenKind::kFloat   ? ExprKind::kDouble
                                                         : ExprKind::kString,
                         t.position);
      e->text = next().text;
      return e;
    }
    case TokenKind::kVariable: {
      auto e = make_expr(ExprKind::kVariable, t.position);
      e->name = next().text;
      return e;
    }
    case TokenKind::kQuotedName:
    case TokenKind::kWord:
      return word_expression();
    case TokenKind::kSymbol:
      if (t.is_symbol("(")) {
        next();
        ++open_brackets_;
        ExprPtr inner = expression();
        expect_symbol(")");
        --open_brackets_;
        return inner;
      }
      break;
    case TokenKind::kEnd:
      break;
  }
  fail_near(t);
}

// What a word starts: a literal keyword, CAST, CASE, a constructor, a typed literal, a function
// call or a (qualified) column.
ExprPtr Parser::word_expression() {
  const Token& t = peek();
  Position position = t.position;
  if (t.kind == TokenKind::kWord) {
    if (t.upper == "NULL" || t.upper == "TRUE" || t.upper == "FALSE") {
      auto e = make_expr(t.upper == "NULL" ? ExprKind::kNull : ExprKind::kBoolean, position);
      e->text = t.upper == "TRUE" ? "true" : t.upper == "FALSE" ? "false" : "";
      next();
      return e;
    }
    if (t.upper == "CAST" && peek(1).is_symbol("(")) {
      next();
      next();
      ++open_brackets_;
      auto e = make_expr(ExprKind::kCast, position);
      e->args.push_back(expression());
      expect_word("AS");
      e->type = type();
      expect_symbol(")");
      --open_brackets_;
      return e;
    }
    if (t.upper == "CASE") return case_expression(next().position);
    if (t.upper == "ARRAY" && peek(1).is_symbol("[")) {
      next();
      next();
      ++open_brackets_;
      auto e = make_expr(ExprKind::kArray, position);
      if (!at_symbol("]")) {
        do e->args.push_back(expression());
        while (accept_symbol(","));
      }
      expect_symbol("]");
      --open_brackets_;
      return e;
    }
    if ((t.upper == "MAP" || t.upper == "STRUCT") && peek(1).is_symbol("(")) {
      bool is_map = t.upper == "MAP";
      next();
      next();
      ++open_brackets_;
      auto e = make_expr(is_map ? ExprKind::kMap : ExprKind::kStruct, position);
      if (!at_symbol(")")) {
        do {
          if (is_map)
            e->args.push_back(expression());
          else
            e->field_names.push_back(name().text);
          expect_symbol(":=");
          e->args.push_back(expression());
        } while (accept_symbol(","));
      }
      expect_symbol(")");
      --open_brackets_;
      return e;
    }
    if (!is_reserved(t.upper) && peek(1).kind == TokenKind::kString) {
      auto e = make_expr(ExprKind::kTypedLiteral, position);
      e->name = next().upper;
      e->text = next().text;
      return e;
    }
  }
  Name first = name();
  if (at_symbol("(")) return function_call(std::move(first));
  auto column = make_expr(ExprKind::kColumn, position);
  if (accept_symbol(".")) {
    column->qualifier = first.text;
    column->name = name().text;
  } else {
    column->name = first.text;
  }
  return column;
}

ExprPtr Parser::function_call(Name name) {
  auto e = make_expr(ExprKind::kFunction, name.position);
  e->name = name.quoted ? name.text : name.text;  // unquoted names are upper-cased already
  expect_symbol("(");
  ++open_brackets_;
  if (at_symbol("*") && peek(1).is_symbol(")")) {
    e->args.push_back(make_expr(ExprKind::kStar, next().position));
  } else if (!at_symbol(")")) {
    do e->args.push_back(lambda_or_expression());
    while (accept_symbol(","));
  }
  expect_symbol(")");
  --open_brackets_;
  return e;
}

// A function's argument: `x => body`, `(x, y) => body`, a time unit standing alone (DAYS in
// DATEADD(DAYS, 1, d), where DAYS is a reserved word that no expression could read), or an
// expression.
ExprPtr Parser::lambda_or_expression() {
  size_t start = at_;
  if (peek().kind == TokenKind::kWord && time_unit_ms(peek().upper) &&
      (peek(1).is_symbol(",") || peek(1).is_symbol(")"))) {
    auto unit = make_expr(ExprKind::kTimeUnit, peek().position);
    unit->text = next().upper;
    return unit;
  }
  std::vector<std::string> parameters;
  Position position = peek().position;
  if (at_name() && peek(1).is_symbol("=>")) {
    parameters.push_back(name().text);
  } else if (at_symbol("(")) {
    next();
    while (at_name()) {
      parameters.push_back(name().text);
      if (!accept_symbol(",")) break;
    }
    if (!accept_symbol(")") || !at_symbol("=>")) {
      at_ = start;  // a parenthesized expression after all
      parameters.clear();
    }
  }
  if (parameters.empty()) return expression();
  expect_symbol("=>");
  auto lambda = make_expr(ExprKind::kLambda, position);
  lambda->field_names = std::move(parameters);
  lambda->args.push_back(expression());
  return lambda;
}

ExprPtr Parser::case_expression(Position position) {
  auto e = make_expr(ExprKind::kCase, position);
  if (!at_word("WHEN")) {
    e->has_operand = true;
    e->args.push_back(expression());
  }
  if (!at_word("WHEN")) fail_expecting("WHEN");
  while (accept_word("WHEN")) {
    e->args.push_back(expression());
    expect_word("THEN");
    e->args.push_back(expression());
  }
  if (accept_word("ELSE")) {
    e->has_else = true;
    e->args.push_back(expression());
  }
  expect_word("END");
  return e;
}

std::vector<ExprPtr> Parser::parenthesized_list() {
  std::vector<ExprPtr> out;
  expect_symbol("(");
  ++open_brackets_;
  if (!at_symbol(")")) {
    do out.push_back(expression());
    while (accept_symbol(","));
  }
  expect_symbol(")");
  --open_brackets_;
  return out;
}

// ---- types

TypeSpec Parser::type() {
  Nesting nesting(*this);
  TypeSpec t;
  if (at_word("DECIMAL")) {  // reserved, so not a name
    next();
    t.base = "DECIMAL";
    expect_symbol("(");
    ++open_brackets_;
    t.parameters.push_back(static_cast<int>(integer()));
    expect_symbol(",");
    t.parameters.push_back(static_cast<int>(integer()));
    expect_symbol(")");
    --open_brackets_;
    return t;
  }
  Name word = name();
  t.base = word.text;
  if (word.quoted) {
    t.custom = true;
    return t;
  }
  if (t.base == "INT") t.base = "INTEGER";
  if (t.base == "VARCHAR") t.base = "STRING";
  static const std::array<const char*, 9> kBuiltIn = {
      "BOOLEAN", "INTEGER", "BIGINT", "DOUBLE", "STRING", "BYTES", "DATE", "TIME", "TIMESTAMP"};
  bool built_in = false;
  for (const char* b : kBuiltIn) built_in = built_in || t.base == b;
  if (t.base == "ARRAY" || t.base == "MAP") {
    expect_symbol("<");
    t.elements.push_back(type());
    if (t.base == "MAP") {
      expect_symbol(",");
      t.elements.push_back(type());
    }
    expect_symbol(">");
    return t;
  }
  if (t.base == "STRUCT") {
    if (accept_symbol("<>")) return t;
    expect_symbol("<");
    if (!at_symbol(">")) {
      do {
        t.field_names.push_back(name().text);
        t.elements.push_back(type());
      } while (accept_symbol(","));
    }
    expect_symbol(">");
    return t;
  }
  t.custom = !built_in;
  return t;
}

}  // namespace oxbow::sql::parser
