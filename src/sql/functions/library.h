#pragma once
// The built-in functions as data (docs/sql/engine.md, "Functions"): each group's file adds its
// entries (name, category, description, variants and implementations) to builtin_functions();
// here are the helpers their implementations share.
#include <string>
#include <string_view>
#include <vector>

#include "sql/binder/function_registry.h"
#include "sql/execution/operations.h"

namespace oxbow::sql::functions {

using Kind = Value::Kind;

// ksqlDB's categories (its FunctionCategory), as SHOW FUNCTIONS prints them.
inline constexpr const char* kString = "STRING";
inline constexpr const char* kRegex = "REGULAR EXPRESSION";
inline constexpr const char* kMath = "MATHEMATICAL";
inline constexpr const char* kDateTime = "DATE / TIME";
inline constexpr const char* kJson = "JSON";
inline constexpr const char* kArray = "ARRAY";
inline constexpr const char* kMap = "MAP";
inline constexpr const char* kUrl = "URL";
inline constexpr const char* kConditional = "CONDITIONAL";
inline constexpr const char* kConversions = "CONVERSIONS";
inline constexpr const char* kOther = "OTHER";
inline constexpr const char* kAggregate = "AGGREGATE";
inline constexpr const char* kTable = "TABLE";
inline constexpr const char* kLambda = "LAMBDA";

// A scalar function whose variants give NULL for any NULL argument.
FunctionInfo scalar(std::string name, std::string category, std::string description,
                    std::vector<FunctionVariant> variants);
// The same, for functions whose implementations see NULL arguments (COALESCE, CONCAT, ...).
FunctionInfo scalar_seeing_nulls(std::string name, std::string category, std::string description,
                                 std::vector<FunctionVariant> variants);

void add_string_functions(std::vector<FunctionInfo>& out);
void add_regex_functions(std::vector<FunctionInfo>& out);
void add_math_functions(std::vector<FunctionInfo>& out);
void add_collection_functions(std::vector<FunctionInfo>& out);
void add_null_functions(std::vector<FunctionInfo>& out);
void add_bytes_functions(std::vector<FunctionInfo>& out);
void add_json_functions(std::vector<FunctionInfo>& out);
void add_url_functions(std::vector<FunctionInfo>& out);
void add_date_time_functions(std::vector<FunctionInfo>& out);
void add_lambda_functions(std::vector<FunctionInfo>& out);
void add_aggregate_functions(std::vector<FunctionInfo>& out);
void add_table_functions(std::vector<FunctionInfo>& out);

// Results. Text goes through the Value's own buffer, so a steady stream of rows allocates
// nothing for it.
void set_string(Value& out, std::string_view s);
void set_bytes(Value& out, std::string_view s);
void set_items(Value& out, Kind kind, std::vector<Value> items);
Value string_value(std::string_view s);
// A buffer of this thread's to build a result in before set_string copies it out.
std::string& scratch();

// Java's String.length(): UTF-16 code units of UTF-8 text.
int32_t java_length(std::string_view s);
// The UTF-8 text's code points, and back.
std::vector<char32_t> code_points(std::string_view s);
void append_utf8(std::string& out, char32_t c);

// Whether two non-null values of the same kind are equal (containers element by element).
bool same_value(const Value& x, const Value& y);

}  // namespace oxbow::sql::functions
