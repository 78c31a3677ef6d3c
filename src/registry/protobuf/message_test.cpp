#include <gtest/gtest.h>

#include "registry/protobuf/schema.h"

namespace oxbow::registry::protobuf {
namespace {

using Indexes = std::vector<int32_t>;

std::string hex(const std::string& s) {
  std::string out;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "%s%02x", out.empty() ? "" : " ", c);
    out += buf;
  }
  return out;
}

TEST(ProtobufMessageIndexes, Encoding) {
  // §2.7's examples; [0] is the single byte 0.
  EXPECT_EQ(hex(encode_message_indexes({0})), "00");
  EXPECT_EQ(hex(encode_message_indexes({1})), "02 02");
  EXPECT_EQ(hex(encode_message_indexes({0, 2})), "04 00 04");
  EXPECT_EQ(hex(encode_message_indexes({64})), "02 80 01");
  EXPECT_EQ(hex(encode_message_indexes({})), "00");  // count 0 reads back as [0]
  for (const Indexes& v : {Indexes{0}, Indexes{1}, Indexes{0, 2}, Indexes{64}, Indexes{3, 0, 7},
                           Indexes{1000000, 2}}) {
    std::string bytes = encode_message_indexes(v) + "payload";
    size_t used = 0;
    auto back = decode_message_indexes(bytes, &used);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, v);
    EXPECT_EQ(bytes.substr(used), "payload");
  }
  size_t used = 0;
  // The long form of [0] is read too.
  EXPECT_EQ(decode_message_indexes(std::string("\x02\x00", 2), &used), Indexes{0});
  EXPECT_EQ(used, 2u);
  EXPECT_FALSE(decode_message_indexes("", &used));
  EXPECT_FALSE(decode_message_indexes("\x04\x02", &used));                  // count 2, one index
  EXPECT_FALSE(decode_message_indexes("\x01", &used));                      // negative count
  EXPECT_FALSE(decode_message_indexes("\xfe\xff\xff\xff\x0f", &used));      // huge count, no data
  EXPECT_FALSE(decode_message_indexes("\x80\x80\x80\x80\x80\x01", &used));  // overlong varint
}

TEST(ProtobufMessageIndexes, NamesAndPaths) {
  auto r = parse(R"(syntax = "proto3";
package p;
enum First { Z = 0; }
message A {
  map<string, int32> m = 1;
  message A1 {}
  enum Skip { S = 0; }
  message A2 { message Deep {} }
}
message B {}
)",
                 {});
  ASSERT_TRUE(r) << r.error;
  const Schema& s = *r.schema;
  EXPECT_EQ(message_name(s, {0}), "p.A");
  EXPECT_EQ(message_name(s, {1}), "p.B");
  // Positions among messages only: enums and the map's entry do not count.
  EXPECT_EQ(message_name(s, {0, 0}), "p.A.A1");
  EXPECT_EQ(message_name(s, {0, 1, 0}), "p.A.A2.Deep");
  EXPECT_FALSE(message_name(s, {2}));
  EXPECT_FALSE(message_name(s, {0, 2}));
  EXPECT_FALSE(message_name(s, {-1}));
  EXPECT_EQ(message_indexes(s, "p.A.A2.Deep"), (Indexes{0, 1, 0}));
  EXPECT_EQ(message_indexes(s, ".p.B"), (Indexes{1}));
  EXPECT_FALSE(message_indexes(s, "p.A.MEntry"));
  EXPECT_FALSE(message_indexes(s, "p.Nope"));
  EXPECT_EQ(s.message_names(), (std::vector<std::string>{"p.A", "p.A.MEntry", "p.A.A1", "p.A.A2",
                                                         "p.A.A2.Deep", "p.B"}));
}

TEST(ProtobufJson, RoundTrip) {
  auto r = parse(R"(syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/type/money.proto";
message Order {
  string id = 1;
  int64 quantity = 2;
  repeated string tags = 3;
  map<string, int32> counts = 4;
  google.protobuf.Timestamp at = 5;
  google.type.Money price = 6;
  Kind kind = 7;
  oneof pay { string card = 8; bool cash = 9; }
  enum Kind { KIND_UNSPECIFIED = 0; ONLINE = 1; }
}
)",
                 {});
  ASSERT_TRUE(r) << r.error;
  const Schema& s = *r.schema;
  const std::string json =
      R"({"id":"o-1","quantity":"3","tags":["a","b"],"counts":{"x":1},)"
      R"("at":"2024-01-02T03:04:05Z","price":{"currencyCode":"EUR","units":"12"},)"
      R"("kind":"ONLINE","cash":true})";
  auto bin = json_to_binary(s, "shop.Order", json);
  ASSERT_TRUE(bin) << bin.error;
  EXPECT_EQ(bin.value->substr(0, 5), std::string("\x0a\x03o-1", 5));
  auto back = binary_to_json(s, "shop.Order", *bin.value);
  ASSERT_TRUE(back) << back.error;
  EXPECT_EQ(*back.value, json);
  JsonOptions names;
  names.preserve_field_names = true;
  auto snake = binary_to_json(s, ".shop.Order", *bin.value, names);
  ASSERT_TRUE(snake);
  EXPECT_NE(snake.value->find("\"currency_code\":\"EUR\""), std::string::npos) << *snake.value;
  JsonOptions defaults;
  defaults.include_defaults = true;
  auto empty = binary_to_json(s, "shop.Order", "", defaults);
  ASSERT_TRUE(empty);
  EXPECT_NE(empty.value->find("\"quantity\":\"0\""), std::string::npos) << *empty.value;

  EXPECT_FALSE(json_to_binary(s, "shop.Order", R"({"nope":1})"));
  EXPECT_FALSE(json_to_binary(s, "shop.Order", R"({"id":5)"));
  EXPECT_FALSE(json_to_binary(s, "shop.Missing", "{}"));
  EXPECT_NE(json_to_binary(s, "shop.Missing", "{}").error.find("Unknown message"),
            std::string::npos);
  EXPECT_FALSE(binary_to_json(s, "shop.Order", "\xff\xff\xff"));
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "[";
  EXPECT_FALSE(json_to_binary(s, "shop.Order", deep));
}

TEST(ProtobufJson, ReferencedAndRecursiveMessages) {
  auto node = parse(
      "syntax = \"proto3\";\npackage g;\nmessage Node { string v = 1; Node next = 2; }\n", {});
  ASSERT_TRUE(node);
  auto list =
      parse("syntax = \"proto3\";\nimport \"g/node.proto\";\nmessage List { g.Node head = 1; }\n",
            {{"g/node.proto", &*node.schema}});
  ASSERT_TRUE(list) << list.error;
  auto bin = json_to_binary(*list.schema, "List", R"({"head":{"v":"a","next":{"v":"b"}}})");
  ASSERT_TRUE(bin) << bin.error;
  EXPECT_EQ(*binary_to_json(*list.schema, "List", *bin.value).value,
            R"({"head":{"v":"a","next":{"v":"b"}}})");
  // A recursive binary deeper than libprotobuf's limit (100) is refused, not a stack overflow.
  std::string deep;
  for (int i = 0; i < 1000; ++i) {
    std::string len;
    for (size_t n = deep.size();; n >>= 7) {
      len += static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      if (n < 0x80) break;
    }
    deep = "\x12" + len + deep;
  }
  EXPECT_FALSE(binary_to_json(*node.schema, "g.Node", deep));
}

}  // namespace
}  // namespace oxbow::registry::protobuf
