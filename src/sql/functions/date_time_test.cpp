// The date and time functions, CAST between STRING and the temporal types, and comparisons of
// STRINGs with them. The row (function_test_util.h): dt 2021-01-01, t 12:34:56.789,
// ts 2021-01-01T12:34:56.789Z, ns and ni NULL.
#include "sql/functions/function_test_util.h"

namespace oxbow::sql {
namespace {

using DateTimeFunctions = FunctionTest;

// The unit as a bare keyword (dateadd.json, datesub.json, timestampsub.json).
TEST_F(DateTimeFunctions, Arithmetic) {
  EXPECT_EQ(eval("CAST(DATEADD(DAYS, 3, dt) AS STRING)"), "'2021-01-04'");
  EXPECT_EQ(eval("CAST(DATEADD(DAY, -1, dt) AS STRING)"), "'2020-12-31'");
  EXPECT_EQ(eval("CAST(DATESUB(DAYS, 1, dt) AS STRING)"), "'2020-12-31'");
  EXPECT_EQ(eval("CAST(DATEADD(HOURS, 25, dt) AS STRING)"), "'2021-01-02'");
  // Java's TimeUnit.toDays truncates toward zero.
  EXPECT_EQ(eval("CAST(DATESUB(HOURS, 1, FROM_DAYS(0)) AS STRING)"), "'1970-01-01'");
  EXPECT_EQ(eval("CAST(TIMEADD(HOURS, 12, t) AS STRING)"), "'00:34:56'");
  EXPECT_EQ(eval("CAST(TIMESUB(MINUTES, 35, t) AS STRING)"), "'11:59:56'");
  EXPECT_EQ(eval("CAST(TIMESTAMPADD(MILLISECONDS, 211, ts) AS STRING)"),
            "'2021-01-01T12:34:57.000'");
  EXPECT_EQ(eval("CAST(TIMESTAMPSUB(SECONDS, 56, ts) AS STRING)"), "'2021-01-01T12:34:00.789'");
  EXPECT_EQ(eval("DATEADD(DAYS, ni, dt)"), "null");
  EXPECT_EQ(type_of("TIMESTAMPADD(DAYS, 1, ts)"), "TIMESTAMP");
}

TEST_F(DateTimeFunctions, UnitsAreKeywordsOnly) {
  EXPECT_EQ(eval("DATEADD('DAYS', 1, dt)"),
            "REFUSED: Function 'DATEADD' does not accept parameters (STRING, INTEGER, DATE).");
  EXPECT_EQ(eval("DATEADD(s, 1, dt)"),
            "REFUSED: Function 'DATEADD' does not accept parameters (STRING, INTEGER, DATE).");
  EXPECT_EQ(eval("DATEADD(dt, 5, dt)"),  // dateadd.json, "throws on incorrect type"
            "REFUSED: Function 'DATEADD' does not accept parameters (DATE, INTEGER, DATE).");
  EXPECT_EQ(eval("DATEADD(DAYS, 1, t)"),
            "REFUSED: Function 'DATEADD' does not accept parameters (STRING, INTEGER, TIME).");
  EXPECT_EQ(eval("ABS(DAYS)"),
            "REFUSED: Time unit DAYS is only allowed as an argument of functions taking one");
  // A unit name that is not reserved is still a column's name elsewhere.
  EXPECT_EQ(eval("ABS(DAY)"), "REFUSED: SELECT column 'DAY' cannot be resolved.");
  EXPECT_THROW(parser::parse_expression("DATEADD(DAYS + 1, 1, dt)"), parser::ParseError);
}

TEST_F(DateTimeFunctions, Format) {
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(ts, 'yyyy-MM-dd''T''HH:mm:ss.SSSX')"),
            "'2021-01-01T12:34:56.789Z'");
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(ts, 'yyyy-MM-dd HH:mm:ss z', 'America/Los_Angeles')"),
            "'2021-01-01 04:34:56 PST'");
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(ts, 'EEEE, MMMM d, yy h:mm a XXX', 'Asia/Kolkata')"),
            "'Friday, January 1, 21 6:04 PM +05:30'");
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(ts, 'EEE MMM dd HH ZZZZZ VV', '+02:00')"),
            "'Fri Jan 01 14 +02:00 +02:00'");
  // Daylight saving time, from the zone file's transitions and from its rule after them.
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(FROM_UNIXTIME(1625140800000), 'HH:mm z Z', 'Europe/Paris')"),
            "'14:00 CEST +0200'");
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(FROM_UNIXTIME(4118097600000), 'yyyy-MM-dd HH:mm z', "
                 "'America/New_York')"),
            "'2100-07-01 00:00 EDT'");
  // The southern hemisphere's summer spans the new year.
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(FROM_UNIXTIME(4102444800000), 'HH:mm z', "
                 "'Australia/Sydney')"),
            "'11:00 AEDT'");
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(FROM_UNIXTIME(4118097600000), 'HH:mm z', 'Europe/London')"),
            "'05:00 BST'");
  EXPECT_EQ(eval("FORMAT_DATE(dt, 'dd/MM/yyyy D E')"), "'01/01/2021 1 Fri'");
  EXPECT_EQ(eval("FORMAT_TIME(t, 'hh:mm:ss.SS a')"), "'12:34:56.78 PM'");
  EXPECT_EQ(eval("TIMESTAMPTOSTRING(n, 'yyyy-MM-dd HH:mm:ss.SSS')"), "'1970-01-01 00:00:00.010'");
  EXPECT_EQ(eval("DATETOSTRING(18628, 'yyyy.MM.dd')"), "'2021.01.01'");
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(ts, ns)"), "null");
}

TEST_F(DateTimeFunctions, FormatErrors) {
  EXPECT_EQ(eval("FORMAT_DATE(dt, 'yyyy HH')"),
            "ERROR: Failed to format date 2021-01-01 with formatter 'yyyy HH': Unsupported "
            "field: HourOfDay");
  EXPECT_EQ(eval("FORMAT_TIME(t, 'dd')"),
            "ERROR: Failed to format time 12:34:56 with formatter 'dd': Unsupported field: "
            "DayOfMonth");
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(ts, 'yyyy', 'Mars/Olympus')"),
            "ERROR: Failed to format timestamp 2021-01-01 12:34:56.789 at timeZone "
            "'Mars/Olympus' with formatter 'yyyy': Unknown time-zone ID: Mars/Olympus");
  EXPECT_EQ(eval("FORMAT_TIMESTAMP(ts, 'yyyy-MM-dd''T')"),
            "ERROR: Failed to format timestamp 2021-01-01 12:34:56.789 with formatter "
            "'yyyy-MM-dd'T': Pattern ends with an incomplete string literal: yyyy-MM-dd'T");
  EXPECT_EQ(eval("FORMAT_DATE(dt, 'f')"),
            "ERROR: Failed to format date 2021-01-01 with formatter 'f': Unknown pattern letter: "
            "f");
  EXPECT_EQ(eval("FORMAT_DATE(dt, 'ddd')"),
            "ERROR: Failed to format date 2021-01-01 with formatter 'ddd': Too many pattern "
            "letters: d");
}

// parse-timestamp, parse-date and parse-time QTT cases.
TEST_F(DateTimeFunctions, Parse) {
  EXPECT_EQ(eval("CAST(PARSE_TIMESTAMP('2018-05-11 10:30:01.123', 'yyyy-MM-dd HH:mm:ss.SSS') AS "
                 "STRING)"),
            "'2018-05-11T10:30:01.123'");
  EXPECT_EQ(eval("UNIX_TIMESTAMP(PARSE_TIMESTAMP('2021-01-01 04:34:56', 'yyyy-MM-dd HH:mm:ss', "
                 "'America/Los_Angeles'))"),
            "1609504496000");
  // A zone or offset in the text wins over the argument.
  EXPECT_EQ(eval("UNIX_TIMESTAMP(PARSE_TIMESTAMP('2021-01-01T12:34:56+0100', "
                 "'yyyy-MM-dd''T''HH:mm:ssX', 'UTC'))"),
            "1609500896000");
  EXPECT_EQ(eval("UNIX_TIMESTAMP(PARSE_TIMESTAMP('01/01/2021 04:34 PST', 'MM/dd/yyyy HH:mm z'))"),
            "1609504440000");
  // A local time in a gap is moved later by the gap; one in an overlap is the earlier instant.
  EXPECT_EQ(eval("CAST(PARSE_TIMESTAMP('2021-03-14 02:30', 'yyyy-MM-dd HH:mm', "
                 "'America/New_York') AS STRING)"),
            "'2021-03-14T07:30:00.000'");
  EXPECT_EQ(eval("CAST(PARSE_TIMESTAMP('2021-11-07 01:30', 'yyyy-MM-dd HH:mm', "
                 "'America/New_York') AS STRING)"),
            "'2021-11-07T05:30:00.000'");
  // Fields not given default to 1970-01-01T00:00.
  EXPECT_EQ(eval("CAST(PARSE_TIMESTAMP('10:15', 'HH:mm') AS STRING)"), "'1970-01-01T10:15:00.000'");
  EXPECT_EQ(eval("STRINGTOTIMESTAMP('20210101123456', 'yyyyMMddHHmmss')"), "1609504496000");
  EXPECT_EQ(eval("CAST(PARSE_DATE('11/05/2019', 'dd/MM/yyyy') AS STRING)"), "'2019-05-11'");
  EXPECT_EQ(eval("CAST(PARSE_DATE('01-JAN-2022', 'dd-MMM-yyyy') AS STRING)"), "'2022-01-01'");
  EXPECT_EQ(eval("CAST(PARSE_DATE('2018-05-11Lit', 'yyyy-MM-dd''Lit''') AS STRING)"),
            "'2018-05-11'");
  EXPECT_EQ(eval("CAST(PARSE_DATE('JAN-2022', 'MMM-yyyy') AS STRING)"), "'2022-01-01'");
  EXPECT_EQ(eval("STRINGTODATE('2021-01-01', 'yyyy-MM-dd')"), "18628");
  EXPECT_EQ(eval("CAST(PARSE_TIME('09:08:07.6', 'HH:mm:ss.S') AS STRING)"), "'09:08:07'");
  EXPECT_EQ(eval("CAST(PARSE_TIME('9:08 PM', 'h:mm a') AS STRING)"), "'21:08'");
  EXPECT_EQ(eval("PARSE_DATE(ns, 'yyyy')"), "null");
}

TEST_F(DateTimeFunctions, ParseErrors) {
  EXPECT_EQ(eval("PARSE_TIMESTAMP('2021-13-01', 'yyyy-MM-dd')"),
            "ERROR: Failed to parse timestamp '2021-13-01' at timezone 'UTC' with formatter "
            "'yyyy-MM-dd': Text '2021-13-01' could not be parsed: Invalid value for MonthOfYear "
            "(valid values 1 - 12): 13");
  EXPECT_EQ(eval("PARSE_DATE('abc', 'yyyy')"),
            "ERROR: Failed to parse date 'abc' with formatter 'yyyy': Text 'abc' could not be "
            "parsed at index 0");
  EXPECT_EQ(eval("PARSE_DATE('2021-01-01 10', 'yyyy-MM-dd HH')"),
            "ERROR: Failed to parse date '2021-01-01 10' with formatter 'yyyy-MM-dd HH': Date "
            "format contains time field.");
  EXPECT_EQ(eval("PARSE_TIME('2021 10', 'yyyy HH')"),
            "ERROR: Failed to parse time '2021 10' with formatter 'yyyy HH': Unsupported field: "
            "YearOfEra");
  EXPECT_EQ(eval("PARSE_DATE('2021-01-01x', 'yyyy-MM-dd')"),
            "ERROR: Failed to parse date '2021-01-01x' with formatter 'yyyy-MM-dd': Text "
            "'2021-01-01x' could not be parsed, unparsed text found at index 10");
  EXPECT_EQ(eval("PARSE_DATE('Mon 2021-01-01', 'EEE yyyy-MM-dd')"),
            "ERROR: Failed to parse date 'Mon 2021-01-01' with formatter 'EEE yyyy-MM-dd': Text "
            "'Mon 2021-01-01' could not be parsed: Conflict found: Field DayOfWeek 5 differs "
            "from DayOfWeek 1 derived from 2021-01-01");
  EXPECT_EQ(eval("PARSE_TIMESTAMP('2021', 'yyyy', 'Nowhere')"),
            "ERROR: Failed to parse timestamp '2021' at timezone 'Nowhere' with formatter "
            "'yyyy': Unknown time-zone ID: Nowhere");
  // A day past its month's end is the month's last (Java's SMART resolver).
  EXPECT_EQ(eval("CAST(PARSE_DATE('2021-02-30', 'yyyy-MM-dd') AS STRING)"), "'2021-02-28'");
}

// convert-tz.json, from-days.json, unix_date and unix_timestamp.
TEST_F(DateTimeFunctions, Conversions) {
  EXPECT_EQ(eval("CAST(CONVERT_TZ(ts, 'UTC', 'America/Los_Angeles') AS STRING)"),
            "'2021-01-01T04:34:56.789'");
  EXPECT_EQ(eval("CAST(CONVERT_TZ(ts, 'Asia/Kolkata', 'UTC') AS STRING)"),
            "'2021-01-01T07:04:56.789'");
  EXPECT_EQ(eval("CONVERT_TZ(ts, 'UTC', 'Nowhere')"),
            "ERROR: Invalid time zone: Unknown time-zone ID: Nowhere");
  EXPECT_EQ(eval("CAST(FROM_DAYS(-1) AS STRING)"), "'1969-12-31'");
  EXPECT_EQ(eval("CAST(FROM_UNIXTIME(n) AS STRING)"), "'1970-01-01T00:00:00.010'");
  EXPECT_EQ(eval("UNIX_DATE(dt)"), "18628");
  EXPECT_EQ(eval("UNIX_TIMESTAMP(ts)"), "1609504496789");
  EXPECT_EQ(eval("UNIX_DATE() > 18628"), "true");
  EXPECT_EQ(eval("UNIX_TIMESTAMP() > 1609504496789"), "true");
  EXPECT_EQ(eval("FROM_DAYS(ni)"), "null");
}

// cast.json: STRING to and from DATE, TIME and TIMESTAMP.
TEST_F(DateTimeFunctions, Casts) {
  EXPECT_EQ(eval("CAST(FROM_UNIXTIME(10) AS STRING)"), "'1970-01-01T00:00:00.010'");
  EXPECT_EQ(eval("CAST(FROM_DAYS(10) AS STRING)"), "'1970-01-11'");
  EXPECT_EQ(eval("CAST(CAST('00:00:05' AS TIME) AS STRING)"), "'00:00:05'");
  EXPECT_EQ(eval("CAST(CAST('01:00' AS TIME) AS STRING)"), "'01:00'");
  EXPECT_EQ(eval("UNIX_DATE(CAST('2021-01-01' AS DATE))"), "18628");
  EXPECT_EQ(eval("UNIX_DATE(CAST('2021-03' AS DATE))"), "18687");
  EXPECT_EQ(eval("UNIX_TIMESTAMP(CAST('2021-01-01T12:34:56.789' AS TIMESTAMP))"), "1609504496789");
  EXPECT_EQ(eval("UNIX_TIMESTAMP(CAST('2021-01-01T13:34:56.789+01:00' AS TIMESTAMP))"),
            "1609504496789");
  EXPECT_EQ(eval("UNIX_TIMESTAMP(CAST('2021-01-01' AS TIMESTAMP))"), "1609459200000");
  EXPECT_EQ(eval("CAST(CAST(ts AS DATE) AS STRING)"), "'2021-01-01'");
  EXPECT_EQ(eval("CAST(CAST(ts AS TIME) AS STRING)"), "'12:34:56'");
  EXPECT_EQ(eval("CAST(CAST(dt AS TIMESTAMP) AS STRING)"), "'2021-01-01T00:00:00.000'");
  EXPECT_EQ(eval("CAST('2021-02-30' AS DATE)"),
            "ERROR: Failed to parse date '2021-02-30': Text '2021-02-30' could not be parsed: "
            "Invalid date 'FEBRUARY 30'");
  EXPECT_EQ(eval("CAST('25:00' AS TIME)"),
            "ERROR: Failed to parse time '25:00': Text '25:00' could not be parsed: Invalid value "
            "for HourOfDay (valid values 0 - 23): 25");
  EXPECT_EQ(eval("CAST('noon' AS TIMESTAMP)"),
            "ERROR: Failed to parse timestamp 'noon': Text 'noon' could not be parsed at index 0");
  EXPECT_EQ(eval("CAST(ns AS DATE)"), "null");
}

// STRINGs compared with the temporal types are read as them (comparison-expression.json).
TEST_F(DateTimeFunctions, ComparisonsWithStrings) {
  EXPECT_EQ(eval("dt = '2021-01-01'"), "true");
  EXPECT_EQ(eval("ts > '2021-01-01T12:00:00'"), "true");
  EXPECT_EQ(eval("t < '12:00'"), "false");
  EXPECT_EQ(eval("ts BETWEEN '2021' AND '2021-01-02'"), "true");
  EXPECT_EQ(eval("dt IN ('2020-01-01', '2021-01-01')"), "true");
  EXPECT_EQ(eval("CAST(dt AS TIMESTAMP) < ts"), "true");
  EXPECT_EQ(eval("CASE dt WHEN '2020-01-01' THEN 1 WHEN '2021-01-01' THEN 2 END"), "2");
  // A STRING given for a DATE, TIME or TIMESTAMP parameter is read as one.
  EXPECT_EQ(eval("FORMAT_DATE('2021-03-04', 'd MMM')"), "'4 Mar'");
  EXPECT_EQ(eval("UNIX_TIMESTAMP('1970-01-01T00:00:01Z')"), "1000");
  EXPECT_EQ(eval("dt = 'soon'"),
            "ERROR: Failed to parse date 'soon': Text 'soon' could not be parsed at index 0");
}

// to_json_string.json: the temporal types as their CAST texts.
TEST_F(DateTimeFunctions, ToJsonString) {
  EXPECT_EQ(eval("TO_JSON_STRING(CAST(PARSE_TIME('16:43:40', 'HH:mm:ss') AS TIME))"),
            "'\"16:43:40\"'");
  EXPECT_EQ(eval("TO_JSON_STRING(FROM_DAYS(1000))"), "'\"1972-09-27\"'");
  EXPECT_EQ(eval("TO_JSON_STRING(FROM_UNIXTIME(60220000000))"), "'\"1971-11-28T23:46:40.000\"'");
}

TEST_F(DateTimeFunctions, Described) {
  const FunctionInfo& dateadd = functions_.describe("DATEADD");
  EXPECT_EQ(dateadd.category, "DATE / TIME");
  EXPECT_EQ(dateadd.signature_text(dateadd.variants[0]),
            "DATEADD(unit INTERVAL UNIT, interval INT, date DATE)");
}

}  // namespace
}  // namespace oxbow::sql
