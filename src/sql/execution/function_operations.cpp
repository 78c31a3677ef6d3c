// LIKE, CAST, subscripts, struct fields, constructors and the scalar functions.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "sql/execution/operations.h"

namespace oxbow::sql::ops {

namespace {

using Kind = Value::Kind;

// A failed CAST: ksqlDB's generated Java throws, which fails the whole expression.
size_t fail(Frame& f, Value& out, const std::string& message) {
  if (f.error.empty()) f.error = message;
  out.set_null();
  return kAbort;
}

// `%` any run, `_` one character, `escape` before either takes it literally.
bool like_match(const std::string& s, size_t si, const std::string& p, size_t pi, char escape) {
  while (pi < p.size()) {
    char c = p[pi];
    if (escape && c == escape && pi + 1 < p.size()) {
      if (si >= s.size() || s[si] != p[pi + 1]) return false;
      si++, pi += 2;
    } else if (c == '%') {
      for (size_t k = si; k <= s.size(); ++k)
        if (like_match(s, k, p, pi + 1, escape)) return true;
      return false;
    } else if (c == '_' || (si < s.size() && s[si] == c)) {
      if (si >= s.size()) return false;
      si++, pi++;
    } else {
      return false;
    }
  }
  return si == s.size();
}

__int128 pow10(int n) {
  __int128 v = 1;
  for (int k = 0; k < n; ++k) v *= 10;
  return v;
}

}  // namespace

// Java's Double.toString, which ksqlDB's CAST to STRING prints: 1.5, 100.0, 1.0E10, 1.0E-4.
std::string java_double(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  double a = std::fabs(d);
  char buffer[64];
  if (a == 0 || (a >= 1e-3 && a < 1e7)) {
    auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::fixed);
    (void)error;
    std::string s(buffer, end);
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
  }
  auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific);
  (void)error;
  std::string s(buffer, end);  // 1e+10, 1.5e-04
  size_t e = s.find('e');
  std::string mantissa = s.substr(0, e), exponent = s.substr(e + 1);
  if (mantissa.find('.') == std::string::npos) mantissa += ".0";
  int n = std::stoi(exponent);
  return mantissa + "E" + std::to_string(n);
}

namespace {

bool parse_decimal(const std::string& text, int scale, __int128& out) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  __int128 digits = 0;
  int fraction = -1;
  bool any = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.' && fraction < 0) {
      fraction = 0;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    any = true;
    if (fraction >= 0 && fraction == scale) {
      if (c >= '5') digits += 1;  // half up on the first digit dropped
      break;
    }
    digits = digits * 10 + (c - '0');
    if (fraction >= 0) ++fraction;
  }
  if (!any) return false;
  int have = std::max(fraction, 0);
  digits *= pow10(scale - have);
  out = negative ? -digits : digits;
  return true;
}

}  // namespace

// ---- the calendar and the ISO texts of CAST

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

int64_t floor_mod(int64_t a, int64_t b) {
  return a - floor_div(a, b) * b;
}

// Eras of 400 years (146097 days) repeat the Gregorian calendar exactly; counting years from
// March makes February's variable length the year's last day.
int64_t days_from_civil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  int64_t era = floor_div(year, 400);
  int64_t year_of_era = year - era * 400;
  int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

CivilDate civil_from_days(int64_t days) {
  days += 719468;
  int64_t era = floor_div(days, 146097);
  int64_t day_of_era = days - era * 146097;
  int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  int64_t mp = (5 * day_of_year + 2) / 153;
  int day = static_cast<int>(day_of_year - (153 * mp + 2) / 5 + 1);
  int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {year_of_era + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

int days_in_month(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = floor_mod(year, 4) == 0 && (floor_mod(year, 100) != 0 || floor_mod(year, 400) == 0);
  return month == 2 && leap ? 29 : kDays[month - 1];
}

namespace {

void append_padded(std::string& out, int64_t v, int width) {
  if (v < 0) out += '-', v = -v;
  std::string digits = std::to_string(v);
  if (static_cast<int>(digits.size()) < width) out.append(width - digits.size(), '0');
  out += digits;
}

// A cursor over ISO text with Java's messages for what it cannot read.
struct IsoReader {
  explicit IsoReader(std::string_view text) : s(text) {}
  std::string_view s;
  size_t at = 0;
  std::string error;

  bool digits(int n, int& out) {
    out = 0;
    for (int k = 0; k < n; ++k, ++at) {
      if (at >= s.size() || !std::isdigit(static_cast<unsigned char>(s[at]))) return bad_index();
      out = out * 10 + (s[at] - '0');
    }
    return true;
  }
  bool accept(char c) {
    if (at < s.size() && s[at] == c) return ++at, true;
    return false;
  }
  bool bad_index() {
    error = "Text '" + std::string(s) + "' could not be parsed at index " + std::to_string(at);
    return false;
  }
  bool bad_value(const char* field, int low, const char* high, int v) {
    error = "Text '" + std::string(s) + "' could not be parsed: Invalid value for " + field +
            " (valid values " + std::to_string(low) + " - " + high + "): " + std::to_string(v);
    return false;
  }
  bool in_range(const char* field, int low, int high, int v) {
    return (v >= low && v <= high) || bad_value(field, low, std::to_string(high).c_str(), v);
  }
  // yyyy[-MM[-dd]].
  bool date(int64_t& days) {
    int y = 0, m = 1, d = 1;
    if (!digits(4, y)) return false;
    if (accept('-') && (!digits(2, m) || (accept('-') && !digits(2, d)))) return false;
    if (!in_range("MonthOfYear", 1, 12, m)) return false;
    if (d < 1 || d > 31) return bad_value("DayOfMonth", 1, "28/31", d);
    if (d > days_in_month(y, m)) {
      static constexpr const char* kMonths[] = {"JANUARY",   "FEBRUARY", "MARCH",    "APRIL",
                                                "MAY",       "JUNE",     "JULY",     "AUGUST",
                                                "SEPTEMBER", "OCTOBER",  "NOVEMBER", "DECEMBER"};
      error = "Text '" + std::string(s) + "' could not be parsed: Invalid date '" + kMonths[m - 1] +
              " " + std::to_string(d) + "'";
      return false;
    }
    days = days_from_civil(y, m, d);
    return true;
  }
  // HH[:mm[:ss[.fraction]]]; `minutes_required` for a lone TIME, as Java's LocalTime wants.
  bool time(int64_t& ms, bool minutes_required) {
    int h = 0, m = 0, sec = 0, fraction = 0;
    if (!digits(2, h)) return false;
    if (minutes_required && (at >= s.size() || s[at] != ':')) return bad_index();
    if (accept(':') && !digits(2, m)) return false;
    if (accept(':')) {
      if (!digits(2, sec)) return false;
      if (accept('.')) {
        size_t start = at;
        for (int scale = 100; at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]));
             ++at, scale /= 10)
          fraction += (s[at] - '0') * scale;
        if (at == start || at - start > 9) return bad_index();
      }
    }
    if (!in_range("HourOfDay", 0, 23, h) || !in_range("MinuteOfHour", 0, 59, m) ||
        !in_range("SecondOfMinute", 0, 59, sec))
      return false;
    ms = ((h * 60 + m) * 60 + sec) * 1000LL + fraction;
    return true;
  }
  // Z, or +HH[[:]mm]: the offset in ms east of UTC.
  bool zone(int64_t& offset_ms) {
    offset_ms = 0;
    if (accept('Z')) return true;
    if (at >= s.size() || (s[at] != '+' && s[at] != '-')) return bad_index();
    int sign = s[at++] == '-' ? -1 : 1, h = 0, m = 0;
    if (!digits(2, h)) return false;
    accept(':');
    if (at < s.size() && !digits(2, m)) return false;
    offset_ms = sign * (h * 60 + m) * 60'000LL;
    return true;
  }
  bool end() { return at == s.size() || bad_index(); }
};

}  // namespace

void append_date_text(std::string& out, int64_t days) {
  CivilDate c = civil_from_days(days);
  append_padded(out, c.year, 4);
  out += '-';
  append_padded(out, c.month, 2);
  out += '-';
  append_padded(out, c.day, 2);
}

void append_time_text(std::string& out, int64_t ms_of_day) {
  int64_t seconds = floor_div(ms_of_day, 1000);
  append_padded(out, seconds / 3600, 2);
  out += ':';
  append_padded(out, seconds / 60 % 60, 2);
  if (seconds % 60 == 0) return;  // Java's LocalTime leaves out zero seconds
  out += ':';
  append_padded(out, seconds % 60, 2);
}

void append_timestamp_text(std::string& out, int64_t epoch_ms) {
  append_date_text(out, floor_div(epoch_ms, 86'400'000));
  int64_t ms = floor_mod(epoch_ms, 86'400'000);
  out += 'T';
  append_padded(out, ms / 3'600'000, 2);
  out += ':';
  append_padded(out, ms / 60'000 % 60, 2);
  out += ':';
  append_padded(out, ms / 1000 % 60, 2);
  out += '.';
  append_padded(out, ms % 1000, 3);
}

bool parse_date_text(std::string_view s, int64_t& days, std::string& error) {
  IsoReader r(s);
  if (r.date(days) && r.end()) return true;
  error = "Failed to parse date '" + std::string(s) + "': " + r.error;
  return false;
}

bool parse_time_text(std::string_view s, int64_t& ms_of_day, std::string& error) {
  IsoReader r(s);
  if (r.time(ms_of_day, true) && r.end()) return true;
  error = "Failed to parse time '" + std::string(s) + "': " + r.error;
  return false;
}

bool parse_timestamp_text(std::string_view s, int64_t& epoch_ms, std::string& error) {
  IsoReader r(s);
  int64_t days = 0, ms = 0, offset = 0;
  bool ok = r.date(days) && (!r.accept('T') || r.time(ms, false)) &&
            (r.at == s.size() || r.zone(offset)) && r.end();
  if (ok) {
    epoch_ms = days * 86'400'000 + ms - offset;
    return true;
  }
  error = "Failed to parse timestamp '" + std::string(s) + "': " + r.error;
  return false;
}

// The text CAST(x AS STRING) gives (docs/sql/ksqldb-facts.md §2.4).
std::string cast_text(const Value& v) {
  switch (v.kind()) {
    case Kind::kDouble:
      return java_double(v.dbl());
    case Kind::kDecimal:
      return decimal_text(v.unscaled(), v.scale());
    case Kind::kString:
    case Kind::kBytes:
      return v.text();
    case Kind::kArray:
    case Kind::kMap:
    case Kind::kStruct: {
      std::string out = v.kind() == Kind::kArray ? "[" : v.kind() == Kind::kMap ? "{" : "Struct{";
      const auto& items = v.items();
      for (size_t k = 0; k < items.size(); ++k) {
        if (v.kind() == Kind::kMap && k % 2 == 1) {
          out += "=" + cast_text(items[k]);
          continue;
        }
        out += (k == 0 ? "" : v.kind() == Kind::kStruct ? "," : ", ") + cast_text(items[k]);
      }
      return out + (v.kind() == Kind::kArray ? "]" : "}");
    }
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp: {
      std::string out;
      if (v.kind() == Kind::kDate) append_date_text(out, v.bigint());
      if (v.kind() == Kind::kTime) append_time_text(out, v.bigint());
      if (v.kind() == Kind::kTimestamp) append_timestamp_text(out, v.bigint());
      return out;
    }
    default:
      return v.debug_string();
  }
}

size_t like(const Instr& i, Frame& f, size_t pc) {
  const Value &s = f.registers[i.a], &p = f.registers[i.b];
  Value& out = f.registers[i.dst];
  if (s.is_null() || p.is_null()) return out.set_boolean(false), pc + 1;
  char escape = i.c >= 0 && !f.registers[i.c].text().empty() ? f.registers[i.c].text()[0] : 0;
  bool match = like_match(s.text(), 0, p.text(), 0, escape);
  out.set_boolean(i.data == 1 ? !match : match);
  return pc + 1;
}

namespace {

constexpr int64_t kDayMs = 86'400'000;

// ksqlDB's CAST of a STRING (CastEvaluator) reads the text after Java's String.trim(), which
// drops every character up to ' ' from both ends.
std::string_view java_trim(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

// SqlBooleans.parseBoolean: TRUE for a non-empty prefix of "true" or "yes" in any case, else
// FALSE (never an error).
bool parse_sql_boolean(std::string_view s) {
  auto prefix_of = [&](std::string_view word) {
    if (s.empty() || s.size() > word.size()) return false;
    for (size_t k = 0; k < s.size(); ++k)
      if (std::tolower(static_cast<unsigned char>(s[k])) != word[k]) return false;
    return true;
  };
  return prefix_of("true") || prefix_of("yes");
}

// Integer.parseInt / Long.parseLong: an optional sign and decimal digits, within the type's
// range (else Java throws NumberFormatException).
bool parse_java_integer(std::string_view s, bool is_int, int64_t& out) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (error != std::errc() || end != s.data() + s.size() || s.empty()) return false;
  return !is_int || (out >= INT32_MIN && out <= INT32_MAX);
}

// SqlDoubles.parseDouble: Java's Double.parseDouble (a sign, a trailing d or f allowed), refusing
// what is not finite.
bool parse_java_double(std::string_view s, double& out) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);
  if (s.size() > 1 && std::strchr("dDfF", s.back()) &&
      (std::isdigit(static_cast<unsigned char>(s[s.size() - 2])) || s[s.size() - 2] == '.'))
    s.remove_suffix(1);
  for (char c : s)  // from_chars also reads inf, nan and hex, which Java spells otherwise
    if (!std::isdigit(static_cast<unsigned char>(c)) && !std::strchr("+-.eE", c)) return false;
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
  return error == std::errc() && end == s.data() + s.size() && !s.empty() && std::isfinite(out);
}

// STRING (ISO text), DATE, TIME or TIMESTAMP to `to`, one of the last three.
size_t cast_to_time(const Value& v, Kind to, Frame& f, Value& out, size_t pc) {
  int64_t n = v.bigint();
  std::string error;
  if (v.kind() == Kind::kString) {
    std::string_view text = java_trim(v.text());
    bool ok = to == Kind::kDate   ? parse_date_text(text, n, error)
              : to == Kind::kTime ? parse_time_text(text, n, error)
                                  : parse_timestamp_text(text, n, error);
    if (!ok) return fail(f, out, error);
  } else if (v.kind() == Kind::kTimestamp && to == Kind::kDate) {
    n = floor_div(n, kDayMs);
  } else if (v.kind() == Kind::kTimestamp && to == Kind::kTime) {
    n = floor_mod(n, kDayMs);
  } else if (v.kind() == Kind::kDate && to == Kind::kTimestamp) {
    n *= kDayMs;
  } else if (v.kind() != to) {
    return fail(f, out, "Cast not supported yet");
  }
  out.set_time(to, n);
  return pc + 1;
}

}  // namespace

size_t cast(const Instr& i, Frame& f, size_t pc) {
  const Value& v = f.registers[i.a];
  Value& out = f.registers[i.dst];
  if (v.is_null()) return out.set_null(), pc + 1;
  auto to = static_cast<Kind>(i.data);
  bool number = v.kind() == Kind::kInteger || v.kind() == Kind::kBigint ||
                v.kind() == Kind::kDouble || v.kind() == Kind::kDecimal;
  const std::string& text = v.text();
  switch (to) {
    case Kind::kString:
      out.set_string(cast_text(v));
      return pc + 1;
    case Kind::kBoolean:
      if (v.kind() == Kind::kString) {
        out.set_boolean(parse_sql_boolean(java_trim(text)));
      } else {
        out.set_boolean(v.boolean());
      }
      return pc + 1;
    case Kind::kInteger:
    case Kind::kBigint: {
      int64_t n = 0;
      if (number) {
        n = v.kind() == Kind::kDouble    ? static_cast<int64_t>(v.dbl())
            : v.kind() == Kind::kDecimal ? static_cast<int64_t>(v.unscaled() / pow10(v.scale()))
                                         : v.as_int64();
      } else if (!parse_java_integer(java_trim(text), to == Kind::kInteger, n)) {
        return fail(f, out, "Cannot cast '" + text + "' to a number");
      }
      if (to == Kind::kInteger)
        out.set_integer(static_cast<int32_t>(n));
      else
        out.set_bigint(n);
      return pc + 1;
    }
    case Kind::kDouble: {
      if (number) return out.set_double(v.as_double()), pc + 1;
      double d = 0;
      if (!parse_java_double(java_trim(text), d))
        return fail(f, out, "Cannot cast '" + text + "' to DOUBLE");
      out.set_double(d);
      return pc + 1;
    }
    case Kind::kDecimal: {
      __int128 unscaled = 0;
      std::string digits = v.kind() == Kind::kString    ? text
                           : v.kind() == Kind::kDouble  ? java_double(v.dbl())
                           : v.kind() == Kind::kDecimal ? decimal_text(v.unscaled(), v.scale())
                                                        : std::to_string(v.as_int64());
      if (digits.find('E') != std::string::npos || !parse_decimal(digits, i.scale, unscaled))
        return fail(f, out, "Cannot cast '" + digits + "' to DECIMAL");
      __int128 limit = pow10(i.precision);
      if (unscaled >= limit || unscaled <= -limit)
        return fail(f, out, "Numeric field overflow: " + digits);
      out.set_decimal(unscaled, i.scale);
      return pc + 1;
    }
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
      return cast_to_time(v, to, f, out, pc);
    default:
      if (v.kind() == to) return out = v, pc + 1;
      return fail(f, out, "Cast not supported yet");
  }
}

size_t subscript(const Instr& i, Frame& f, size_t pc) {
  const Value &container = f.registers[i.a], &index = f.registers[i.b];
  Value& out = f.registers[i.dst];
  if (container.is_null() || index.is_null()) return out.set_null(), pc + 1;
  const auto& items = container.items();
  if (container.kind() == Kind::kArray) {
    // From 1; a negative index counts from the end; outside the array is NULL.
    int64_t n = index.as_int64(), size = static_cast<int64_t>(items.size());
    int64_t at = n > 0 ? n - 1 : size + n;
    if (n == 0 || at < 0 || at >= size) return out.set_null(), pc + 1;
    out = items[static_cast<size_t>(at)];
    return pc + 1;
  }
  for (size_t k = 0; k + 1 < items.size(); k += 2)
    if (!items[k].is_null() && compare_values(items[k], index) == 0) {
      out = items[k + 1];
      return pc + 1;
    }
  out.set_null();
  return pc + 1;
}

size_t field(const Instr& i, Frame& f, size_t pc) {
  const Value& s = f.registers[i.a];
  Value& out = f.registers[i.dst];
  if (s.is_null()) return out.set_null(), pc + 1;
  out = s.items()[static_cast<size_t>(i.data)];
  return pc + 1;
}

size_t make_container(const Instr& i, Frame& f, size_t pc) {
  auto items = std::make_shared<std::vector<Value>>();
  for (int r : (*f.lists)[i.data]) items->push_back(f.registers[r]);
  f.registers[i.dst].set_items(static_cast<Kind>(i.scale), std::move(items));
  return pc + 1;
}

}  // namespace oxbow::sql::ops

namespace oxbow::sql {

// What an instruction calling a function needs besides its registers.
struct CallSite {
  ScalarImplementation implementation = nullptr;
  bool sees_nulls = false;
  SqlTypePtr result;
  std::vector<SqlTypePtr> args;
};

const SqlTypePtr& FunctionCall::arg_type(size_t k) const {
  return site_.args[k];
}

const SqlTypePtr& FunctionCall::result_type() const {
  return site_.result;
}

void FunctionCall::fail(const std::string& message) {
  if (frame_.error.empty()) frame_.error = message;
  out_.set_null();
  failed_ = true;
}

}  // namespace oxbow::sql

namespace oxbow::sql::ops {

void set_call_site(Instr& i, const ResolvedFunction& resolved,
                   const std::vector<SqlTypePtr>& args) {
  i.call = std::make_shared<const CallSite>(CallSite{
      resolved.variant->implementation, resolved.variant->sees_nulls, resolved.type, args});
}

size_t call_function(const Instr& i, Frame& f, size_t pc) {
  const std::vector<int>& args = (*f.lists)[i.data];
  const CallSite& site = *i.call;
  Value& out = f.registers[i.dst];
  if (!site.sees_nulls)
    for (int r : args)
      if (f.registers[r].is_null()) return out.set_null(), pc + 1;
  FunctionCall call(f, args, site, out);
  site.implementation(call);
  return call.failed() ? kAbort : pc + 1;
}

}  // namespace oxbow::sql::ops
