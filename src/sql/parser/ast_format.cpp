#include <cctype>

#include "sql/parser/ast.h"
#include "sql/parser/parser.h"

namespace oxbow::sql::parser {

namespace {

// A name as it must be written to read back the same: bare when it is a valid unquoted
// identifier already in upper case and not reserved, else in backticks.
std::string name_text(const std::string& name) {
  bool bare =
      !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) && !is_reserved(name);
  for (char c : name)
    bare = bare && (std::isupper(static_cast<unsigned char>(c)) ||
                    std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '@');
  if (bare) return name;
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

std::string quoted_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string list(const std::vector<ExprPtr>& args, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < args.size(); ++i) {
    if (i > from) out += ", ";
    out += format(*args[i]);
  }
  return out;
}

std::string not_if(bool negated) {
  return negated ? "NOT " : "";
}

}  // namespace

std::string format(const TypeSpec& type) {
  if (type.custom) return name_text(type.base);
  if (type.base == "DECIMAL" && type.parameters.size() == 2)
    return "DECIMAL(" + std::to_string(type.parameters[0]) + ", " +
           std::to_string(type.parameters[1]) + ")";
  if (type.base == "ARRAY" && type.elements.size() == 1)
    return "ARRAY<" + format(type.elements[0]) + ">";
  if (type.base == "MAP" && type.elements.size() == 2)
    return "MAP<" + format(type.elements[0]) + ", " + format(type.elements[1]) + ">";
  if (type.base == "STRUCT") {
    std::string out = "STRUCT<";
    for (size_t i = 0; i < type.elements.size(); ++i) {
      if (i > 0) out += ", ";
      out += "`" + type.field_names[i] + "` " + format(type.elements[i]);
    }
    return out + ">";
  }
  return type.base;
}

namespace {
// format()'s column rewriting, for the one call under way on this thread.
thread_local const std::function<std::optional<std::string>(const Expr&)>* column_rewrite = nullptr;
}  // namespace

std::string format(const Expr& e,
                   const std::function<std::optional<std::string>(const Expr&)>& column_text) {
  const auto* outer = column_rewrite;
  column_rewrite = &column_text;
  std::string out;
  try {
    out = format(e);
  } catch (...) {
    column_rewrite = outer;
    throw;
  }
  column_rewrite = outer;
  return out;
}

std::string format(const Expr& e) {
  const auto& a = e.args;
  switch (e.kind) {
    case ExprKind::kColumn:
      if (column_rewrite)
        if (auto text = (*column_rewrite)(e)) return *text;
      return e.qualifier.empty() ? name_text(e.name)
                                 : name_text(e.qualifier) + "." + name_text(e.name);
    case ExprKind::kNull:
      return "null";
    case ExprKind::kBoolean:
    case ExprKind::kInteger:
    case ExprKind::kDecimal:
    case ExprKind::kDouble:
      return e.text;
    case ExprKind::kString:
      return quoted_string(e.text);
    case ExprKind::kTypedLiteral:
      return e.name + " " + quoted_string(e.text);
    case ExprKind::kArithmetic:
    case ExprKind::kConcat:
    case ExprKind::kComparison:
    case ExprKind::kAnd:
    case ExprKind::kOr:
      return "(" + format(*a[0]) + " " + e.text + " " + format(*a[1]) + ")";
    case ExprKind::kNegate:
      return e.text + format(*a[0]);
    case ExprKind::kNot:
      return "(NOT " + format(*a[0]) + ")";
    case ExprKind::kIsNull:
      return "(" + format(*a[0]) + " IS " + not_if(e.negated) + "NULL)";
    case ExprKind::kBetween:
      return "(" + format(*a[0]) + " " + not_if(e.negated) + "BETWEEN " + format(*a[1]) + " AND " +
             format(*a[2]) + ")";
    case ExprKind::kIn:
      return "(" + format(*a[0]) + " " + not_if(e.negated) + "IN (" + list(a, 1) + "))";
    case ExprKind::kLike:
      return "(" + format(*a[0]) + " " + not_if(e.negated) + "LIKE " + format(*a[1]) +
             (a.size() > 2 ? " ESCAPE " + format(*a[2]) : "") + ")";
    case ExprKind::kCase: {
      std::string out = "(CASE";
      size_t i = 0;
      if (e.has_operand) out += " " + format(*a[i++]);
      size_t pairs_end = a.size() - (e.has_else ? 1 : 0);
      for (; i + 1 < pairs_end; i += 2)
        out += " WHEN " + format(*a[i]) + " THEN " + format(*a[i + 1]);
      if (e.has_else) out += " ELSE " + format(*a.back());
      return out + " END)";
    }
    case ExprKind::kCast:
      return "CAST(" + format(*a[0]) + " AS " + format(*e.type) + ")";
    case ExprKind::kFunction:
      return name_text(e.name) + "(" + list(a) + ")";
    case ExprKind::kStar:
      return e.qualifier.empty() ? "*" : name_text(e.qualifier) + ".*";
    case ExprKind::kSubscript:
      return format(*a[0]) + "[" + format(*a[1]) + "]";
    case ExprKind::kDereference:
      return format(*a[0]) + "->" + name_text(e.name);
    case ExprKind::kArray:
      return "ARRAY[" + list(a) + "]";
    case ExprKind::kMap: {
      std::string out = "MAP(";
      for (size_t i = 0; i + 1 < a.size(); i += 2)
        out += (i > 0 ? ", " : "") + format(*a[i]) + ":=" + format(*a[i + 1]);
      return out + ")";
    }
    case ExprKind::kStruct: {
      std::string out = "STRUCT(";
      for (size_t i = 0; i < a.size(); ++i)
        out += (i > 0 ? ", " : "") + name_text(e.field_names[i]) + ":=" + format(*a[i]);
      return out + ")";
    }
    case ExprKind::kLambda: {
      std::string out = "(";
      for (size_t i = 0; i < e.field_names.size(); ++i)
        out += (i > 0 ? ", " : "") + e.field_names[i];
      return out + ") => " + format(*a[0]);
    }
    case ExprKind::kTimeUnit:
      return e.text;
    case ExprKind::kAtTimeZone:
      return format(*a[0]) + " AT TIME ZONE " + format(*a[1]);
    case ExprKind::kVariable:
      return "${" + e.name + "}";
  }
  return "";
}

}  // namespace oxbow::sql::parser
