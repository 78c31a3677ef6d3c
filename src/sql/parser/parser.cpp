#include "sql/parser/parser.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include "sql/parser/lexer.h"
#include "sql/parser/parser_internal.h"

namespace oxbow::sql::parser {

namespace {

// docs/sql/ksqldb-facts.md §1.4: ksqlDB's keywords less those its grammar lets stand as names.
const std::set<std::string, std::less<>>& reserved_words() {
  static const std::set<std::string, std::less<>> words = {
      "ADVANCE",    "ALL",          "AND",         "AS",           "AT",      "BEGINNING",
      "BETWEEN",    "BY",           "CASE",        "CAST",         "CATALOG", "CONNECTOR",
      "CONNECTORS", "CREATE",       "DAYS",        "DECIMAL",      "DELETE",  "DESCRIBE",
      "DISTINCT",   "DROP",         "ELSE",        "END",          "EXISTS",  "EXPORT",
      "EXTENDED",   "FALSE",        "FROM",        "FULL",         "GROUP",   "HAVING",
      "HOPPING",    "HOURS",        "IN",          "INNER",        "INSERT",  "INTO",
      "IS",         "JOIN",         "LEFT",        "LIKE",         "LIMIT",   "LIST",
      "LOAD",       "MATERIALIZED", "MILLISECOND", "MILLISECONDS", "MINUTES", "MONTHS",
      "NAMESPACE",  "NOT",          "NULL",        "ON",           "OR",      "OUTER",
      "PAUSE",      "PRINT",        "PROPERTIES",  "QUERIES",      "QUERY",   "RENAME",
      "RESUME",     "RETENTION",    "RIGHT",       "RUN",          "SAMPLE",  "SCRIPT",
      "SECONDS",    "SELECT",       "SIZE",        "STREAM",       "STREAMS", "TABLE",
      "TERMINATE",  "THEN",         "TO",          "TOPIC",        "TOPICS",  "TRUE",
      "TUMBLING",   "UNSET",        "VALUES",      "VIEW",         "WHEN",    "WHERE",
      "WINDOW",     "WITH",         "WITHIN",      "YEARS"};
  return words;
}

// The statements' first words, in the order ksqlDB suggests the nearest of them.
constexpr std::array<const char*, 18> kCommands = {
    "SELECT", "CREATE", "INSERT", "DESCRIBE", "PRINT",  "EXPLAIN",  "SHOW",  "LIST",   "TERMINATE",
    "PAUSE",  "RESUME", "DROP",   "SET",      "DEFINE", "UNDEFINE", "UNSET", "ASSERT", "ALTER"};

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string token_text(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd:
      return "<EOF>";
    case TokenKind::kString:
      return "'" + token.text + "'";
    default:
      return token.text;
  }
}

}  // namespace

std::optional<int64_t> time_unit_ms(std::string_view unit) {
  static const std::array<std::pair<std::string_view, int64_t>, 10> kUnits = {
      {{"MILLISECOND", 1},
       {"MILLISECONDS", 1},
       {"SECOND", 1000},
       {"SECONDS", 1000},
       {"MINUTE", 60'000},
       {"MINUTES", 60'000},
       {"HOUR", 3'600'000},
       {"HOURS", 3'600'000},
       {"DAY", 86'400'000},
       {"DAYS", 86'400'000}}};
  for (const auto& [name, ms] : kUnits)
    if (unit == name) return ms;
  return std::nullopt;
}

bool is_reserved(std::string_view upper) {
  return reserved_words().count(upper) > 0;
}

ExprPtr make_expr(ExprKind kind, Position position) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->position = position;
  return e;
}

Parser::Nesting::Nesting(Parser& parser) : parser_(parser) {
  if (++parser_.depth_ > kMaxDepth) {
    --parser_.depth_;
    throw ParseError(parser_.peek().position, "Expression nested too deeply (more than " +
                                                  std::to_string(kMaxDepth) + " levels)");
  }
}

void Parser::deepen(int& added) {
  ++added;
  if (++depth_ > kMaxDepth)
    throw ParseError(peek().position, "Expression nested too deeply (more than " +
                                          std::to_string(kMaxDepth) + " levels)");
}

// ---- the cursor

const Token& Parser::peek(size_t ahead) const {
  return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
}

const Token& Parser::next() {
  const Token& token = tokens_[at_];
  if (at_ + 1 < tokens_.size()) ++at_;
  return token;
}

bool Parser::accept_word(const char* keyword) {
  if (!at_word(keyword)) return false;
  next();
  return true;
}

bool Parser::accept_symbol(const char* symbol) {
  if (!at_symbol(symbol)) return false;
  next();
  return true;
}

void Parser::expect_word(const char* keyword) {
  if (!accept_word(keyword)) fail_expecting(keyword);
}

void Parser::expect_symbol(const char* symbol) {
  if (!accept_symbol(symbol)) fail_expecting(std::string("'") + symbol + "'");
}

void Parser::fail_expecting(const std::string& expected) const {
  const Token& token = peek();
  if (token.kind == TokenKind::kEnd || (token.is_symbol(";") && open_brackets_ > 0))
    throw ParseError(token.position,
                     open_brackets_ > 0
                         ? "Syntax error at or near \";\"\n'}', ']', or ')' is missing"
                         : "Expecting " + expected + ", found <EOF>: a statement ends with ';'");
  if (token.kind == TokenKind::kWord && is_reserved(token.upper) && expected == "an identifier")
    throw ParseError(token.position,
                     "\"" + token.text +
                         "\" is a reserved keyword and it can't be used as an identifier. You can "
                         "use it as an identifier by escaping it as '" +
                         token.text + "' ");
  throw ParseError(token.position, "Expecting " + expected + ", found '" + token_text(token) + "'");
}

void Parser::fail_near(const Token& token) const {
  if (token.kind == TokenKind::kEnd) fail_expecting("an expression");
  throw ParseError(token.position, "Syntax error at or near '" + token_text(token) + "' at line " +
                                       std::to_string(token.position.line) + ":" +
                                       std::to_string(token.position.column));
}

// ---- names and literals

bool Parser::at_name() const {
  const Token& t = peek();
  return t.kind == TokenKind::kQuotedName || (t.kind == TokenKind::kWord && !is_reserved(t.upper));
}

Name Parser::name() {
  if (!at_name()) fail_expecting("an identifier");
  const Token& t = next();
  if (t.kind == TokenKind::kQuotedName) return Name{t.text, true, t.position};
  return Name{t.upper, false, t.position};
}

int64_t Parser::integer() {
  const Token& t = peek();
  if (t.kind != TokenKind::kInteger) fail_expecting("an integer");
  int64_t value = 0;
  auto [end, error] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
  if (error != std::errc() || end != t.text.data() + t.text.size())
    throw ParseError(t.position, "Integer out of range: " + t.text);
  next();
  return value;
}

std::string Parser::string_literal() {
  if (peek().kind != TokenKind::kString) fail_expecting("a string");
  return next().text;
}

// `n unit`, ksqlDB's window units (§1.2).
int64_t Parser::duration_ms() {
  Position position = peek().position;
  int64_t n = integer();
  const Token& unit = peek();
  if (unit.kind == TokenKind::kWord)
    if (auto ms = time_unit_ms(unit.upper)) {
      next();
      if (n > INT64_MAX / *ms) throw ParseError(position, "Duration out of range");
      return n * *ms;
    }
  fail_expecting("a time unit (MILLISECONDS, SECONDS, MINUTES, HOURS, DAYS)");
}

// ---- statements

std::vector<Statement> Parser::statements() {
  std::vector<Statement> out;
  while (peek().kind != TokenKind::kEnd) {
    if (accept_symbol(";")) continue;  // an empty statement
    size_t start = peek().offset;
    Statement s = statement();
    if (!at_symbol(";")) fail_expecting("';'");
    s.text = std::string(text_.substr(start, peek().offset + 1 - start));
    next();
    out.push_back(std::move(s));
  }
  return out;
}

ExprPtr Parser::lone_expression() {
  ExprPtr e = expression();
  if (peek().kind != TokenKind::kEnd) fail_near(peek());
  return e;
}

Statement Parser::statement() {
  Statement s;
  s.position = peek().position;
  const Token& first = peek();
  if (first.is_word("SELECT")) {
    s.body = query();
  } else if (first.is_word("CREATE")) {
    return create();
  } else if (first.is_word("INSERT")) {
    return insert();
  } else if (first.is_word("DROP")) {
    return drop();
  } else if (first.is_word("SHOW") || first.is_word("LIST")) {
    return show();
  } else if (first.is_word("DESCRIBE")) {
    return describe();
  } else if (first.is_word("PRINT")) {
    return print();
  } else if (first.is_word("EXPLAIN")) {
    return explain();
  } else if (first.is_word("TERMINATE") || first.is_word("PAUSE") || first.is_word("RESUME")) {
    QueryControl control{next().upper, "", false};
    if (accept_word("ALL"))
      control.all = true;
    else
      control.query_id = name().text;
    s.body = std::move(control);
  } else if (first.is_word("SET") || first.is_word("UNSET") ||
             (first.is_word("ALTER") && peek(1).is_word("SYSTEM"))) {
    SetProperty set{next().upper, "", ""};
    if (set.action == "ALTER") {
      next();
      set.action = "ALTER SYSTEM";
    }
    set.name = string_literal();
    if (set.action != "UNSET") {
      expect_symbol("=");
      set.value = string_literal();
    }
    s.body = std::move(set);
  } else if (first.is_word("ALTER")) {
    next();
    AlterSource alter;
    if (accept_word("TABLE"))
      alter.table = true;
    else
      expect_word("STREAM");
    alter.name = name();
    do {
      expect_word("ADD");
      accept_word("COLUMN");
      alter.columns.push_back(column_definition());
    } while (accept_symbol(","));
    s.body = std::move(alter);
  } else if (first.is_word("DEFINE") || first.is_word("UNDEFINE")) {
    DefineVariable define{next().upper == "UNDEFINE", "", ""};
    define.name = peek().text;  // as written: ksqlDB lists variables so
    name();
    if (!define.undefine) {
      expect_symbol("=");
      define.value = string_literal();
    }
    s.body = std::move(define);
  } else {
    unknown_statement();
  }
  return s;
}

void Parser::unknown_statement() const {
  const Token& t = peek();
  if (t.kind != TokenKind::kWord) fail_near(t);
  const char* nearest = kCommands[0];
  size_t best = SIZE_MAX;
  for (const char* command : kCommands) {
    size_t d = edit_distance(command, t.upper);
    if (d < best) best = d, nearest = command;
  }
  throw ParseError(t.position, "Unknown statement '" + t.text + "'\nDid you mean '" +
                                   std::string(nearest) + "'?");
}

Statement Parser::create() {
  Statement s;
  s.position = next().position;  // CREATE
  bool or_replace = false;
  if (accept_word("OR")) {
    expect_word("REPLACE");
    or_replace = true;
  }
  if (accept_word("TYPE")) {
    CreateType type;
    if (accept_word("IF")) {
      expect_word("NOT");
      expect_word("EXISTS");
      type.if_not_exists = true;
    }
    type.name = name();
    expect_word("AS");
    type.type = this->type();
    s.body = std::move(type);
    return s;
  }
  bool source = accept_word("SOURCE");
  s.body = create_source(or_replace, source);
  return s;
}

CreateSource Parser::create_source(bool or_replace, bool source) {
  CreateSource create;
  create.or_replace = or_replace;
  create.source = source;
  if (accept_word("TABLE"))
    create.table = true;
  else if (!accept_word("STREAM"))
    fail_expecting("STREAM or TABLE");
  if (accept_word("IF")) {
    expect_word("NOT");
    expect_word("EXISTS");
    create.if_not_exists = true;
  }
  create.name = name();
  if (at_symbol("(")) create.columns = column_definitions();
  if (at_word("WITH")) create.properties = with_properties();
  if (accept_word("AS")) {
    if (source)
      throw ParseError(peek().position, "CREATE SOURCE STREAM|TABLE cannot be used with AS SELECT");
    if (!create.columns.empty())
      throw ParseError(peek().position, "Expecting WITH or AS SELECT, not a column list");
    create.query = query();
  }
  return create;
}

std::vector<ColumnDef> Parser::column_definitions() {
  std::vector<ColumnDef> columns;
  expect_symbol("(");
  ++open_brackets_;
  do columns.push_back(column_definition());
  while (accept_symbol(","));
  expect_symbol(")");
  --open_brackets_;
  return columns;
}

ColumnDef Parser::column_definition() {
  ColumnDef column;
  column.name = name();
  column.type = type();
  if (accept_word("PRIMARY")) {
    expect_word("KEY");
    column.constraint = ColumnConstraint::kPrimaryKey;
  } else if (accept_word("KEY")) {
    column.constraint = ColumnConstraint::kKey;
  } else if (accept_word("HEADERS")) {
    column.constraint = ColumnConstraint::kHeaders;
  } else if (accept_word("HEADER")) {
    expect_symbol("(");
    column.header_key = string_literal();
    expect_symbol(")");
    column.constraint = ColumnConstraint::kHeader;
  }
  return column;
}

std::vector<Property> Parser::with_properties() {
  std::vector<Property> properties;
  expect_word("WITH");
  expect_symbol("(");
  ++open_brackets_;
  do {
    Property p;
    p.position = peek().position;
    const Token& key = peek();
    if (key.kind == TokenKind::kWord)
      p.name = next().upper;
    else if (key.kind == TokenKind::kQuotedName || key.kind == TokenKind::kString)
      p.name = next().text;
    else
      fail_expecting("a property name");
    for (char& c : p.name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    expect_symbol("=");
    p.value = primary();
    properties.push_back(std::move(p));
  } while (accept_symbol(","));
  expect_symbol(")");
  --open_brackets_;
  return properties;
}

Statement Parser::insert() {
  Statement s;
  s.position = next().position;  // INSERT
  expect_word("INTO");
  Name target = name();
  if (at_symbol("(") || at_word("VALUES")) {
    InsertValues values;
    values.target = std::move(target);
    if (accept_symbol("(")) {
      ++open_brackets_;
      do values.columns.push_back(name());
      while (accept_symbol(","));
      expect_symbol(")");
      --open_brackets_;
    }
    expect_word("VALUES");
    values.values = parenthesized_list();
    s.body = std::move(values);
    return s;
  }
  InsertInto insert;
  insert.target = std::move(target);
  if (at_word("WITH")) insert.properties = with_properties();
  if (!at_word("SELECT")) fail_expecting("SELECT or VALUES");
  insert.query = query();
  s.body = std::move(insert);
  return s;
}

Statement Parser::drop() {
  Statement s;
  s.position = next().position;  // DROP
  if (accept_word("TYPE")) {
    DropType drop;
    if (accept_word("IF")) {
      expect_word("EXISTS");
      drop.if_exists = true;
    }
    drop.name = name();
    s.body = std::move(drop);
    return s;
  }
  DropSource drop;
  if (accept_word("TABLE"))
    drop.table = true;
  else if (!accept_word("STREAM"))
    fail_expecting("STREAM, TABLE or TYPE");
  if (accept_word("IF")) {
    expect_word("EXISTS");
    drop.if_exists = true;
  }
  drop.name = name();
  if (accept_word("DELETE")) {
    expect_word("TOPIC");
    drop.delete_topic = true;
  }
  s.body = std::move(drop);
  return s;
}

Statement Parser::show() {
  Statement s;
  s.position = next().position;  // SHOW or LIST
  ShowList show;
  if (accept_word("ALL")) {
    show.all = true;
    if (!at_word("TOPICS")) fail_expecting("TOPICS");
  }
  if (at_word("SOURCE") || at_word("SINK")) {
    show.connector_kind = next().upper;
    if (!at_word("CONNECTORS")) fail_expecting("CONNECTORS");
  }
  static const std::array<const char*, 10> kLists = {
      "STREAMS",   "TABLES", "TOPICS",    "QUERIES",    "PROPERTIES",
      "FUNCTIONS", "TYPES",  "VARIABLES", "CONNECTORS", "CONNECTOR"};
  for (const char* what : kLists)
    if (at_word(what)) show.what = next().upper;
  if (show.what.empty()) fail_expecting("STREAMS, TABLES, TOPICS, QUERIES or PROPERTIES");
  if (show.what == "CONNECTOR") {
    expect_word("PLUGINS");
    show.what = "CONNECTOR PLUGINS";
  }
  show.extended = accept_word("EXTENDED");
  s.body = std::move(show);
  return s;
}

Statement Parser::describe() {
  Statement s;
  s.position = next().position;  // DESCRIBE
  Describe d;
  if (at_word("FUNCTION") || at_word("CONNECTOR")) {
    d.what = next().upper;
    d.name = name();
  } else if (at_word("STREAMS") || at_word("TABLES")) {
    d.what = next().upper;
  } else {
    d.what = "SOURCE";
    d.name = name();
  }
  d.extended = accept_word("EXTENDED");
  s.body = std::move(d);
  return s;
}

Statement Parser::print() {
  Statement s;
  s.position = next().position;  // PRINT
  Print p;
  if (peek().kind == TokenKind::kString)
    p.topic = Name{next().text, true, s.position};
  else
    p.topic = name();
  if (accept_word("FROM")) {
    expect_word("BEGINNING");
    p.from_beginning = true;
  }
  if (accept_word("INTERVAL") || accept_word("SAMPLE")) p.interval = integer();
  if (accept_word("LIMIT")) p.limit = integer();
  s.body = std::move(p);
  return s;
}

Statement Parser::explain() {
  Statement s;
  s.position = next().position;  // EXPLAIN
  Explain e;
  const Token& t = peek();
  bool statement_follows = false;
  for (const char* command : kCommands) statement_follows = statement_follows || t.is_word(command);
  if (statement_follows)
    e.statement = std::make_unique<Statement>(statement());
  else
    e.query_id = name().text;
  s.body = std::move(e);
  return s;
}

std::vector<Statement> parse(std::string_view text) {
  return Parser(text, tokenize(text)).statements();
}

ExprPtr parse_expression(std::string_view text) {
  return Parser(text, tokenize(text)).lone_expression();
}

}  // namespace oxbow::sql::parser
