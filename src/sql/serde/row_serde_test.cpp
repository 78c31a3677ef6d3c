// Rows to bytes and back in each format, in the bytes ksqlDB writes (docs/sql/ksqldb-facts.md §3).
#include "sql/serde/row_serde.h"

#include <gtest/gtest.h>

#include "oxbow/streams/errors.h"
#include "sql/binder/sql_error.h"

namespace oxbow::sql {
namespace {

Column column(const std::string& name, SqlTypePtr type) {
  return {name, std::move(type), ColumnNamespace::kValue, ""};
}

Formats formats(const std::string& format) {
  Formats f;
  f.key_format = f.value_format = format;
  return f;
}

std::vector<Column> primitives() {
  return {column("B", SqlType::boolean()),     column("I", SqlType::integer()),
          column("L", SqlType::bigint()),      column("D", SqlType::double_type()),
          column("M", SqlType::decimal(5, 2)), column("S", SqlType::string()),
          column("Y", SqlType::bytes()),       column("T", SqlType::of(SqlBaseType::kTimestamp))};
}

Row sample() {
  Row row(8);
  row[0].set_boolean(true);
  row[1].set_integer(-7);
  row[2].set_bigint(10000000000);
  row[3].set_double(1.5);
  row[4].set_decimal(12345, 2);
  row[5].set_string("a,\"b\"");
  row[6].set_text(Value::Kind::kBytes, "\x01\x02", 2);
  row[7].set_time(Value::Kind::kTimestamp, 1700000000000);
  return row;
}

std::string text_of(const Row& row) {
  std::string out;
  for (const auto& v : row) out += (out.empty() ? "" : " ") + v.debug_string();
  return out;
}

TEST(DelimitedFormat, WritesAsKsqlDbAndReadsItBack) {
  auto serde = row_serde(formats("DELIMITED"), primitives(), false);
  std::string bytes = serde.serialize("t", sample());
  EXPECT_EQ(bytes, "true,-7,10000000000,1.5,123.45,\"a,\"\"b\"\"\",AQI=,1700000000000");
  EXPECT_EQ(text_of(serde.deserialize("t", bytes)), text_of(sample()));
}

TEST(DelimitedFormat, EmptyFieldsAreNullAndTheDelimiterIsTheSources) {
  Formats f = formats("DELIMITED");
  f.value_delimiter = "|";
  auto serde =
      row_serde(f, {column("A", SqlType::integer()), column("B", SqlType::string())}, false);
  Row row = serde.deserialize("t", "|x,y");
  EXPECT_TRUE(row[0].is_null());
  EXPECT_EQ(row[1].text(), "x,y");
  Row nulls(2);
  EXPECT_EQ(serde.serialize("t", nulls), "|");
}

TEST(DelimitedFormat, BadRecordsAreSerializationErrorsAndComplexTypesAreRefused) {
  auto serde = row_serde(formats("DELIMITED"),
                         {column("A", SqlType::integer()), column("B", SqlType::string())}, false);
  EXPECT_THROW(serde.deserialize("t", "1,2,3"), streams::SerializationException);
  EXPECT_THROW(serde.deserialize("t", "x,2"), streams::SerializationException);
  EXPECT_THROW(serde.deserialize("t", "1,\"open"), streams::SerializationException);
  try {
    row_serde(formats("DELIMITED"), {column("A", SqlType::array(SqlType::integer()))}, false);
    ADD_FAILURE();
  } catch (const SqlError& e) {
    EXPECT_EQ(std::string(e.what()), "The 'DELIMITED' format does not support type 'ARRAY'");
  }
}

TEST(JsonFormat, ASingleKeyIsBareAndASingleValueIsWrappedUnlessToldNot) {
  std::vector<Column> one = {column("ID", SqlType::integer())};
  Row row(1);
  row[0].set_integer(42);
  EXPECT_EQ(row_serde(formats("JSON"), one, true).serialize("t", row), "42");
  EXPECT_EQ(row_serde(formats("JSON"), one, false).serialize("t", row), R"({"ID":42})");
  Formats bare = formats("JSON");
  bare.wrap_single_value = false;
  auto serde = row_serde(bare, one, false);
  EXPECT_EQ(serde.serialize("t", row), "42");
  EXPECT_EQ(serde.deserialize("t", "7")[0].integer(), 7);
  // Several key columns are an object.
  std::vector<Column> two = {column("A", SqlType::integer()), column("B", SqlType::string())};
  Row pair(2);
  pair[0].set_integer(1);
  pair[1].set_string("x");
  EXPECT_EQ(row_serde(formats("JSON"), two, true).serialize("t", pair), R"({"A":1,"B":"x"})");
}

TEST(JsonFormat, ColumnsAreWrittenInTheirOrderAsJacksonWritesThem) {
  auto serde = row_serde(formats("JSON"), primitives(), false);
  Row row = sample();
  row[3].set_double(1e10);
  row[5].set_string("say \"hi\"\n\x01");
  EXPECT_EQ(serde.serialize("t", row),
            R"({"B":true,"I":-7,"L":10000000000,"D":1.0E10,"M":123.45,"S":"say \"hi\"\n\u0001",)"
            R"("Y":"AQI=","T":1700000000000})");
  EXPECT_EQ(text_of(serde.deserialize("t", serde.serialize("t", row))), text_of(row));
}

TEST(JsonFormat, BytesAreBase64) {
  auto serde = row_serde(formats("JSON"), {column("Y", SqlType::bytes())}, false);
  Row row(1);
  row[0].set_text(Value::Kind::kBytes, "hi!", 3);
  EXPECT_EQ(serde.serialize("t", row), R"({"Y":"aGkh"})");
  EXPECT_EQ(serde.deserialize("t", R"({"y":"aGkh"})")[0].text(), "hi!");
  EXPECT_THROW(serde.deserialize("t", R"({"Y":"a"})"), streams::SerializationException);
}

// Found by the fuzzer: digits past the type's precision, or that are not digits, do not read.
TEST(JsonFormat, ADecimalThatDoesNotFitItsTypeDoesNotRead) {
  auto serde = row_serde(formats("JSON"), {column("M", SqlType::decimal(5, 2))}, false);
  EXPECT_EQ(serde.deserialize("t", R"({"M":"123.456"})")[0].unscaled(), 12346);
  EXPECT_EQ(serde.deserialize("t", R"({"M":-0.5})")[0].unscaled(), -50);
  for (const char* bad : {R"({"M":"1234.5"})", R"({"M":"999.995"})", R"({"M":"1.2S5"})",
                          R"({"M":"-"})", R"({"M":1e300})"})
    EXPECT_THROW(serde.deserialize("t", bad), streams::SerializationException) << bad;
}

TEST(InternalFormat, EveryKindRoundTripsAndTruncatedBytesDoNotRead) {
  auto serde = internal_row_serde();
  Row row = sample();
  row.resize(10);
  row[8].set_items(Value::Kind::kArray,
                   std::make_shared<std::vector<Value>>(std::vector<Value>(2, row[1])));
  row[9].set_time(Value::Kind::kDate, 19000);
  std::string bytes = serde.serialize("t", row);
  EXPECT_EQ(text_of(serde.deserialize("t", bytes)), text_of(row));
  for (size_t cut : {size_t{0}, size_t{3}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_THROW(serde.deserialize("t", bytes.substr(0, cut)), streams::SerializationException)
        << cut;
  EXPECT_THROW(serde.deserialize("t", bytes + "x"), streams::SerializationException);
  EXPECT_THROW(serde.deserialize("t", std::string("\x01\0\0\0\x7f", 5)),
               streams::SerializationException);
}

TEST(KafkaFormat, AValueIsOneColumnInKafkasSerializerBytes) {
  auto serde = row_serde(formats("KAFKA"), {column("N", SqlType::bigint())}, false);
  Row row(1);
  row[0].set_bigint(258);
  EXPECT_EQ(serde.serialize("t", row), std::string("\0\0\0\0\0\0\x01\x02", 8));
  EXPECT_EQ(serde.deserialize("t", std::string("\0\0\0\0\0\0\0\x05", 8))[0].bigint(), 5);
  EXPECT_THROW(serde.deserialize("t", "abc"), streams::SerializationException);
}

}  // namespace
}  // namespace oxbow::sql

namespace oxbow::sql {
namespace {

// The record path reads into the row of the record before: every column is overwritten.
TEST(RecordPathReads, EachFormatOverwritesTheRowItReadsInto) {
  for (const std::string format : {"JSON", "DELIMITED"}) {
    auto serde = row_serde(formats(format), primitives(), false);
    ASSERT_TRUE(serde.deserialize_into) << format;
    Row row = sample();
    serde.deserialize_into("t", format == "JSON" ? R"({"I":3})" : ",3,,,,,,", row);
    EXPECT_EQ(text_of(row), "null 3 null null null null null null") << format;
    std::string bytes = "left over";
    serde.serialize_into("t", sample(), bytes);
    EXPECT_EQ(bytes, serde.serialize("t", sample())) << format;
  }
}

TEST(JsonFormat, ReadsCommonValuesInPlaceAndTheRestAsBefore) {
  auto serde = row_serde(formats("JSON"), primitives(), false);
  auto read = [&](const std::string& json) { return text_of(serde.deserialize("t", json)); };
  // Each column's own JSON type; DECIMAL from a number's own digits; keys in any case.
  EXPECT_EQ(read(R"({"b":true,"i":-7,"L":10000000000,"d":2,"m":1.005,"s":"\u00e9\"","T":5})"),
            "true -7 10000000000 2 1.01 'é\"' null 5");
  // Coercions go the slow way, with the same results: strings into numbers, numbers into a
  // STRING (their JSON text), floats into integers, integers past 64 bits.
  EXPECT_EQ(read(R"({"I":"12","L":1.9,"S":[1, {"a":2}],"D":"2.5","M":"3.333"})"),
            "null 12 1 2.5 3.33 '[1,{\"a\":2}]' null null");
  EXPECT_EQ(read(R"({"L":18446744073709551615})"), "null null -1 null null null null null");
  EXPECT_EQ(read(R"({"M":1e2})"), "null null null null 100.00 null null null");
  // Not JSON, or not an object: refused with what the bytes are.
  auto refusal = [&](const std::string& json) {
    try {
      serde.deserialize("t", json);
    } catch (const streams::SerializationException& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_EQ(refusal("not json"), "Invalid JSON: not json");
  EXPECT_EQ(refusal(R"({"I":1} x)"), R"(Invalid JSON: {"I":1} x)");
  EXPECT_EQ(refusal(R"({"I":1)"), R"(Invalid JSON: {"I":1)");
  EXPECT_EQ(refusal("null"), "Expected a JSON object, got null");
  EXPECT_EQ(refusal("[1]"), "Expected a JSON object, got array");
  EXPECT_EQ(refusal(R"({"I":true})"),
            "Can't convert type. sourceType: boolean, requiredType: INTEGER");
  EXPECT_EQ(refusal(R"({"M":123456})"),
            "Cannot fit decimal '123456' into DECIMAL(5, 2) without rounding.");
}

TEST(DelimitedFormat, NumbersParseAsJavaParsesThem) {
  auto serde = row_serde(formats("DELIMITED"), primitives(), false);
  auto read = [&](const std::string& text) { return text_of(serde.deserialize("t", text)); };
  EXPECT_EQ(read("TRUE,1,2,NaN,0.125,\"x\"\"y\",,3"), "true 1 2 nan 0.13 'x\"y' null 3");
  EXPECT_EQ(read("no,-1,-2,-Infinity,-1,,,0"), "false -1 -2 -inf -1.00 null null 0");
  // BYTES take base64's alphabet only, as Java's decoder does: spaces are not empty bytes
  // (found by the fuzzer, as was the next).
  EXPECT_THROW(serde.deserialize("t", ",,,,,,\"  \","), streams::SerializationException);
  // Quotes may open and close anywhere in a field.
  EXPECT_EQ(read(",,,,,a\"b\"c\"d\"e,,"), "null null null null null 'abcde' null null");
  for (const std::string bad : {"true,12abc,,,,,,", "true,,1.5,,,,,", "true,,,x,,,,",
                                "true,,,,1.2.3,,,", "true,99999999999,,,,,,"})
    EXPECT_THROW(serde.deserialize("t", bad), streams::SerializationException) << bad;
}

}  // namespace
}  // namespace oxbow::sql
