#include "registry/avro/binary.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace oxbow::registry::avro {
namespace {

using Json = nlohmann::json;

Schema parsed(const std::string& json) {
  auto result = parse(json);
  EXPECT_TRUE(result) << json << ": " << result.error;
  if (!result) std::abort();
  return std::move(*result.schema);
}

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    if (!out.empty()) out += ' ';
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string decode_error(const Schema& schema, std::string_view bytes,
                         const DecodeOptions& options = {}) {
  try {
    auto value = decode(schema, bytes, options);
    ADD_FAILURE() << "decoded " << value.dump();
  } catch (const BinaryError& e) {
    return e.what();
  }
  return {};
}

std::string encode_error(const Schema& schema, const Json& datum) {
  try {
    auto bytes = encode(schema, datum);
    ADD_FAILURE() << "encoded " << hex(bytes);
  } catch (const BinaryError& e) {
    return e.what();
  }
  return {};
}

TEST(AvroBinary, LongsAreZigZagVarintsAsTheSpecificationShows) {
  const auto schema = parsed(R"("long")");
  const std::pair<int64_t, std::string> cases[] = {{0, "00"},
                                                   {-1, "01"},
                                                   {1, "02"},
                                                   {-2, "03"},
                                                   {2, "04"},
                                                   {-64, "7f"},
                                                   {64, "80 01"},
                                                   {-8193, "81 80 01"},
                                                   {INT64_MAX, "fe ff ff ff ff ff ff ff ff 01"},
                                                   {INT64_MIN, "ff ff ff ff ff ff ff ff ff 01"}};
  for (const auto& [value, bytes] : cases) {
    EXPECT_EQ(hex(encode(schema, value)), bytes) << value;
    EXPECT_EQ(decode(schema, encode(schema, value)), value);
  }
}

TEST(AvroBinary, StringsAndPrimitivesHaveTheSpecificationsBytes) {
  EXPECT_EQ(hex(encode(parsed(R"("string")"), "foo")), "06 66 6f 6f");
  EXPECT_EQ(hex(encode(parsed(R"("boolean")"), true)), "01");
  EXPECT_EQ(hex(encode(parsed(R"("null")"), nullptr)), "");
  EXPECT_EQ(hex(encode(parsed(R"("int")"), -3)), "05");
  EXPECT_EQ(hex(encode(parsed(R"("float")"), 1.0)), "00 00 80 3f");
  EXPECT_EQ(hex(encode(parsed(R"("double")"), 1.0)), "00 00 00 00 00 00 f0 3f");
  // Bytes are code points 0-255 in the JSON encoding.
  EXPECT_EQ(hex(encode(parsed(R"("bytes")"), "\x01\xC3\xBF")), "04 01 ff");
  EXPECT_EQ(decode(parsed(R"("bytes")"), std::string("\x04\x01\xff", 3)), "\x01\xC3\xBF");
  EXPECT_EQ(hex(encode(parsed(R"({"type":"fixed","name":"F","size":2})"), "ab")), "61 62");
}

TEST(AvroBinary, EveryTypeRoundTrips) {
  const auto schema = parsed(R"({"type":"record","name":"All","namespace":"t","fields":[
    {"name":"n","type":"null"},{"name":"b","type":"boolean"},{"name":"i","type":"int"},
    {"name":"l","type":"long"},{"name":"f","type":"float"},{"name":"d","type":"double"},
    {"name":"by","type":"bytes"},{"name":"s","type":"string"},
    {"name":"e","type":{"type":"enum","name":"Suit","symbols":["HEARTS","SPADES"]}},
    {"name":"fx","type":{"type":"fixed","name":"Four","size":4}},
    {"name":"a","type":{"type":"array","items":"int"}},
    {"name":"m","type":{"type":"map","values":"string"}},
    {"name":"u","type":["null","string",{"type":"record","name":"Inner","fields":[
      {"name":"x","type":"int"}]}]},
    {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
    {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}}]})");
  const Json datum = {{"n", nullptr},
                      {"b", true},
                      {"i", -123456},
                      {"l", 1234567890123LL},
                      {"f", 1.1},
                      {"d", -2.5e100},
                      {"by", "\xC3\xBF\x00z"},
                      {"s", "h\xC3\xA9llo"},
                      {"e", "SPADES"},
                      {"fx", "abcd"},
                      {"a", {1, 2, 3}},
                      {"m", {{"k", "v"}, {"k2", ""}}},
                      {"u", {{"t.Inner", {{"x", 7}}}}},
                      {"ts", 1700000000000LL},
                      {"dec", "\x30\x39"}};
  EXPECT_EQ(decode(schema, encode(schema, datum)), datum);
  auto ordered = decode_ordered(schema, encode(schema, datum));
  EXPECT_EQ(ordered.begin().key(), "n");
  EXPECT_EQ(ordered.dump().substr(0, 30), R"({"n":null,"b":true,"i":-123456)");
}

TEST(AvroBinary, UnionsAcceptAPlainValueWhenOneBranchFits) {
  const auto schema = parsed(R"(["null","string",{"type":"array","items":"long"}])");
  EXPECT_EQ(hex(encode(schema, nullptr)), "00");
  EXPECT_EQ(hex(encode(schema, "a")), "02 02 61");
  EXPECT_EQ(hex(encode(schema, Json{{"string", "a"}})), "02 02 61");
  EXPECT_EQ(hex(encode(schema, Json::array({5}))), "04 02 0a 00");
  EXPECT_EQ(decode(schema, std::string("\x02\x02\x61", 3)), (Json{{"string", "a"}}));
  EXPECT_EQ(decode(schema, std::string("\x00", 1)), nullptr);

  const auto numbers = parsed(R"(["int","long"])");
  EXPECT_NE(encode_error(numbers, 5).find("several branches"), std::string::npos);
  EXPECT_EQ(hex(encode(numbers, Json{{"long", 5}})), "02 0a");
  EXPECT_NE(encode_error(numbers, "x").find("no branch"), std::string::npos);
}

TEST(AvroBinary, EncodingErrorsNameWhere) {
  const auto schema = parsed(R"({"type":"record","name":"R","fields":[
    {"name":"items","type":{"type":"array","items":{"type":"record","name":"I","fields":[
      {"name":"price","type":"int"}]}}},
    {"name":"note","type":"string","default":"none"}]})");
  EXPECT_EQ(encode_error(schema, Json::parse(R"({"items":[{"price":1},{"price":"x"}]})")),
            "$.items[1].price: expected an int");
  EXPECT_EQ(encode_error(schema, Json::parse(R"({"items":[],"other":1})")),
            "$: record R has no field \"other\"");
  EXPECT_EQ(encode_error(parsed(R"("int")"), 1LL << 40), "$: out of an int's range");
  EXPECT_NE(encode_error(parsed(R"("bytes")"), "\xE2\x82\xAC").find("code points"),
            std::string::npos);
  // A missing field takes its default.
  EXPECT_EQ(decode(schema, encode(schema, Json::parse(R"({"items":[]})"))),
            Json::parse(R"({"items":[],"note":"none"})"));
}

TEST(AvroBinary, MalformedBytesGiveErrorsNotCrashes) {
  const auto str = parsed(R"("string")");
  EXPECT_NE(decode_error(str,
                         "\x06"
                         "fo")
                .find("wants 3 bytes but 2 are left"),
            std::string::npos);
  EXPECT_NE(decode_error(str, "\x05").find("negative length"), std::string::npos);
  EXPECT_NE(decode_error(str, "").find("truncated varint"), std::string::npos);
  EXPECT_NE(decode_error(parsed(R"("long")"), std::string(11, '\xff')).find("longer than 10"),
            std::string::npos);
  EXPECT_NE(decode_error(parsed(R"("int")"), "\x80\x80\x80\x80\x10").find("int out of range"),
            std::string::npos);
  EXPECT_NE(decode_error(parsed(R"(["null","int"])"), "\x04").find("union branch index 2"),
            std::string::npos);
  EXPECT_NE(decode_error(parsed(R"({"type":"enum","name":"E","symbols":["A"]})"), "\x02")
                .find("enum symbol index 1"),
            std::string::npos);
  EXPECT_NE(decode_error(parsed(R"("boolean")"), "\x02").find("boolean byte"), std::string::npos);
  EXPECT_NE(decode_error(str,
                         "\x02"
                         "ab")
                .find("1 bytes left after the datum"),
            std::string::npos);
  EXPECT_EQ(decode(str,
                   "\x02"
                   "ab",
                   {.allow_trailing = true}),
            "a");
  // A huge count of items that take bytes is refused at once.
  const auto longs = parsed(R"({"type":"array","items":"long"})");
  EXPECT_NE(decode_error(longs, "\xfe\xff\xff\xff\xff\xff\xff\xff\x7f\x00").find("items with"),
            std::string::npos);
  EXPECT_NE(decode_error(longs, "\x01\x7f").find("block size"), std::string::npos);
  EXPECT_NE(decode_error(longs, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01").find("out of range"),
            std::string::npos);
  // So is a huge count of items that take none.
  const auto nulls = parsed(R"({"type":"array","items":"null"})");
  EXPECT_NE(decode_error(nulls, "\xfe\xff\xff\xff\xff\xff\xff\xff\x7f\x00").find("empty items"),
            std::string::npos);
  EXPECT_EQ(decode(nulls, std::string("\x06\x00", 2)), Json::parse("[null,null,null]"));
  // Maps with a count past the bytes left.
  EXPECT_NE(
      decode_error(parsed(R"({"type":"map","values":"null"})"), "\x7e\x00").find("items with"),
      std::string::npos);
}

TEST(AvroBinary, DeepNestingIsCapped) {
  const auto list = parsed(R"({"type":"record","name":"L","fields":[
    {"name":"next","type":["null","L"]}]})");
  std::string deep(5000, '\x02');
  deep += '\0';
  EXPECT_NE(decode_error(list, deep).find("nests deeper than"), std::string::npos);
  std::string shallow(10, '\x02');
  shallow += '\0';
  EXPECT_NO_THROW(decode(list, shallow));
}

TEST(AvroBinary, InvalidUtf8InStringsBecomesReplacementCharacters) {
  const auto value = decode(parsed(R"("string")"), std::string("\x06"
                                                               "a\xff"
                                                               "b",
                                                               4));
  EXPECT_EQ(value,
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_NO_THROW(value.dump());
}

TEST(AvroBinary, ResolvesWriterToReader) {
  const auto writer = parsed(R"({"type":"record","name":"R","namespace":"w","fields":[
    {"name":"a","type":"int"},{"name":"gone","type":"string"},
    {"name":"f","type":"float"},{"name":"s","type":"string"},
    {"name":"e","type":{"type":"enum","name":"E","symbols":["X","NEW"]}},
    {"name":"u","type":["null","int"]},{"name":"plain","type":"long"}]})");
  const auto reader = parsed(R"({"type":"record","name":"R","namespace":"r","fields":[
    {"name":"plain","type":["null","double"]},
    {"name":"s","type":"bytes"},{"name":"renamed","aliases":["a"],"type":"long"},
    {"name":"f","type":"double"},{"name":"added","type":"string","default":"dflt"},
    {"name":"opt","type":["null","string"],"default":null},
    {"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"],"default":"Y"}},
    {"name":"u","type":["null","long"]}]})");
  const Json datum = {{"a", 7},     {"gone", "x"},       {"f", 1.5},  {"s", "hi"},
                      {"e", "NEW"}, {"u", {{"int", 3}}}, {"plain", 9}};
  const auto bytes = encode(writer, datum);
  const auto ordered = decode_ordered(writer, reader, bytes);
  EXPECT_EQ(ordered.dump(),
            R"({"plain":{"double":9.0},"s":"hi","renamed":7,"f":1.5,"added":"dflt","opt":null,)"
            R"("e":"Y","u":{"long":3}})");
  const auto missing = parsed(R"({"type":"record","name":"R","fields":[
    {"name":"needed","type":"int"}]})");
  EXPECT_THROW(decode(writer, missing, bytes), BinaryError);
  EXPECT_THROW(decode(parsed(R"("string")"), parsed(R"("int")"),
                      "\x02"
                      "a"),
               BinaryError);
}

}  // namespace
}  // namespace oxbow::registry::avro
