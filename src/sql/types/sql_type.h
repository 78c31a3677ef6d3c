#pragma once
// KSQL's types (docs/sql/ksqldb-facts.md §2.1): what a column, an expression or a literal is, and
// the rules that relate them: implicit widening (§2.3), the result types of arithmetic with
// DECIMAL's precision and scale, and the text ksqlDB prints for each (in schemas and messages).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace oxbow::sql {

enum class SqlBaseType {
  kBoolean,
  kInteger,  // 32 bits
  kBigint,   // 64 bits
  kDecimal,
  kDouble,
  kString,
  kBytes,
  kDate,       // days since the epoch
  kTime,       // milliseconds of the day
  kTimestamp,  // milliseconds since the epoch, no zone
  kArray,
  kMap,
  kStruct,
};

class SqlType;
using SqlTypePtr = std::shared_ptr<const SqlType>;

struct SqlField {
  std::string name;
  SqlTypePtr type;
};

// Immutable, shared: a schema's columns and the expressions over them point at the same types.
class SqlType {
 public:
  static SqlTypePtr of(SqlBaseType base);  // a primitive (not DECIMAL, ARRAY, MAP, STRUCT)
  static SqlTypePtr boolean() { return of(SqlBaseType::kBoolean); }
  static SqlTypePtr integer() { return of(SqlBaseType::kInteger); }
  static SqlTypePtr bigint() { return of(SqlBaseType::kBigint); }
  static SqlTypePtr double_type() { return of(SqlBaseType::kDouble); }
  static SqlTypePtr string() { return of(SqlBaseType::kString); }
  static SqlTypePtr bytes() { return of(SqlBaseType::kBytes); }
  // Throws SqlTypeError for a precision below 1, a negative scale or a scale above the precision.
  static SqlTypePtr decimal(int precision, int scale);
  static SqlTypePtr array(SqlTypePtr element);
  static SqlTypePtr map(SqlTypePtr key, SqlTypePtr value);
  static SqlTypePtr structure(std::vector<SqlField> fields);

  SqlBaseType base() const { return base_; }
  int precision() const { return precision_; }
  int scale() const { return scale_; }
  const SqlTypePtr& element() const { return element_; }  // ARRAY's element, MAP's value
  const SqlTypePtr& key() const { return key_; }          // MAP's key
  const std::vector<SqlField>& fields() const { return fields_; }
  const SqlField* field(const std::string& name) const;

  bool is_numeric() const;
  bool equals(const SqlType& other) const;
  // As ksqlDB prints it: INTEGER, DECIMAL(4, 2), ARRAY<STRING>, MAP<STRING, BIGINT>,
  // STRUCT<`F0` STRING, `F1` INTEGER>.
  std::string to_string() const;
  // The base type's name alone (DECIMAL, ARRAY), as some of ksqlDB's messages print it.
  const char* base_name() const;

 private:
  explicit SqlType(SqlBaseType base) : base_(base) {}
  SqlBaseType base_;
  int precision_ = 0, scale_ = 0;
  SqlTypePtr element_, key_;
  std::vector<SqlField> fields_;
};

class SqlTypeError : public std::exception {
 public:
  explicit SqlTypeError(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// Whether a value of `from` may stand where `to` is wanted without a CAST: numbers widen
// INTEGER < BIGINT < DECIMAL < DOUBLE (a DECIMAL to a DECIMAL that holds it), STRING to DATE,
// TIME, TIMESTAMP and BYTES, and ARRAY, MAP and STRUCT element by element.
bool can_implicitly_cast(const SqlType& from, const SqlType& to);

// The DECIMAL an integer widens to: INTEGER DECIMAL(10, 0), BIGINT DECIMAL(19, 0); a DECIMAL is
// itself. Null for other types.
SqlTypePtr as_decimal(const SqlType& type);

// The type of `left op right` for op one of + - * / %: both widened to the wider, DOUBLE winning,
// DECIMAL's precision and scale by ksqlDB's rules, STRING + STRING a concatenation. Throws
// SqlTypeError "Unsupported arithmetic types. <L> <R>" (base names) otherwise.
SqlTypePtr arithmetic_result(char op, const SqlType& left, const SqlType& right);

}  // namespace oxbow::sql
