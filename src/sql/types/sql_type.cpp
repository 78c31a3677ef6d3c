#include "sql/types/sql_type.h"

#include <algorithm>
#include <array>

namespace oxbow::sql {

namespace {

const char* base_name(SqlBaseType base) {
  switch (base) {
    case SqlBaseType::kBoolean:
      return "BOOLEAN";
    case SqlBaseType::kInteger:
      return "INTEGER";
    case SqlBaseType::kBigint:
      return "BIGINT";
    case SqlBaseType::kDecimal:
      return "DECIMAL";
    case SqlBaseType::kDouble:
      return "DOUBLE";
    case SqlBaseType::kString:
      return "STRING";
    case SqlBaseType::kBytes:
      return "BYTES";
    case SqlBaseType::kDate:
      return "DATE";
    case SqlBaseType::kTime:
      return "TIME";
    case SqlBaseType::kTimestamp:
      return "TIMESTAMP";
    case SqlBaseType::kArray:
      return "ARRAY";
    case SqlBaseType::kMap:
      return "MAP";
    case SqlBaseType::kStruct:
      return "STRUCT";
  }
  return "?";
}

// Numbers by width, for widening: INTEGER < BIGINT < DECIMAL < DOUBLE.
int numeric_rank(SqlBaseType base) {
  switch (base) {
    case SqlBaseType::kInteger:
      return 1;
    case SqlBaseType::kBigint:
      return 2;
    case SqlBaseType::kDecimal:
      return 3;
    case SqlBaseType::kDouble:
      return 4;
    default:
      return 0;
  }
}

// A DECIMAL holds another when it has as many digits on each side of the point.
bool decimal_holds(const SqlType& wide, const SqlType& narrow) {
  return narrow.precision() - narrow.scale() <= wide.precision() - wide.scale() &&
         narrow.scale() <= wide.scale();
}

}  // namespace

SqlTypePtr SqlType::of(SqlBaseType base) {
  static const auto primitives = [] {
    std::array<SqlTypePtr, 13> all;
    for (int i = 0; i < 13; ++i) all[i] = SqlTypePtr(new SqlType(static_cast<SqlBaseType>(i)));
    return all;
  }();
  return primitives[static_cast<int>(base)];
}

SqlTypePtr SqlType::decimal(int precision, int scale) {
  std::string spelled = "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
  if (precision < 1) throw SqlTypeError("DECIMAL precision must be >= 1: " + spelled);
  if (scale < 0) throw SqlTypeError("DECIMAL scale must be >= 0: " + spelled);
  if (precision < scale) throw SqlTypeError("DECIMAL precision must be >= scale: " + spelled);
  auto t = std::shared_ptr<SqlType>(new SqlType(SqlBaseType::kDecimal));
  t->precision_ = precision;
  t->scale_ = scale;
  return t;
}

SqlTypePtr SqlType::array(SqlTypePtr element) {
  auto t = std::shared_ptr<SqlType>(new SqlType(SqlBaseType::kArray));
  t->element_ = std::move(element);
  return t;
}

SqlTypePtr SqlType::map(SqlTypePtr key, SqlTypePtr value) {
  auto t = std::shared_ptr<SqlType>(new SqlType(SqlBaseType::kMap));
  t->key_ = std::move(key);
  t->element_ = std::move(value);
  return t;
}

SqlTypePtr SqlType::structure(std::vector<SqlField> fields) {
  for (size_t i = 0; i < fields.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (fields[i].name == fields[j].name)
        throw SqlTypeError("Duplicate field names found in STRUCT: '" + fields[i].name + "'");
  auto t = std::shared_ptr<SqlType>(new SqlType(SqlBaseType::kStruct));
  t->fields_ = std::move(fields);
  return t;
}

const SqlField* SqlType::field(const std::string& name) const {
  for (const auto& f : fields_)
    if (f.name == name) return &f;
  return nullptr;
}

const char* SqlType::base_name() const {
  return oxbow::sql::base_name(base_);
}

bool SqlType::is_numeric() const {
  return numeric_rank(base_) > 0;
}

bool SqlType::equals(const SqlType& other) const {
  if (base_ != other.base_) return false;
  switch (base_) {
    case SqlBaseType::kDecimal:
      return precision_ == other.precision_ && scale_ == other.scale_;
    case SqlBaseType::kArray:
      return element_->equals(*other.element_);
    case SqlBaseType::kMap:
      return key_->equals(*other.key_) && element_->equals(*other.element_);
    case SqlBaseType::kStruct:
      if (fields_.size() != other.fields_.size()) return false;
      for (size_t i = 0; i < fields_.size(); ++i)
        if (fields_[i].name != other.fields_[i].name ||
            !fields_[i].type->equals(*other.fields_[i].type))
          return false;
      return true;
    default:
      return true;
  }
}

std::string SqlType::to_string() const {
  switch (base_) {
    case SqlBaseType::kDecimal:
      return "DECIMAL(" + std::to_string(precision_) + ", " + std::to_string(scale_) + ")";
    case SqlBaseType::kArray:
      return "ARRAY<" + element_->to_string() + ">";
    case SqlBaseType::kMap:
      return "MAP<" + key_->to_string() + ", " + element_->to_string() + ">";
    case SqlBaseType::kStruct: {
      std::string out = "STRUCT<";
      for (size_t i = 0; i < fields_.size(); ++i)
        out += (i ? ", `" : "`") + fields_[i].name + "` " + fields_[i].type->to_string();
      return out + ">";
    }
    default:
      return base_name();
  }
}

SqlTypePtr as_decimal(const SqlType& type) {
  switch (type.base()) {
    case SqlBaseType::kInteger:
      return SqlType::decimal(10, 0);
    case SqlBaseType::kBigint:
      return SqlType::decimal(19, 0);
    case SqlBaseType::kDecimal:
      return SqlType::decimal(type.precision(), type.scale());
    default:
      return nullptr;
  }
}

bool can_implicitly_cast(const SqlType& from, const SqlType& to) {
  if (from.equals(to)) return true;
  int from_rank = numeric_rank(from.base()), to_rank = numeric_rank(to.base());
  if (from_rank && to_rank) {
    if (to.base() == SqlBaseType::kDecimal) {
      auto widened = as_decimal(from);
      return widened && decimal_holds(to, *widened);
    }
    return from_rank < to_rank;
  }
  switch (from.base()) {
    case SqlBaseType::kString:
      return to.base() == SqlBaseType::kDate || to.base() == SqlBaseType::kTime ||
             to.base() == SqlBaseType::kTimestamp || to.base() == SqlBaseType::kBytes;
    case SqlBaseType::kArray:
      return to.base() == SqlBaseType::kArray &&
             can_implicitly_cast(*from.element(), *to.element());
    case SqlBaseType::kMap:
      return to.base() == SqlBaseType::kMap && can_implicitly_cast(*from.key(), *to.key()) &&
             can_implicitly_cast(*from.element(), *to.element());
    case SqlBaseType::kStruct: {
      if (to.base() != SqlBaseType::kStruct) return false;
      for (const auto& f : from.fields()) {
        const SqlField* other = to.field(f.name);
        if (other && !can_implicitly_cast(*f.type, *other->type)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

SqlTypePtr arithmetic_result(char op, const SqlType& left, const SqlType& right) {
  if (op == '+' && left.base() == SqlBaseType::kString && right.base() == SqlBaseType::kString)
    return SqlType::string();
  if (!left.is_numeric() || !right.is_numeric())
    throw SqlTypeError(std::string("Unsupported arithmetic types. ") + left.base_name() + " " +
                       right.base_name());
  SqlBaseType wider =
      numeric_rank(left.base()) >= numeric_rank(right.base()) ? left.base() : right.base();
  if (wider != SqlBaseType::kDecimal) return SqlType::of(wider);
  auto l = as_decimal(left), r = as_decimal(right);
  int p1 = l->precision(), s1 = l->scale(), p2 = r->precision(), s2 = r->scale();
  switch (op) {
    case '+':
    case '-': {
      int s = std::max(s1, s2);
      return SqlType::decimal(s + std::max(p1 - s1, p2 - s2) + 1, s);
    }
    case '*':
      return SqlType::decimal(p1 + p2 + 1, s1 + s2);
    case '/': {
      int s = std::max(6, s1 + p2 + 1);
      return SqlType::decimal(p1 - s1 + s2 + s, s);
    }
    case '%': {
      int s = std::max(s1, s2);
      return SqlType::decimal(std::min(p1 - s1, p2 - s2) + s, s);
    }
    default:
      throw SqlTypeError(std::string("Unknown arithmetic operator: ") + op);
  }
}

}  // namespace oxbow::sql
