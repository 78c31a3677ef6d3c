// Reading a text by a DateTimePattern (date_time_format.h), then resolving its fields as Java's
// SMART resolver does under ksqlDB (defaults of 1970-01-01T00:00 for what is not given).
#include <array>
#include <cctype>
#include <optional>

#include "sql/execution/operations.h"
#include "sql/functions/date_time_format.h"

namespace oxbow::sql::functions {

namespace {

using Item = DateTimePattern::Item;
using Field = std::optional<int64_t>;

constexpr std::array<const char*, 2> kAmPm = {"AM", "PM"};

bool is_numeric(const Item& i) {
  if (i.kind != Item::kLetter) return false;
  if (i.letter == 'M' || i.letter == 'L') return i.count <= 2;
  return std::string_view("yudDHkKhmsSnA").find(i.letter) != std::string_view::npos;
}

bool starts_with(std::string_view text, size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (size_t k = 0; k < word.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(text[at + k])) !=
        std::tolower(static_cast<unsigned char>(word[k])))
      return false;
  return true;
}

template <size_t N>
int match_name(std::string_view text, size_t& at, const std::array<const char*, N>& names,
               bool short_forms) {
  for (int full = 1; full >= (short_forms ? 0 : 1); --full)
    for (size_t k = 0; k < N; ++k) {
      std::string_view name = names[k];
      if (!full) name = name.substr(0, 3);
      if (starts_with(text, at, name)) return at += name.size(), static_cast<int>(k);
    }
  return -1;
}

const TimeZone* zone_by_name(std::string_view text, size_t& at) {
  // Java's `z` also reads short names; these are the common ones, by the region they stand for.
  static const std::array<std::pair<const char*, const char*>, 11> kNames = {
      {{"PST", "America/Los_Angeles"},
       {"PDT", "America/Los_Angeles"},
       {"MST", "America/Denver"},
       {"MDT", "America/Denver"},
       {"CST", "America/Chicago"},
       {"CDT", "America/Chicago"},
       {"EST", "America/New_York"},
       {"EDT", "America/New_York"},
       {"CET", "Europe/Paris"},
       {"CEST", "Europe/Paris"},
       {"BST", "Europe/London"}}};
  size_t end = at;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                               std::string_view("/_+-:").find(text[end]) != std::string_view::npos))
    ++end;
  std::string_view word = text.substr(at, end - at);
  std::string error;
  const TimeZone* zone = nullptr;
  for (const auto& [name, region] : kNames)
    if (word == name) zone = TimeZone::find(region, error);
  if (!zone && !word.empty()) zone = TimeZone::find(word, error);
  if (zone) at = end;
  return zone;
}

// The fields a text gave, before resolution.
struct Fields {
  Field year_of_era, year, two_digit_year, month, day, day_of_year, weekday;
  Field hour, clock_hour, hour_of_ampm, clock_hour_of_ampm, ampm, minute, second, nanos, milli;
  std::optional<int64_t> offset_ms;
  const TimeZone* zone = nullptr;
  std::string first_date_field;
  bool has_time = false;
};

class TextReader {
 public:
  TextReader(const std::vector<Item>& items, std::string_view text) : items_(items), text_(text) {}

  // Items [begin, end) read from the text; false at the first that does not match.
  bool read(size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const Item& i = items_[k];
      if (i.kind == Item::kOptionalStart) {
        size_t close = matching_end(k);
        size_t saved_at = at;
        Fields saved = f;
        if (!read(k + 1, close)) at = saved_at, f = saved;
        k = close;
      } else if (i.kind == Item::kLiteral) {
        if (!starts_with(text_, at, i.literal)) return false;
        at += i.literal.size();
      } else if (i.kind == Item::kLetter && !letter(i, k + 1 < end && is_numeric(items_[k + 1]))) {
        return false;
      }
    }
    return true;
  }

  size_t at = 0;
  Fields f;

 private:
  size_t matching_end(size_t open) const {
    int depth = 0;
    for (size_t k = open; k < items_.size(); ++k) {
      depth += items_[k].kind == Item::kOptionalStart ? 1
               : items_[k].kind == Item::kOptionalEnd ? -1
                                                      : 0;
      if (depth == 0) return k;
    }
    return items_.size();
  }

  bool digits(size_t min, size_t max, int64_t& v) {
    size_t start = at;
    v = 0;
    while (at < text_.size() && at - start < max &&
           std::isdigit(static_cast<unsigned char>(text_[at])))
      v = v * 10 + (text_[at++] - '0');
    if (at - start >= min) return true;
    at = start;
    return false;
  }

  // Widths as Java's: two letters exactly two digits, a field followed by another numeric one
  // exactly its count (four for a year), else as many as there are.
  bool number(const Item& i, bool adjacent, int64_t& v) {
    size_t n = static_cast<size_t>(i.count);
    bool year = i.letter == 'y' || i.letter == 'u';
    if (i.letter == 'S') return digits(n, n, v);
    if (year && n == 2) return digits(2, 2, v);
    if (adjacent)
      return year ? digits(std::max<size_t>(n, 4), std::max<size_t>(n, 4), v)
                  : digits(n, n == 1 ? 2 : n, v);
    if (year || i.letter == 'n' || i.letter == 'A' || n == 1) return digits(n, 10, v);
    return digits(n, n == 2 && i.letter != 'D' ? 2 : 3, v);
  }

  bool offset(const Item& i) {
    if (starts_with(text_, at, "GMT") && (i.letter == 'O' || (i.letter == 'Z' && i.count == 4))) {
      at += 3;
      if (at == text_.size() || (text_[at] != '+' && text_[at] != '-'))
        return f.offset_ms = 0, true;
    }
    if (at < text_.size() && text_[at] == 'Z' && i.letter != 'x')
      return ++at, f.offset_ms = 0, true;
    if (at >= text_.size() || (text_[at] != '+' && text_[at] != '-')) return false;
    int64_t sign = text_[at++] == '-' ? -1 : 1, h = 0, m = 0;
    if (!digits(1, 2, h)) return false;
    size_t before = at;
    if (at < text_.size() && text_[at] == ':') ++at;
    if (!digits(2, 2, m)) at = before;
    f.offset_ms = sign * (h * 60 + m) * 60'000;
    return true;
  }

  bool letter(const Item& i, bool adjacent) {
    char l = i.letter;
    if (std::string_view("yuMLdDE").find(l) != std::string_view::npos && f.first_date_field.empty())
      f.first_date_field = l == 'y'   ? "YearOfEra"
                           : l == 'u' ? "Year"
                           : l == 'd' ? "DayOfMonth"
                           : l == 'D' ? "DayOfYear"
                           : l == 'E' ? "DayOfWeek"
                                      : "MonthOfYear";
    if (std::string_view("aHkKhmsSnA").find(l) != std::string_view::npos) f.has_time = true;
    int64_t v = 0;
    switch (l) {
      case 'M':
      case 'L':
        if (i.count >= 3) {
          int k = match_name(text_, at, kMonthNames, true);
          return k >= 0 && (f.month = k + 1, true);
        }
        return number(i, adjacent, v) && (f.month = v, true);
      case 'E': {
        int k = match_name(text_, at, kDayNames, true);
        return k >= 0 && (f.weekday = k + 1, true);
      }
      case 'a': {
        int k = match_name(text_, at, kAmPm, false);
        return k >= 0 && (f.ampm = k, true);
      }
      case 'z':
      case 'V':
        f.zone = zone_by_name(text_, at);
        return f.zone != nullptr;
      case 'Z':
      case 'X':
      case 'x':
      case 'O':
        return offset(i);
      default:
        break;
    }
    if (!number(i, adjacent, v)) return false;
    Field* target = l == 'y'   ? (i.count == 2 ? &f.two_digit_year : &f.year_of_era)
                    : l == 'u' ? (i.count == 2 ? &f.two_digit_year : &f.year)
                    : l == 'd' ? &f.day
                    : l == 'D' ? &f.day_of_year
                    : l == 'H' ? &f.hour
                    : l == 'k' ? &f.clock_hour
                    : l == 'K' ? &f.hour_of_ampm
                    : l == 'h' ? &f.clock_hour_of_ampm
                    : l == 'm' ? &f.minute
                    : l == 's' ? &f.second
                    : l == 'A' ? &f.milli
                               : &f.nanos;
    if (l == 'S')
      for (int k = i.count; k < 9; ++k) v *= 10;
    *target = v;
    return true;
  }

  const std::vector<Item>& items_;
  std::string_view text_;
};

// Java's resolution of the fields into a date and a time of day.
class Resolver {
 public:
  Resolver(const Fields& f, std::string_view text) : f_(f), text_(text) {}

  bool resolve(ParsedDateTime& out, std::string& error) {
    int64_t year = f_.year ? *f_.year : f_.year_of_era ? *f_.year_of_era : 1970;
    if (f_.two_digit_year && !f_.year && !f_.year_of_era) year = 2000 + *f_.two_digit_year;
    int64_t month = f_.month.value_or(1), day = f_.day.value_or(1);
    if (!check("MonthOfYear", month, 1, 12, "12") || !check("DayOfMonth", day, 1, 31, "28/31"))
      return fail(error);
    day = std::min<int64_t>(day, ops::days_in_month(year, static_cast<int>(month)));
    out.days = ops::days_from_civil(year, static_cast<int>(month), static_cast<int>(day));
    if (f_.day_of_year) {
      if (!check("DayOfYear", *f_.day_of_year, 1, 366, "365/366")) return fail(error);
      out.days = ops::days_from_civil(year, 1, 1) + *f_.day_of_year - 1;
    }
    if (f_.weekday && ops::floor_mod(out.days + 3, 7) + 1 != *f_.weekday) {
      std::string date;
      ops::append_date_text(date, out.days);
      message_ = "Conflict found: Field DayOfWeek " +
                 std::to_string(ops::floor_mod(out.days + 3, 7) + 1) + " differs from DayOfWeek " +
                 std::to_string(*f_.weekday) + " derived from " + date;
      return fail(error);
    }
    if (!time_of_day(out.ms_of_day)) return fail(error);
    out.has_date_field = !f_.first_date_field.empty();
    out.first_date_field = f_.year && f_.month && f_.day ? "DayOfWeek" : f_.first_date_field;
    out.has_time_field = f_.has_time;
    out.offset_ms = f_.offset_ms;
    out.zone = f_.zone;
    return true;
  }

 private:
  bool time_of_day(int64_t& ms) {
    int64_t hour = 0, pm = f_.ampm.value_or(0);
    if (f_.hour && !check("HourOfDay", *f_.hour, 0, 23, "23")) return false;
    if (f_.clock_hour && !check("ClockHourOfDay", *f_.clock_hour, 1, 24, "24")) return false;
    if (f_.hour_of_ampm && !check("HourOfAmPm", *f_.hour_of_ampm, 0, 11, "11")) return false;
    if (f_.clock_hour_of_ampm && !check("ClockHourOfAmPm", *f_.clock_hour_of_ampm, 1, 12, "12"))
      return false;
    if (f_.hour) hour = *f_.hour;
    if (f_.clock_hour) hour = *f_.clock_hour % 24;
    if (f_.hour_of_ampm) hour = *f_.hour_of_ampm + 12 * pm;
    if (f_.clock_hour_of_ampm) hour = *f_.clock_hour_of_ampm % 12 + 12 * pm;
    int64_t minute = f_.minute.value_or(0), second = f_.second.value_or(0);
    if (!check("MinuteOfHour", minute, 0, 59, "59") ||
        !check("SecondOfMinute", second, 0, 59, "59"))
      return false;
    ms = ((hour * 60 + minute) * 60 + second) * 1000 + f_.nanos.value_or(0) / 1'000'000;
    if (f_.milli) {
      if (!check("MilliOfDay", *f_.milli, 0, 86'399'999, "86399999")) return false;
      ms = *f_.milli;
    }
    return true;
  }

  bool check(const char* field, int64_t v, int64_t low, int64_t high, const char* shown) {
    if (v >= low && v <= high) return true;
    message_ = std::string("Invalid value for ") + field + " (valid values " + std::to_string(low) +
               " - " + shown + "): " + std::to_string(v);
    return false;
  }

  bool fail(std::string& error) {
    error = "Text '" + std::string(text_) + "' could not be parsed: " + message_;
    return false;
  }

  const Fields& f_;
  std::string_view text_;
  std::string message_;
};

}  // namespace

bool DateTimePattern::parse(std::string_view text, ParsedDateTime& out, std::string& error) const {
  TextReader reader(items_, text);
  if (!reader.read(0, items_.size())) {
    error = "Text '" + std::string(text) + "' could not be parsed at index " +
            std::to_string(reader.at);
    return false;
  }
  if (reader.at != text.size()) {
    error = "Text '" + std::string(text) + "' could not be parsed, unparsed text found at index " +
            std::to_string(reader.at);
    return false;
  }
  return Resolver(reader.f, text).resolve(out, error);
}

}  // namespace oxbow::sql::functions
