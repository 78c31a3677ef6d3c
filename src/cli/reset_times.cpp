#include "cli/reset_times.h"

#include <charconv>
#include <ctime>
#include <regex>
#include <string>

namespace oxbow::cli {
namespace {

// Reads fixed-width numbers and literal characters off the front of a string.
struct Cursor {
  std::string_view text;
  size_t pos = 0;

  bool digits(size_t count, int& out) {
    if (pos + count > text.size()) return false;
    out = 0;
    for (size_t i = pos; i < pos + count; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    pos += count;
    return true;
  }
  bool accept(char c) {
    if (pos >= text.size() || text[pos] != c) return false;
    ++pos;
    return true;
  }
  bool done() const { return pos == text.size(); }
};

struct CivilTime {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, millis = 0;
};

bool read_date_and_time(Cursor& in, CivilTime& t) {
  return in.digits(4, t.year) && in.accept('-') && in.digits(2, t.month) && in.accept('-') &&
         in.digits(2, t.day) && in.accept('T') && in.digits(2, t.hour) && in.accept(':') &&
         in.digits(2, t.minute) && in.accept(':') && in.digits(2, t.second);
}

// ".sss": milliseconds count; digits past the third are finer than any record timestamp.
bool read_fraction(Cursor& in, CivilTime& t) {
  if (!in.accept('.')) return true;
  size_t count = 0;
  for (int digit = 0; in.digits(1, digit); ++count)
    if (count < 3) t.millis = t.millis * 10 + digit;
  for (size_t i = count; i < 3; ++i) t.millis *= 10;
  return count > 0;
}

// "Z", "+hh", "+hh:mm" or "+hhmm" (or '-'); nullopt in `minutes` when there is no zone.
bool read_zone(Cursor& in, std::optional<int>& minutes) {
  if (in.accept('Z')) {
    minutes = 0;
    return true;
  }
  const bool west = in.accept('-');
  if (!west && !in.accept('+')) return true;
  int hours = 0, mins = 0;
  if (!in.digits(2, hours)) return false;
  const bool colon = in.accept(':');
  if ((colon || !in.done()) && !in.digits(2, mins)) return false;
  if (hours > 18 || mins > 59) return false;
  minutes = (west ? -1 : 1) * (hours * 60 + mins);
  return true;
}

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

bool valid(const CivilTime& t) {
  return t.month >= 1 && t.month <= 12 && t.day >= 1 && t.day <= days_in_month(t.year, t.month) &&
         t.hour <= 23 && t.minute <= 59 && t.second <= 59;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::optional<int64_t> epoch_seconds(const CivilTime& t, std::optional<int> zone_minutes) {
  if (zone_minutes)
    return days_from_civil(t.year, t.month, t.day) * 86'400 + t.hour * 3'600 + t.minute * 60 +
           t.second - int64_t{*zone_minutes} * 60;
  std::tm local{};
  local.tm_year = t.year - 1900;
  local.tm_mon = t.month - 1;
  local.tm_mday = t.day;
  local.tm_hour = t.hour;
  local.tm_min = t.minute;
  local.tm_sec = t.second;
  local.tm_isdst = -1;  // whether summer time applies is the time zone's to say
  const std::time_t seconds = std::mktime(&local);
  if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
  return seconds;
}

// Adds `text` (an optionally signed integer) times `unit_ms` to `total`; false on overflow.
bool add_scaled(int64_t& total, std::string text, int64_t unit_ms) {
  if (text.empty()) return true;
  if (text.front() == '+') text.erase(0, 1);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return false;
  int64_t scaled = 0;
  return !__builtin_mul_overflow(value, unit_ms, &scaled) &&
         !__builtin_add_overflow(total, scaled, &total);
}

// A fraction of a second ("5" of "1.5S") in ms, negative when the seconds are.
int64_t fraction_ms(const std::string& seconds, std::string digits) {
  digits.resize(3, '0');
  const int64_t ms = std::stoll(digits);
  return !seconds.empty() && seconds.front() == '-' ? -ms : ms;
}

}  // namespace

std::optional<int64_t> parse_reset_datetime(std::string_view text) {
  Cursor in{text};
  CivilTime t;
  std::optional<int> zone_minutes;
  if (!read_date_and_time(in, t) || !read_fraction(in, t) || !read_zone(in, zone_minutes) ||
      !in.done() || !valid(t))
    return std::nullopt;
  const auto seconds = epoch_seconds(t, zone_minutes);
  if (!seconds) return std::nullopt;
  return *seconds * 1'000 + t.millis;
}

std::optional<int64_t> parse_reset_duration(std::string_view text) {
  // java.time.Duration's grammar: days, then after a 'T' hours, minutes and seconds.
  static const std::regex kPattern{
      R"(([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?)",
      std::regex::icase};
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, kPattern)) return std::nullopt;
  const bool any_part = m[2].matched || m[4].matched || m[5].matched || m[6].matched;
  if (!any_part || m[3].length() == 1) return std::nullopt;  // "P" or "PT" alone says nothing
  int64_t total = 0;
  if (!add_scaled(total, m[2].str(), 86'400'000) || !add_scaled(total, m[4].str(), 3'600'000) ||
      !add_scaled(total, m[5].str(), 60'000) || !add_scaled(total, m[6].str(), 1'000))
    return std::nullopt;
  if (m[7].matched && __builtin_add_overflow(total, fraction_ms(m[6].str(), m[7].str()), &total))
    return std::nullopt;
  if (m[1].str() == "-" && total == INT64_MIN) return std::nullopt;
  return m[1].str() == "-" ? -total : total;
}

}  // namespace oxbow::cli
