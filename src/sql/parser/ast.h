#pragma once
// The syntax tree of KSQL statements, as the parser builds it and before any name is resolved:
// names are as written (unquoted ones upper-cased by the lexer), types as spelled. The binder
// turns it into typed, resolved plans; `format()` prints expressions and types back in ksqlDB's
// canonical text (what DESCRIBE and error messages show).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sql/parser/token.h"

namespace oxbow::sql::parser {

// A type as written: BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p, s), STRING (VARCHAR), BYTES, DATE,
// TIME, TIMESTAMP, ARRAY<T>, MAP<K, V>, STRUCT<name T, ...>, or a name made by CREATE TYPE.
struct TypeSpec {
  std::string base;             // upper-cased: "INTEGER", "DECIMAL", "ARRAY", ... or the type name
  std::vector<int> parameters;  // DECIMAL's precision and scale
  std::vector<TypeSpec> elements;        // ARRAY: 1, MAP: 2 (key, value), STRUCT: its fields
  std::vector<std::string> field_names;  // STRUCT: the fields' names
  bool custom = false;                   // a name CREATE TYPE made
};

enum class ExprKind {
  kColumn,        // name, qualifier (the source or alias before the dot, if any)
  kNull,          // NULL
  kBoolean,       // text "true"/"false"
  kInteger,       // text: digits (INT when it fits, else BIGINT)
  kDecimal,       // text as written
  kDouble,        // text as written
  kString,        // text
  kTypedLiteral,  // name: the type (DATE, TIME, TIMESTAMP, ...), text: the string
  kArithmetic,    // op: + - * / %, args: 2
  kNegate,        // op: - or +, args: 1
  kConcat,        // ||, args: 2
  kComparison,    // op: = <> < <= > >= and "IS DISTINCT FROM" / "IS NOT DISTINCT FROM"
  kAnd,
  kOr,
  kNot,
  kIsNull,       // negated: IS NOT NULL
  kBetween,      // args: value, low, high; negated
  kIn,           // args: value, then the list; negated
  kLike,         // args: value, pattern[, escape]; negated
  kCase,         // args: [operand], then when/then pairs, [else]; has_operand, has_else
  kCast,         // args: 1; type
  kFunction,     // name; args (lambdas among them); distinct: COUNT(DISTINCT x)
  kStar,         // `*` as a function's argument (COUNT(*)) or a select item; qualifier for `s.*`
  kSubscript,    // args: container, index
  kDereference,  // args: 1 struct; name: the field (s->f)
  kArray,        // ARRAY[...]
  kMap,          // MAP(k := v, ...): args alternate key, value
  kStruct,       // STRUCT(f := v, ...): field_names and args
  kLambda,       // field_names: the parameters; args: the body
  kTimeUnit,     // a function's argument DAYS, HOUR...: text, upper-cased (DATEADD(DAYS, ...))
  kAtTimeZone,   // args: value, zone
  kVariable,     // ${name}, if left unsubstituted
};

struct Expr {
  ExprKind kind = ExprKind::kNull;
  Position position;
  std::string name;       // column, function, field or typed-literal type
  std::string qualifier;  // kColumn / kStar: the source or alias
  std::string text;       // literals' text; operators
  std::vector<std::unique_ptr<Expr>> args;
  std::vector<std::string> field_names;  // kStruct, kLambda
  std::optional<TypeSpec> type;          // kCast
  bool negated = false;
  bool distinct = false;
  bool has_operand = false;  // kCase
  bool has_else = false;     // kCase
};
using ExprPtr = std::unique_ptr<Expr>;

// An identifier as written: `quoted` ones keep their case.
struct Name {
  std::string text;
  bool quoted = false;
  Position position;
};

struct Property {
  std::string name;  // upper-cased (WITH properties are case-insensitive)
  ExprPtr value;     // a literal
  Position position;
};

enum class ColumnConstraint { kNone, kKey, kPrimaryKey, kHeaders, kHeader };

struct ColumnDef {
  Name name;
  TypeSpec type;
  ColumnConstraint constraint = ColumnConstraint::kNone;
  std::string header_key;  // HEADER('key')
};

struct SelectItem {
  ExprPtr expr;  // kStar for `*` and `src.*`
  std::optional<Name> alias;
};

enum class JoinType { kInner, kLeft, kRight, kFull };

struct WithinClause {
  int64_t before_ms = 0, after_ms = 0;
  std::optional<int64_t> grace_ms;
};

struct Relation {
  Name source;
  std::optional<Name> alias;
};

struct JoinClause {
  JoinType type = JoinType::kInner;
  Relation right;
  std::optional<WithinClause> within;
  ExprPtr on;
  Position position;
};

enum class WindowType { kTumbling, kHopping, kSession };

struct WindowClause {
  WindowType type = WindowType::kTumbling;
  int64_t size_ms = 0;     // SESSION: the gap
  int64_t advance_ms = 0;  // HOPPING
  std::optional<int64_t> retention_ms, grace_ms;
  Position position;
};

enum class EmitType { kNone, kChanges, kFinal };

struct Query {
  std::vector<SelectItem> select;
  Relation from;
  std::vector<JoinClause> joins;
  std::optional<WindowClause> window;
  ExprPtr where;
  std::vector<ExprPtr> group_by;
  std::vector<ExprPtr> partition_by;
  ExprPtr having;
  EmitType emit = EmitType::kNone;
  std::optional<int64_t> limit;
  Position position;
};

struct CreateSource {
  bool table = false;
  bool or_replace = false;
  bool source = false;  // CREATE SOURCE STREAM|TABLE: read-only
  bool if_not_exists = false;
  Name name;
  std::vector<ColumnDef> columns;
  std::vector<Property> properties;
  std::unique_ptr<Query> query;  // CREATE ... AS SELECT
};

struct InsertInto {
  Name target;
  std::vector<Property> properties;
  std::unique_ptr<Query> query;
};

struct InsertValues {
  Name target;
  std::vector<Name> columns;  // empty: all, in order
  std::vector<ExprPtr> values;
};

struct DropSource {
  bool table = false;
  bool if_exists = false;
  bool delete_topic = false;
  Name name;
};

struct CreateType {
  bool if_not_exists = false;
  Name name;
  TypeSpec type;
};

struct DropType {
  bool if_exists = false;
  Name name;
};

struct AlterSource {
  bool table = false;
  Name name;
  std::vector<ColumnDef> columns;
};

// SHOW|LIST <what>: "STREAMS", "TABLES", "TOPICS", "QUERIES", "PROPERTIES", "FUNCTIONS", "TYPES",
// "VARIABLES", "CONNECTORS", "CONNECTOR PLUGINS".
struct ShowList {
  std::string what;
  bool extended = false;
  bool all = false;            // SHOW ALL TOPICS
  std::string connector_kind;  // SOURCE / SINK CONNECTORS
};

// DESCRIBE <source> | STREAMS | TABLES | FUNCTION f | CONNECTOR c [EXTENDED].
struct Describe {
  std::string what;  // "SOURCE", "STREAMS", "TABLES", "FUNCTION", "CONNECTOR"
  Name name;
  bool extended = false;
};

struct Print {
  Name topic;
  bool from_beginning = false;
  std::optional<int64_t> interval, limit;
};

// TERMINATE / PAUSE / RESUME a query id, or ALL.
struct QueryControl {
  std::string action;  // "TERMINATE", "PAUSE", "RESUME"
  std::string query_id;
  bool all = false;
};

struct SetProperty {
  std::string action;  // "SET", "UNSET", "ALTER SYSTEM"
  std::string name;
  std::string value;
};

struct DefineVariable {
  bool undefine = false;
  std::string name;
  std::string value;
};

struct Statement;
struct Explain {
  std::unique_ptr<Statement> statement;  // EXPLAIN <statement>
  std::string query_id;                  // EXPLAIN <query id>
};

struct Statement {
  std::variant<std::unique_ptr<Query>, CreateSource, InsertInto, InsertValues, DropSource,
               CreateType, DropType, AlterSource, ShowList, Describe, Print, QueryControl,
               SetProperty, DefineVariable, Explain>
      body;
  std::string text;  // the statement's text, from its first token to its `;`
  Position position;
};

// ksqlDB's canonical text of an expression or a type, as its ExpressionFormatter writes it:
// binary operations parenthesized ("(A + 1)"), names upper-cased unless quoted, strings quoted.
std::string format(const Expr& expr);
std::string format(const TypeSpec& type);
// The same, each column reference written as `column_text` gives it (nullopt: as written):
// ksqlDB's planner prints expressions after rewriting their column references.
std::string format(const Expr& expr,
                   const std::function<std::optional<std::string>(const Expr&)>& column_text);

}  // namespace oxbow::sql::parser
