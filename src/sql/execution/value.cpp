#include "sql/execution/value.h"

#include <charconv>
#include <cmath>

namespace oxbow::sql {

std::string java_double_text(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  double magnitude = std::fabs(d);
  bool plain = magnitude == 0 || (magnitude >= 1e-3 && magnitude < 1e7);
  char buffer[64];
  auto written = std::to_chars(buffer, buffer + sizeof buffer, d,
                               plain ? std::chars_format::fixed : std::chars_format::scientific);
  std::string text(buffer, written.ptr);
  if (plain) return text.find('.') == std::string::npos ? text + ".0" : text;
  size_t e = text.find('e');  // 1.5e-04: Java writes 1.5E-4
  std::string digits = text.substr(0, e);
  if (digits.find('.') == std::string::npos) digits += ".0";
  return digits + "E" + std::to_string(std::stoi(text.substr(e + 1)));
}

std::string decimal_text(__int128 unscaled, int scale) {
  bool negative = unscaled < 0;
  unsigned __int128 magnitude =
      negative ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1 : unscaled;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude > 0);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale)
      digits.insert(0, static_cast<size_t>(scale) - digits.size() + 1, '0');
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return negative ? "-" + digits : digits;
}

double Value::as_double() const {
  switch (kind_) {
    case Kind::kInteger:
      return integer_;
    case Kind::kDouble:
      return double_;
    case Kind::kDecimal: {
      double v = static_cast<double>(decimal_);
      for (int i = 0; i < scale_; ++i) v /= 10;
      return v;
    }
    default:
      return static_cast<double>(bigint_);
  }
}

int64_t Value::as_int64() const {
  return kind_ == Kind::kInteger ? integer_ : bigint_;
}

std::string Value::debug_string() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBoolean:
      return boolean_ ? "true" : "false";
    case Kind::kInteger:
      return std::to_string(integer_);
    case Kind::kBigint:
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
      return std::to_string(bigint_);
    case Kind::kDouble: {
      char buffer[64];
      auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, double_);
      (void)error;
      return std::string(buffer, end);
    }
    case Kind::kDecimal:
      return decimal_text(decimal_, scale_);
    case Kind::kString:
    case Kind::kBytes:
      return "'" + text_ + "'";
    case Kind::kArray:
    case Kind::kMap:
    case Kind::kStruct: {
      std::string out = kind_ == Kind::kArray ? "[" : kind_ == Kind::kMap ? "{" : "Struct{";
      const auto& v = *items_;
      for (size_t i = 0; i < v.size(); ++i) {
        if (kind_ == Kind::kMap && i % 2 == 1) {
          out += "=" + v[i].debug_string();
          continue;
        }
        out += (i == 0 ? "" : ", ") + v[i].debug_string();
      }
      return out + (kind_ == Kind::kArray ? "]" : "}");
    }
  }
  return "?";
}

}  // namespace oxbow::sql
