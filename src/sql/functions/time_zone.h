#pragma once
// Time zones by Java's ZoneId names, for the date and time functions: UTC / GMT / Z, fixed
// offsets (+05:30, -08, UTC+2, GMT-03:00) and IANA region ids (America/Los_Angeles), the latter
// read from the system's tz database (/usr/share/zoneinfo, Debian's tzdata) because GCC 12's
// <chrono> has no time zones yet. A zone file is read once per process and kept.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow::sql::functions {

class TimeZone {
 public:
  // The zone named `id`, or null with `error` set to Java's message ("Unknown time-zone ID: X").
  static const TimeZone* find(std::string_view id, std::string& error);
  static const TimeZone& utc();

  const std::string& id() const { return id_; }
  // The offset from UTC (ms, east positive) at the instant `utc_ms`.
  int64_t offset_ms(int64_t utc_ms) const;
  // The instant a local date-time (ms since 1970-01-01T00:00 local) stands for, as Java's
  // ZonedDateTime.ofLocal: in a gap, moved later by the gap's length; in an overlap, the earlier.
  int64_t utc_of_local(int64_t local_ms) const;
  // The zone's short name at `utc_ms` (PST, CEST, UTC), or its offset when it has none.
  std::string abbreviation(int64_t utc_ms) const;

  // Parts of a POSIX TZ rule (a zone file's footer), for instants after its last transition.
  struct Rule {
    int month = 0, week = 0, weekday = 0;  // Mm.w.d: week 5 is the last
    int64_t time_s = 7200;                 // local time of the change
  };

 private:
  struct Type {
    int64_t offset_s = 0;
    bool dst = false;
    std::string abbreviation;
  };
  bool read_file(const std::string& path);
  bool read_footer(std::string_view footer);
  const Type& type_at(int64_t utc_s) const;
  const Type& rule_type_at(int64_t utc_s) const;

  std::string id_;
  std::vector<int64_t> transitions_;  // UTC seconds, ascending
  std::vector<uint8_t> transition_types_;
  std::vector<Type> types_;
  // The footer's rule: standard and (if any) daylight types, and when daylight starts and ends.
  bool has_rule_ = false, rule_dst_ = false;
  Type rule_std_, rule_dst_type_;
  Rule dst_start_, dst_end_;
};

}  // namespace oxbow::sql::functions
