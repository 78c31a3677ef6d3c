// SELECT and its clauses, in ksqlDB's order (docs/sql/ksqldb-facts.md §1.2):
// SELECT items FROM relation [joins] [WINDOW w] [WHERE e] [GROUP BY g] [PARTITION BY p]
// [HAVING e] [EMIT CHANGES|FINAL] [LIMIT n]
#include "sql/parser/parser_internal.h"

namespace oxbow::sql::parser {

std::unique_ptr<Query> Parser::query() {
  auto q = std::make_unique<Query>();
  q->position = peek().position;
  expect_word("SELECT");
  do q->select.push_back(select_item());
  while (accept_symbol(","));
  expect_word("FROM");
  q->from = relation();
  for (;;) {
    Position position = peek().position;
    JoinType type;
    if (accept_word("JOIN")) {
      type = JoinType::kInner;
    } else if (accept_word("INNER")) {
      type = JoinType::kInner;
      expect_word("JOIN");
    } else if (at_word("LEFT") || at_word("RIGHT") || at_word("FULL")) {
      const Token& t = next();
      type = t.upper == "LEFT"    ? JoinType::kLeft
             : t.upper == "RIGHT" ? JoinType::kRight
                                  : JoinType::kFull;
      accept_word("OUTER");
      expect_word("JOIN");
    } else {
      break;
    }
    q->joins.push_back(join(type, position));
  }
  if (at_word("WINDOW")) q->window = window();
  if (accept_word("WHERE")) q->where = expression();
  if (accept_word("GROUP")) {
    expect_word("BY");
    q->group_by = expression_list_maybe_parenthesized("GROUP BY");
  }
  if (accept_word("PARTITION")) {
    expect_word("BY");
    q->partition_by = expression_list_maybe_parenthesized("PARTITION BY");
  }
  if (accept_word("HAVING")) q->having = expression();
  if (accept_word("EMIT")) {
    if (accept_word("CHANGES"))
      q->emit = EmitType::kChanges;
    else if (accept_word("FINAL"))
      q->emit = EmitType::kFinal;
    else
      fail_expecting("CHANGES or FINAL");
  }
  if (accept_word("LIMIT")) q->limit = integer();
  return q;
}

SelectItem Parser::select_item() {
  SelectItem item;
  if (at_symbol("*")) {
    item.expr = make_expr(ExprKind::kStar, next().position);
    return item;
  }
  // src.* : a name, a dot and a star.
  if (at_name() && peek(1).is_symbol(".") && peek(2).is_symbol("*")) {
    Name source = name();
    next();
    next();
    item.expr = make_expr(ExprKind::kStar, source.position);
    item.expr->qualifier = source.text;
    return item;
  }
  item.expr = expression();
  if (accept_word("AS") || at_name()) item.alias = name();
  return item;
}

Relation Parser::relation() {
  Relation r;
  r.source = name();
  if (accept_word("AS") ||
      (at_name() && !at_word("WINDOW") && !at_word("EMIT") && !at_word("PARTITION")))
    r.alias = name();
  return r;
}

JoinClause Parser::join(JoinType type, Position position) {
  JoinClause j;
  j.type = type;
  j.position = position;
  j.right = relation();
  if (at_word("WITHIN")) j.within = within();
  expect_word("ON");
  j.on = expression();
  return j;
}

// WITHIN n unit | WITHIN (before unit, after unit), then [GRACE PERIOD n unit].
WithinClause Parser::within() {
  expect_word("WITHIN");
  WithinClause w;
  if (accept_symbol("(")) {
    ++open_brackets_;
    w.before_ms = duration_ms();
    expect_symbol(",");
    w.after_ms = duration_ms();
    expect_symbol(")");
    --open_brackets_;
  } else {
    w.before_ms = w.after_ms = duration_ms();
  }
  if (accept_word("GRACE")) {
    expect_word("PERIOD");
    w.grace_ms = duration_ms();
  }
  return w;
}

// WINDOW TUMBLING (SIZE d [, RETENTION d] [, GRACE PERIOD d])
//      | HOPPING (SIZE d, ADVANCE BY d [, RETENTION d] [, GRACE PERIOD d])
//      | SESSION (d [, RETENTION d] [, GRACE PERIOD d])
WindowClause Parser::window() {
  WindowClause w;
  w.position = next().position;  // WINDOW
  if (accept_word("TUMBLING"))
    w.type = WindowType::kTumbling;
  else if (accept_word("HOPPING"))
    w.type = WindowType::kHopping;
  else if (accept_word("SESSION"))
    w.type = WindowType::kSession;
  else
    fail_expecting("TUMBLING, HOPPING or SESSION");
  expect_symbol("(");
  ++open_brackets_;
  if (w.type != WindowType::kSession) expect_word("SIZE");
  w.size_ms = duration_ms();
  if (w.type == WindowType::kHopping) {
    expect_symbol(",");
    expect_word("ADVANCE");
    expect_word("BY");
    w.advance_ms = duration_ms();
  }
  while (accept_symbol(",")) {
    if (accept_word("RETENTION")) {
      w.retention_ms = duration_ms();
    } else if (accept_word("GRACE")) {
      expect_word("PERIOD");
      w.grace_ms = duration_ms();
    } else {
      fail_expecting("RETENTION or GRACE PERIOD");
    }
  }
  expect_symbol(")");
  --open_brackets_;
  return w;
}

// GROUP BY and PARTITION BY take a list, bare or in parentheses; `()` parses and is refused
// with ksqlDB's message.
std::vector<ExprPtr> Parser::expression_list_maybe_parenthesized(const char* clause) {
  std::vector<ExprPtr> out;
  Position position = peek().position;
  if (at_symbol("(") && peek(1).is_symbol(")")) {
    next();
    next();
    throw ParseError(position, std::string(clause) + " requires at least one expression");
  }
  if (at_symbol("(")) {
    // `(a, b)` is the list in parentheses; `(a + 1) * 2` is an expression that starts with one.
    size_t start = at_;
    int brackets = open_brackets_, depth = depth_;
    try {
      next();
      ++open_brackets_;
      do out.push_back(expression());
      while (accept_symbol(","));
      expect_symbol(")");
      --open_brackets_;
      const Token& after = peek();
      if (out.size() > 1 || after.kind == TokenKind::kEnd || after.is_symbol(";") ||
          after.is_word("PARTITION") || after.is_word("HAVING") || after.is_word("EMIT") ||
          after.is_word("LIMIT"))
        return out;
    } catch (const ParseError&) {
    }
    out.clear();
    at_ = start;
    open_brackets_ = brackets;
    depth_ = depth;
  }
  do out.push_back(expression());
  while (accept_symbol(","));
  return out;
}

}  // namespace oxbow::sql::parser
