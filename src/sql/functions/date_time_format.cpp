#include "sql/functions/date_time_format.h"

#include <array>
#include <cctype>
#include <map>
#include <memory>

#include "sql/execution/operations.h"

namespace oxbow::sql::functions {

namespace {

using Item = DateTimePattern::Item;

// Java's ChronoField names, as its messages print them.
const char* field_name(char letter) {
  switch (letter) {
    case 'y':
      return "YearOfEra";
    case 'u':
      return "Year";
    case 'M':
    case 'L':
      return "MonthOfYear";
    case 'd':
      return "DayOfMonth";
    case 'D':
      return "DayOfYear";
    case 'E':
      return "DayOfWeek";
    case 'a':
      return "AmPmOfDay";
    case 'H':
      return "HourOfDay";
    case 'k':
      return "ClockHourOfDay";
    case 'K':
      return "HourOfAmPm";
    case 'h':
      return "ClockHourOfAmPm";
    case 'm':
      return "MinuteOfHour";
    case 's':
      return "SecondOfMinute";
    case 'A':
      return "MilliOfDay";
    default:
      return "NanoOfSecond";
  }
}

bool is_date_letter(char c) {
  return std::string_view("yuMLdDE").find(c) != std::string_view::npos;
}
bool is_time_letter(char c) {
  return std::string_view("aHkKhmsSnA").find(c) != std::string_view::npos;
}
// The most letters Java takes in a run, 0 for any number; -1: a letter not supported here.
int max_count(char c) {
  switch (c) {
    case 'y':
    case 'u':
    case 'n':
    case 'A':
      return 0;
    case 'M':
    case 'L':
    case 'E':
    case 'Z':
    case 'X':
    case 'x':
      return 5;
    case 'd':
    case 'H':
    case 'k':
    case 'K':
    case 'h':
    case 'm':
    case 's':
      return 2;
    case 'D':
      return 3;
    case 'a':
      return 1;
    case 'S':
      return 9;
    case 'z':
    case 'O':
    case 'V':
      return 4;
    default:
      return -1;
  }
}

void pad(std::string& out, int64_t v, int width) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  if (v < 0) out += '-';
  if (static_cast<int>(digits.size()) < width) out.append(width - digits.size(), '0');
  out += digits;
}

// Offsets as Z, X, x and O print them (`seconds` east of UTC).
void append_offset(std::string& out, char letter, int count, int64_t seconds) {
  if (seconds == 0 && letter == 'X') return void(out += 'Z');
  if (letter == 'Z' && count == 5 && seconds == 0) return void(out += 'Z');
  if (letter == 'O' || (letter == 'Z' && count == 4)) {
    out += "GMT";
    if (seconds == 0) return;
  }
  out += seconds < 0 ? '-' : '+';
  int64_t a = seconds < 0 ? -seconds : seconds, h = a / 3600, m = a / 60 % 60, s = a % 60;
  if (letter == 'O' && count == 1) {
    out += std::to_string(h);
    if (m || s) out += ":", pad(out, m, 2);
    return;
  }
  pad(out, h, 2);
  bool colon = letter == 'O' || (letter == 'Z' && count >= 4) || count == 3 || count == 5;
  if ((letter == 'X' || letter == 'x') && count == 1 && m == 0) return;
  if (colon) out += ':';
  pad(out, m, 2);
  if (s && (letter == 'Z' || count >= 4)) {
    if (colon) out += ':';
    pad(out, s, 2);
  }
}

}  // namespace

// ---- compiling

const DateTimePattern* DateTimePattern::get(std::string_view pattern, std::string& error) {
  // ksqlDB caches 1000 formatters; a thread's own map needs no lock and no allocation to find one.
  thread_local std::map<std::string, std::unique_ptr<DateTimePattern>, std::less<>> cache;
  thread_local std::map<std::string, std::string, std::less<>> errors;
  if (auto it = cache.find(pattern); it != cache.end()) return it->second.get();
  if (auto it = errors.find(pattern); it != errors.end()) return error = it->second, nullptr;
  if (cache.size() + errors.size() > 1000) cache.clear(), errors.clear();
  auto compiled = std::make_unique<DateTimePattern>();
  std::string message;
  if (!compiled->compile(pattern, message)) {
    error = message;
    errors.emplace(std::string(pattern), message);
    return nullptr;
  }
  return cache.emplace(std::string(pattern), std::move(compiled)).first->second.get();
}

bool DateTimePattern::compile(std::string_view p, std::string& error) {
  int depth = 0;
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      size_t run = p.find_first_not_of(c, i);
      int count = static_cast<int>((run == std::string_view::npos ? p.size() : run) - i);
      int most = max_count(c);
      if (most < 0 && std::string_view("GQqYwWecFNvgpB").find(c) != std::string_view::npos)
        return error = std::string("Pattern letter '") + c + "' is not supported", false;
      if (most < 0) return error = std::string("Unknown pattern letter: ") + c, false;
      if (most > 0 && count > most)
        return error = std::string("Too many pattern letters: ") + c, false;
      if (c == 'V' && count != 2) return error = "Pattern letter count must be 2: V", false;
      if (c == 'O' && count != 1 && count != 4)
        return error = "Pattern letter count must be 1 or 4: O", false;
      items_.push_back({Item::kLetter, c, count, {}});
      i += static_cast<size_t>(count);
    } else if (c == '\'') {
      std::string literal;
      size_t k = i + 1;
      for (;; ++k) {
        if (k >= p.size())
          return error = "Pattern ends with an incomplete string literal: " + std::string(p), false;
        if (p[k] != '\'') {
          literal += p[k];
        } else if (k + 1 < p.size() && p[k + 1] == '\'') {
          literal += '\'', ++k;
        } else {
          break;
        }
      }
      if (k == i + 1) literal = "'";  // '' outside a literal is a quote
      items_.push_back({Item::kLiteral, 0, 0, literal});
      i = k + 1;
    } else if (c == '{' || c == '}' || c == '#') {
      return error = std::string("Pattern includes reserved character: '") + c + "'", false;
    } else if (c == '[' || c == ']') {
      depth += c == '[' ? 1 : -1;
      if (depth < 0) return error = "Pattern invalid as it contains ] without previous [", false;
      items_.push_back({c == '[' ? Item::kOptionalStart : Item::kOptionalEnd, 0, 0, {}});
      ++i;
    } else {
      items_.push_back({Item::kLiteral, 0, 0, std::string(1, c)});
      ++i;
    }
  }
  for (; depth > 0; --depth) items_.push_back({Item::kOptionalEnd, 0, 0, {}});
  return true;
}

// ---- formatting

namespace {

// A date letter (y u M L d D E) of the day `days`, `n` letters long.
void append_date_field(std::string& out, char letter, int n, int64_t days) {
  ops::CivilDate c = ops::civil_from_days(days);
  auto text = [&](const char* name) {
    out += std::string_view(name).substr(0, n <= 3 ? 3 : n == 5 ? 1 : 9);  // Jan, January, J
  };
  switch (letter) {
    case 'y':
    case 'u': {
      int64_t year = letter == 'y' && c.year <= 0 ? 1 - c.year : c.year;  // y: of the era
      return n == 2 ? pad(out, ops::floor_mod(year, 100), 2) : pad(out, year, n);
    }
    case 'M':
    case 'L':
      return n <= 2 ? pad(out, c.month, n) : text(kMonthNames[c.month - 1]);
    case 'd':
      return pad(out, c.day, n);
    case 'D':
      return pad(out, days - ops::days_from_civil(c.year, 1, 1) + 1, n);
    default:                                                // E
      return text(kDayNames[ops::floor_mod(days + 3, 7)]);  // 1970-01-01 was a Thursday
  }
}

// A time letter (a H k K h m s S n A) of the time of day `ms`, `n` letters long.
void append_time_field(std::string& out, char letter, int n, int64_t ms) {
  int64_t hour = ms / 3'600'000;
  switch (letter) {
    case 'a':
      out += hour < 12 ? "AM" : "PM";
      return;
    case 'H':
      return pad(out, hour, n);
    case 'k':
      return pad(out, hour == 0 ? 24 : hour, n);
    case 'K':
      return pad(out, hour % 12, n);
    case 'h':
      return pad(out, hour % 12 == 0 ? 12 : hour % 12, n);
    case 'm':
      return pad(out, ms / 60'000 % 60, n);
    case 's':
      return pad(out, ms / 1000 % 60, n);
    case 'S': {  // the fraction's first n digits
      std::string nanos;
      pad(nanos, ms % 1000 * 1'000'000, 9);
      out += nanos.substr(0, static_cast<size_t>(n));
      return;
    }
    case 'n':
      return pad(out, ms % 1000 * 1'000'000, n);
    default:  // A
      return pad(out, ms, n);
  }
}

}  // namespace

bool DateTimePattern::format(std::string& out, int64_t days, int64_t ms, bool has_date,
                             bool has_time, const TimeZone* zone, int64_t utc_ms,
                             std::string& error) const {
  for (const Item& i : items_) {
    if (i.kind == Item::kLiteral) out += i.literal;
    if (i.kind != Item::kLetter) continue;
    char l = i.letter;
    // What Java's LocalDate, LocalTime and ZonedDateTime refuse to give.
    if ((is_date_letter(l) && !has_date) || (is_time_letter(l) && !has_time))
      return error = std::string("Unsupported field: ") + field_name(l), false;
    bool zone_letter = std::string_view("zVZXxO").find(l) != std::string_view::npos;
    if (!zone && zone_letter)
      return error = l == 'z' || l == 'V' ? "Unable to extract ZoneId from temporal"
                                          : "Unsupported field: OffsetSeconds",
             false;
    if (is_date_letter(l))
      append_date_field(out, l, i.count, days);
    else if (is_time_letter(l))
      append_time_field(out, l, i.count, ms);
    else if (l == 'z')
      out += i.count == 4 ? zone->id() : zone->abbreviation(utc_ms);
    else if (l == 'V')
      out += zone->id();
    else
      append_offset(out, l, i.count, zone->offset_ms(utc_ms) / 1000);
  }
  return true;
}

}  // namespace oxbow::sql::functions
