#pragma once
// Java DateTimeFormatter patterns (what ksqlDB's FORMAT_* and PARSE_* take), hand-written for
// the letters ksqlDB users write: y u (year), M L (month: numbers, MMM Jan, MMMM January), d, D
// (day of year), E (Mon, Monday), a (AM/PM), H k K h (hours), m, s, S... (fraction), n, A, z
// (zone name), VV (zone id), Z X x O (offsets), 'literal' text with '' for a quote, [optional]
// sections. Names are English (Java's Locale.ROOT) and parsing ignores case. Resolution is
// Java's SMART one as ksqlDB uses it: fields not given default to 1970-01-01T00:00, a day past
// its month's end is its last day, a day of week that contradicts the date is an error.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sql/functions/time_zone.h"

namespace oxbow::sql::functions {

inline constexpr std::array<const char*, 12> kMonthNames = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};
inline constexpr std::array<const char*, 7> kDayNames = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

// What a pattern read from a text.
struct ParsedDateTime {
  bool has_date_field = false, has_time_field = false;
  std::string first_date_field;  // Java's name of a date field given ("YearOfEra"), for errors
  int64_t days = 0;              // the local date, days since 1970-01-01
  int64_t ms_of_day = 0;
  std::optional<int64_t> offset_ms;  // an offset the text gave (X, Z, x, O)
  const TimeZone* zone = nullptr;    // a zone the text named (z, VV)
};

class DateTimePattern {
 public:
  // The compiled pattern, kept per thread (one compile per distinct pattern text); null with
  // `error` set to Java's message when the pattern is invalid.
  static const DateTimePattern* get(std::string_view pattern, std::string& error);

  // Appends the local date-time (`days`, `ms_of_day`) in `zone` at instant `utc_ms`; `zone` null
  // for a DATE or TIME, which have no zone. False with Java's message for a field the value lacks
  // ("Unsupported field: HourOfDay").
  bool format(std::string& out, int64_t days, int64_t ms_of_day, bool has_date, bool has_time,
              const TimeZone* zone, int64_t utc_ms, std::string& error) const;
  // False with Java's message ("Text 'x' could not be parsed at index 0").
  bool parse(std::string_view text, ParsedDateTime& out, std::string& error) const;

  struct Item {
    enum Kind { kLetter, kLiteral, kOptionalStart, kOptionalEnd } kind = kLiteral;
    char letter = 0;
    int count = 0;
    std::string literal;
  };

 private:
  bool compile(std::string_view pattern, std::string& error);
  std::vector<Item> items_;
};

}  // namespace oxbow::sql::functions
