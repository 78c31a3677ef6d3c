// The date and time functions (ksqlDB's DATE / TIME category): arithmetic by a unit given as a
// bare keyword (DATEADD(DAYS, 1, d); the binder passes the unit's name as a STRING), formatting
// and parsing by Java patterns (date_time_format.h) in IANA time zones (time_zone.h), and the
// conversions between days, epoch milliseconds and the temporal types. ksqlDB's default zone is
// the JVM's; ours is UTC. A value that cannot be formatted or parsed gives NULL and reports
// ksqlDB's message ("Failed to parse timestamp '...' at timezone 'UTC' with formatter '...': ...").
#include <chrono>

#include "sql/functions/date_time_format.h"
#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

constexpr int64_t kDayMs = 86'400'000;

// Java's TimeUnit.toMillis of the unit's name, 0 for a name that is not a unit.
int64_t unit_ms(const std::string& unit) {
  for (const auto& [name, ms] : {std::pair<const char*, int64_t>{"DAY", kDayMs},
                                 {"HOUR", 3'600'000},
                                 {"MINUTE", 60'000},
                                 {"SECOND", 1000},
                                 {"MILLISECOND", 1}})
    if (unit == name || unit == std::string(name) + "S") return ms;
  return 0;
}

// The duration DATEADD & co add: `Sign` times the interval in the unit, in ms.
template <int Sign>
bool duration(FunctionCall& call, int64_t& ms) {
  int64_t unit = unit_ms(call[0].text());
  if (unit == 0) return call.fail("Unknown time unit: " + call[0].text()), false;
  ms = Sign * unit * call[1].integer();
  return true;
}

template <int Sign>
void date_add(FunctionCall& call) {
  int64_t ms = 0;
  // Java's TimeUnit.toDays truncates toward zero: 1970-01-01 minus an hour stays 1970-01-01.
  if (duration<Sign>(call, ms))
    call.out().set_time(Kind::kDate, (call[2].bigint() * kDayMs + ms) / kDayMs);
}

template <int Sign>
void time_add(FunctionCall& call) {
  int64_t ms = 0;
  if (duration<Sign>(call, ms))
    call.out().set_time(Kind::kTime, ops::floor_mod(call[2].bigint() + ms, kDayMs));
}

template <int Sign>
void timestamp_add(FunctionCall& call) {
  int64_t ms = 0;
  if (duration<Sign>(call, ms)) call.out().set_time(Kind::kTimestamp, call[2].bigint() + ms);
}

// java.sql.Timestamp's text, as ksqlDB's messages print a timestamp: 2021-01-01 12:34:56.789.
std::string sql_timestamp_text(int64_t ms) {
  std::string out;
  ops::append_timestamp_text(out, ms);
  out[10] = ' ';
  while (out.back() == '0' && out[out.size() - 2] != '.') out.pop_back();
  return out;
}

// The zone argument k (UTC when the call has none), or null having reported `what` failed.
const TimeZone* zone_arg(FunctionCall& call, size_t k, std::string& error) {
  if (k >= call.size()) return &TimeZone::utc();
  return TimeZone::find(call[k].text(), error);
}

// FORMAT_TIMESTAMP(ts, fmt[, tz]) and TIMESTAMPTOSTRING(ms, fmt[, tz]).
void format_timestamp(FunctionCall& call) {
  int64_t ts = call[0].bigint();  // TIMESTAMP and BIGINT alike
  std::string error;
  const TimeZone* zone = zone_arg(call, 2, error);
  const DateTimePattern* pattern = zone ? DateTimePattern::get(call[1].text(), error) : nullptr;
  std::string& out = scratch();
  if (pattern) {
    int64_t local = ts + zone->offset_ms(ts);
    if (pattern->format(out, ops::floor_div(local, kDayMs), ops::floor_mod(local, kDayMs), true,
                        true, zone, ts, error))
      return set_string(call.out(), out);
  }
  std::string shown = call[0].kind() == Kind::kBigint ? std::to_string(ts) : sql_timestamp_text(ts);
  std::string at = call.size() > 2 ? " at timeZone '" + call[2].text() + "'" : "";
  call.fail("Failed to format timestamp " + shown + at + " with formatter '" + call[1].text() +
            "': " + error);
}

// FORMAT_DATE(date, fmt), DATETOSTRING(days, fmt) and FORMAT_TIME(time, fmt).
void format_local(FunctionCall& call) {
  bool time = call[0].kind() == Kind::kTime;
  int64_t v = call[0].kind() == Kind::kInteger ? call[0].integer() : call[0].bigint();
  std::string error;
  const DateTimePattern* pattern = DateTimePattern::get(call[1].text(), error);
  std::string& out = scratch();
  if (pattern && pattern->format(out, time ? 0 : v, time ? v : 0, !time, time, nullptr, 0, error))
    return set_string(call.out(), out);
  std::string shown;
  time ? ops::append_time_text(shown, v) : ops::append_date_text(shown, v);
  call.fail(std::string("Failed to format ") + (time ? "time " : "date ") + shown +
            " with formatter '" + call[1].text() + "': " + error);
}

// The text in argument 0 read by the pattern in argument 1; false having reported the failure.
bool parse_text(FunctionCall& call, const char* what, ParsedDateTime& parsed, std::string at = {}) {
  std::string error;
  const DateTimePattern* pattern = DateTimePattern::get(call[1].text(), error);
  if (pattern && pattern->parse(call[0].text(), parsed, error)) {
    if (std::string_view(what) == "date" && parsed.has_time_field)
      error = "Date format contains time field.";
    else if (std::string_view(what) == "time" && parsed.has_date_field)
      error = "Unsupported field: " + parsed.first_date_field;
    else
      return true;
  }
  call.fail(std::string("Failed to parse ") + what + " '" + call[0].text() + "'" + at +
            " with formatter '" + call[1].text() + "': " + error);
  return false;
}

// PARSE_TIMESTAMP(s, fmt[, tz]) and STRINGTOTIMESTAMP: a zone or offset in the text wins.
void parse_timestamp(FunctionCall& call) {
  std::string error, tz = call.size() > 2 ? call[2].text() : "UTC";
  const TimeZone* zone = zone_arg(call, 2, error);
  if (!zone)
    return call.fail("Failed to parse timestamp '" + call[0].text() + "' at timezone '" + tz +
                     "' with formatter '" + call[1].text() + "': " + error);
  ParsedDateTime p;
  if (!parse_text(call, "timestamp", p, " at timezone '" + tz + "'")) return;
  int64_t local = p.days * kDayMs + p.ms_of_day;
  int64_t utc = p.offset_ms ? local - *p.offset_ms : (p.zone ? p.zone : zone)->utc_of_local(local);
  if (call.result_type()->base() == SqlBaseType::kBigint)
    call.out().set_bigint(utc);
  else
    call.out().set_time(Kind::kTimestamp, utc);
}

// PARSE_DATE and STRINGTODATE (days as an INT).
void parse_date(FunctionCall& call) {
  ParsedDateTime p;
  if (!parse_text(call, "date", p)) return;
  if (call.result_type()->base() == SqlBaseType::kInteger)
    call.out().set_integer(static_cast<int32_t>(p.days));
  else
    call.out().set_time(Kind::kDate, p.days);
}

void parse_time(FunctionCall& call) {
  ParsedDateTime p;
  if (parse_text(call, "time", p)) call.out().set_time(Kind::kTime, p.ms_of_day);
}

// The same instant's wall clock moved from one zone to another (offsets both taken at `ts`).
void convert_tz(FunctionCall& call) {
  std::string error;
  const TimeZone* from = TimeZone::find(call[1].text(), error);
  const TimeZone* to = from ? TimeZone::find(call[2].text(), error) : nullptr;
  if (!to) return call.fail("Invalid time zone: " + error);
  int64_t ts = call[0].bigint();
  call.out().set_time(Kind::kTimestamp, ts + to->offset_ms(ts) - from->offset_ms(ts));
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void from_days(FunctionCall& call) {
  call.out().set_time(Kind::kDate, call[0].integer());
}

void from_unixtime(FunctionCall& call) {
  call.out().set_time(Kind::kTimestamp, call[0].bigint());
}

void unix_date(FunctionCall& call) {
  int64_t days = call.size() ? call[0].bigint() : ops::floor_div(now_ms(), kDayMs);
  call.out().set_integer(static_cast<int32_t>(days));
}

void unix_timestamp(FunctionCall& call) {
  call.out().set_bigint(call.size() ? call[0].bigint() : now_ms());
}

void add_arithmetic(std::vector<FunctionInfo>& out) {
  out.push_back(
      scalar("DATEADD", kDateTime, "Adds a duration to a DATE value.",
             {signature("unit INTERVALUNIT, interval INT, date DATE", "DATE", date_add<1>)}));
  out.push_back(
      scalar("DATESUB", kDateTime, "Subtracts a duration from a DATE value.",
             {signature("unit INTERVALUNIT, interval INT, date DATE", "DATE", date_add<-1>)}));
  out.push_back(
      scalar("TIMEADD", kDateTime, "Adds a duration to a TIME value.",
             {signature("unit INTERVALUNIT, interval INT, time TIME", "TIME", time_add<1>)}));
  out.push_back(
      scalar("TIMESUB", kDateTime, "Subtracts a duration from a TIME value.",
             {signature("unit INTERVALUNIT, interval INT, time TIME", "TIME", time_add<-1>)}));
  out.push_back(scalar("TIMESTAMPADD", kDateTime, "Adds a duration to a TIMESTAMP value.",
                       {signature("unit INTERVALUNIT, interval INT, timestamp TIMESTAMP",
                                  "TIMESTAMP", timestamp_add<1>)}));
  out.push_back(scalar("TIMESTAMPSUB", kDateTime, "Subtracts a duration from a TIMESTAMP value.",
                       {signature("unit INTERVALUNIT, interval INT, timestamp TIMESTAMP",
                                  "TIMESTAMP", timestamp_add<-1>)}));
}

void add_formatting(std::vector<FunctionInfo>& out) {
  out.push_back(scalar(
      "FORMAT_TIMESTAMP", kDateTime,
      "A TIMESTAMP as text in a Java DateTimeFormatter pattern, in UTC or the given time zone.",
      {signature("timestamp TIMESTAMP, formatPattern VARCHAR", "VARCHAR", format_timestamp),
       signature("timestamp TIMESTAMP, formatPattern VARCHAR, timeZone VARCHAR", "VARCHAR",
                 format_timestamp)}));
  out.push_back(scalar("FORMAT_DATE", kDateTime, "A DATE as text in a Java pattern.",
                       {signature("date DATE, formatPattern VARCHAR", "VARCHAR", format_local)}));
  out.push_back(scalar("FORMAT_TIME", kDateTime, "A TIME as text in a Java pattern.",
                       {signature("time TIME, formatPattern VARCHAR", "VARCHAR", format_local)}));
  out.push_back(scalar(
      "PARSE_TIMESTAMP", kDateTime,
      "Text in a Java pattern as a TIMESTAMP, in UTC or the given zone unless the text has one.",
      {signature("formattedTimestamp VARCHAR, formatPattern VARCHAR", "TIMESTAMP", parse_timestamp),
       signature("formattedTimestamp VARCHAR, formatPattern VARCHAR, timeZone VARCHAR", "TIMESTAMP",
                 parse_timestamp)}));
  out.push_back(
      scalar("PARSE_DATE", kDateTime, "Text in a Java pattern as a DATE.",
             {signature("formattedDate VARCHAR, formatPattern VARCHAR", "DATE", parse_date)}));
  out.push_back(
      scalar("PARSE_TIME", kDateTime, "Text in a Java pattern as a TIME.",
             {signature("formattedTime VARCHAR, formatPattern VARCHAR", "TIME", parse_time)}));
  out.push_back(scalar("CONVERT_TZ", kDateTime,
                       "Converts a TIMESTAMP value from one time zone to another.",
                       {signature("timestamp TIMESTAMP, fromTimeZone VARCHAR, toTimeZone VARCHAR",
                                  "TIMESTAMP", convert_tz)}));
}

void add_conversions(std::vector<FunctionInfo>& out) {
  out.push_back(scalar("FROM_DAYS", kDateTime, "The DATE a number of days after 1970-01-01.",
                       {signature("days INT", "DATE", from_days)}));
  out.push_back(scalar("FROM_UNIXTIME", kDateTime,
                       "The TIMESTAMP a number of milliseconds after the epoch.",
                       {signature("epochMilli BIGINT", "TIMESTAMP", from_unixtime)}));
  out.push_back(scalar(
      "UNIX_DATE", kDateTime, "Days since 1970-01-01: of the given DATE, else of today (UTC).",
      {signature("", "INT", unix_date), signature("date DATE", "INT", unix_date)}));
  out.push_back(scalar("UNIX_TIMESTAMP", kDateTime,
                       "Milliseconds since the epoch: of the given TIMESTAMP, else of now.",
                       {signature("", "BIGINT", unix_timestamp),
                        signature("timestamp TIMESTAMP", "BIGINT", unix_timestamp)}));
  // Deprecated in ksqlDB, kept for the queries that still use them.
  out.push_back(
      scalar("TIMESTAMPTOSTRING", kDateTime,
             "Epoch milliseconds as text in a Java pattern, in UTC or the given zone (deprecated).",
             {signature("epochMilli BIGINT, formatPattern VARCHAR", "VARCHAR", format_timestamp),
              signature("epochMilli BIGINT, formatPattern VARCHAR, timeZone VARCHAR", "VARCHAR",
                        format_timestamp)}));
  out.push_back(scalar(
      "STRINGTOTIMESTAMP", kDateTime, "Text in a Java pattern as epoch milliseconds (deprecated).",
      {signature("formattedTimestamp VARCHAR, formatPattern VARCHAR", "BIGINT", parse_timestamp),
       signature("formattedTimestamp VARCHAR, formatPattern VARCHAR, timeZone VARCHAR", "BIGINT",
                 parse_timestamp)}));
  out.push_back(scalar(
      "STRINGTODATE", kDateTime, "Text in a Java pattern as days since 1970-01-01 (deprecated).",
      {signature("formattedDate VARCHAR, formatPattern VARCHAR", "INT", parse_date)}));
  out.push_back(scalar(
      "DATETOSTRING", kDateTime, "Days since 1970-01-01 as text in a Java pattern (deprecated).",
      {signature("epochDays INT, formatPattern VARCHAR", "VARCHAR", format_local)}));
}

}  // namespace

void add_date_time_functions(std::vector<FunctionInfo>& out) {
  add_arithmetic(out);
  add_formatting(out);
  add_conversions(out);
}

}  // namespace oxbow::sql::functions
