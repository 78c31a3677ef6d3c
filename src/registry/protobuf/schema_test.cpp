#include "registry/protobuf/schema.h"

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

namespace oxbow::registry::protobuf {
namespace {

Schema must_parse(std::string_view text, const std::vector<Reference>& refs = {}) {
  auto r = parse(text, refs);
  EXPECT_TRUE(r) << r.error;
  if (!r) std::abort();
  return *r.schema;
}

std::string parse_error(std::string_view text, const std::vector<Reference>& refs = {}) {
  auto r = parse(text, refs);
  EXPECT_FALSE(r) << text;
  return r.error;
}

// Confluent's own expectations (ProtobufSchemaTest testNormalization and testEnumReserved): the
// canonical text of a file already in its layout is the file itself.
constexpr const char* kNormalizationInput =
    "syntax = \"proto3\";\n"
    "package my.package;\n"
    "\n"
    "import \"google/protobuf/timestamp.proto\";\n"
    "import \"confluent/type/decimal.proto\";\n"
    "\n"
    "option java_package = \"my.package\";\n"
    "option java_outer_classname = \"Outer\";\n"
    "option java_multiple_files = true;\n"
    "option java_string_check_utf8 = true;\n"
    "option optimize_for = CODE_SIZE;\n"
    "option go_package = \"go.package\";\n"
    "option cc_generic_services = false;\n"
    "option java_generic_services = true;\n"
    "option py_generic_services = false;\n"
    "option php_generic_services = true;\n"
    "option cc_enable_arenas = true;\n"
    "option objc_class_prefix = \"objc\";\n"
    "option csharp_namespace = \"csharp\";\n"
    "option swift_prefix = \"swift\";\n"
    "option php_class_prefix = \"php\";\n"
    "option php_namespace = \"php_ns\";\n"
    "option php_metadata_namespace = \"php_md_ns\";\n"
    "option ruby_package = \"ruby\";\n"
    "\n"
    "message Nested {\n"
    "  confluent.type.Decimal test_cflt_decimal = 1 [(confluent.field_meta) = {\n"
    "    params: [\n"
    "      {\n"
    "        value: \"8\",\n"
    "        key: \"precision\"\n"
    "      },\n"
    "      {\n"
    "        value: \"3\",\n"
    "        key: \"scale\"\n"
    "      }\n"
    "    ],\n"
    "    doc: \"test decimal\"\n"
    "  }];\n"
    "  google.protobuf.Timestamp test_timestamp = 2;\n"
    "  map<string, InnerMessage> test_map = 3;\n"
    "\n"
    "  message InnerMessage {\n"
    "    reserved \"foo\", \"bar\";\n"
    "    reserved 14, 15, 9 to 11;\n"
    "    reserved 1, 20, 29 to 31;\n"
    "  \n"
    "    option no_standard_descriptor_accessor = true;\n"
    "    option deprecated = true;\n"
    "  \n"
    "    InnerMessage.DeepMessage deep2 = 4;\n"
    "    Nested.InnerMessage.DeepMessage deep3 = 5;\n"
    "    my.package.Nested.InnerMessage.DeepMessage deep4 = 6;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep5 = 7;\n"
    "    string id = 1 [json_name = \"id\"];\n"
    "    repeated int32 ids = 2 [packed = true];\n"
    "    DeepMessage deep1 = 3;\n"
    "  \n"
    "    oneof some_val {\n"
    "      string one_id = 12;\n"
    "      int32 other_id = 11;\n"
    "    }\n"
    "    oneof some_val2 {\n"
    "      string one_id2 = 13;\n"
    "      int32 other_id2 = 10 [\n"
    "        deprecated = true,\n"
    "        ctype = CORD,\n"
    "        jstype = JS_STRING,\n"
    "        json_name = \"otherId2\"\n"
    "      ];\n"
    "    }\n"
    "  \n"
    "    message DeepMessage {\n"
    "      string id = 1;\n"
    "    }\n"
    "    enum InnerEnum {\n"
    "      reserved 100 to 110;\n"
    "      option allow_alias = true;\n"
    "      TWO = 2;\n"
    "      ONE = 1;\n"
    "      ZERO = 0 [deprecated = true];\n"
    "      ALSO_ZERO = 0;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "enum Status {\n"
    "  INACTIVE = 1;\n"
    "  ACTIVE = 0;\n"
    "}\n"
    "\n"
    "service MyService {\n"
    "  option deprecated = true;\n"
    "\n"
    "  rpc MyMethod2 (stream Nested) returns (Nested.InnerMessage);\n"
    "  rpc MyMethod1 (Nested.InnerMessage) returns (stream Nested) {\n"
    "    option idempotency_level = NO_SIDE_EFFECTS;\n"
    "    option deprecated = true;\n"
    "  };\n"
    "}\n";
constexpr const char* kNormalizationExpected =
    "syntax = \"proto3\";\n"
    "package my.package;\n"
    "\n"
    "import \"confluent/type/decimal.proto\";\n"
    "import \"google/protobuf/timestamp.proto\";\n"
    "\n"
    "option cc_enable_arenas = true;\n"
    "option cc_generic_services = false;\n"
    "option csharp_namespace = \"csharp\";\n"
    "option go_package = \"go.package\";\n"
    "option java_generic_services = true;\n"
    "option java_multiple_files = true;\n"
    "option java_outer_classname = \"Outer\";\n"
    "option java_package = \"my.package\";\n"
    "option java_string_check_utf8 = true;\n"
    "option objc_class_prefix = \"objc\";\n"
    "option optimize_for = CODE_SIZE;\n"
    "option php_class_prefix = \"php\";\n"
    "option php_generic_services = true;\n"
    "option php_metadata_namespace = \"php_md_ns\";\n"
    "option php_namespace = \"php_ns\";\n"
    "option py_generic_services = false;\n"
    "option ruby_package = \"ruby\";\n"
    "option swift_prefix = \"swift\";\n"
    "\n"
    "message Nested {\n"
    "  .confluent.type.Decimal test_cflt_decimal = 1 [(confluent.field_meta) = {\n"
    "    doc: \"test decimal\",\n"
    "    params: [\n"
    "      {\n"
    "        key: \"precision\",\n"
    "        value: \"8\"\n"
    "      },\n"
    "      {\n"
    "        key: \"scale\",\n"
    "        value: \"3\"\n"
    "      }\n"
    "    ]\n"
    "  }];\n"
    "  .google.protobuf.Timestamp test_timestamp = 2;\n"
    "  map<string, .my.package.Nested.InnerMessage> test_map = 3;\n"
    "\n"
    "  message InnerMessage {\n"
    "    reserved 1;\n"
    "    reserved 9 to 11;\n"
    "    reserved 14;\n"
    "    reserved 15;\n"
    "    reserved 20;\n"
    "    reserved 29 to 31;\n"
    "    reserved \"bar\";\n"
    "    reserved \"foo\";\n"
    "  \n"
    "    option deprecated = true;\n"
    "    option no_standard_descriptor_accessor = true;\n"
    "  \n"
    "    string id = 1 [json_name = \"id\"];\n"
    "    repeated int32 ids = 2 [packed = true];\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep1 = 3;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep2 = 4;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep3 = 5;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep4 = 6;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep5 = 7;\n"
    "  \n"
    "    oneof some_val2 {\n"
    "      int32 other_id2 = 10 [\n"
    "        ctype = CORD,\n"
    "        deprecated = true,\n"
    "        json_name = \"otherId2\",\n"
    "        jstype = JS_STRING\n"
    "      ];\n"
    "      string one_id2 = 13;\n"
    "    }\n"
    "    oneof some_val {\n"
    "      int32 other_id = 11;\n"
    "      string one_id = 12;\n"
    "    }\n"
    "  \n"
    "    message DeepMessage {\n"
    "      string id = 1;\n"
    "    }\n"
    "    enum InnerEnum {\n"
    "      reserved 100 to 110;\n"
    "      option allow_alias = true;\n"
    "      ALSO_ZERO = 0;\n"
    "      ZERO = 0 [deprecated = true];\n"
    "      ONE = 1;\n"
    "      TWO = 2;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "enum Status {\n"
    "  ACTIVE = 0;\n"
    "  INACTIVE = 1;\n"
    "}\n"
    "\n"
    "service MyService {\n"
    "  option deprecated = true;\n"
    "\n"
    "  rpc MyMethod2 (stream .my.package.Nested) returns (.my.package.Nested.InnerMessage);\n"
    "  rpc MyMethod1 (.my.package.Nested.InnerMessage) returns (stream .my.package.Nested) {\n"
    "    option deprecated = true;\n"
    "    option idempotency_level = NO_SIDE_EFFECTS;\n"
    "  };\n"
    "}\n";
constexpr const char* kEnumReservedInput =
    "\n"
    "import \"google/protobuf/descriptor.proto\";\n"
    "\n"
    "message FooOptions {\n"
    "  optional string name = 1;\n"
    "  optional FooParameterType type = 2;\n"
    "}\n"
    "enum FooParameterType {\n"
    "  reserved 20, 100 to max;\n"
    "  reserved 10;\n"
    "  reserved 1 to 3;\n"
    "  reserved \"BAD\", \"OLD\";\n"
    "  NUMBER = 1;\n"
    "  STRING = 2;\n"
    "}\n";
constexpr const char* kEnumReservedExpected =
    "\n"
    "import \"google/protobuf/descriptor.proto\";\n"
    "\n"
    "message FooOptions {\n"
    "  optional string name = 1;\n"
    "  optional .FooParameterType type = 2;\n"
    "}\n"
    "enum FooParameterType {\n"
    "  reserved 1 to 3;\n"
    "  reserved 10;\n"
    "  reserved 20;\n"
    "  reserved 100 to max;\n"
    "  reserved \"BAD\";\n"
    "  reserved \"OLD\";\n"
    "  NUMBER = 1;\n"
    "  STRING = 2;\n"
    "}\n";

TEST(ProtobufSchema, ConfluentNormalizationExample) {
  auto s = must_parse(kNormalizationInput);
  EXPECT_EQ(s.canonical(), kNormalizationInput);
  EXPECT_EQ(s.normalized(), kNormalizationExpected);
  // Normalizing is idempotent.
  EXPECT_EQ(must_parse(s.normalized()).normalized(), kNormalizationExpected);
  EXPECT_EQ(s.name(), "my.package.Nested");
}

TEST(ProtobufSchema, ConfluentEnumReservedExample) {
  auto s = must_parse(kEnumReservedInput);
  EXPECT_EQ(s.canonical(), kEnumReservedInput);
  EXPECT_EQ(s.normalized(), kEnumReservedExpected);
  EXPECT_EQ(s.name(), "FooOptions");
}

TEST(ProtobufSchema, CanonicalLayout) {
  // Comments and spacing go; messages come before enums; nested blocks are re-indented, so a
  // blank separator inside one is two spaces; a proto3 field has no label unless written.
  auto s = must_parse(R"(
// a comment
syntax = "proto3"; package p;
enum E { A = 0; }
message M { /* inline */ string a = 1; optional int32 b = 2; repeated bytes c = 3;
  message N { int32 x = 1; oneof o { string y = 2; } }
  map<int32, N> m = 4;
}
)");
  EXPECT_EQ(s.canonical(),
            "syntax = \"proto3\";\n"
            "package p;\n"
            "\n"
            "message M {\n"
            "  string a = 1;\n"
            "  optional int32 b = 2;\n"
            "  repeated bytes c = 3;\n"
            "  map<int32, N> m = 4;\n"
            "\n"
            "  message N {\n"
            "    int32 x = 1;\n"
            "  \n"
            "    oneof o {\n"
            "      string y = 2;\n"
            "    }\n"
            "  }\n"
            "}\n"
            "enum E {\n"
            "  A = 0;\n"
            "}\n");
  EXPECT_EQ(s.name(), "p.M");
}

TEST(ProtobufSchema, Proto2DefaultsOptionsAndServices) {
  auto s = must_parse(R"(syntax = "proto2";
message Req {
  required string id = 1 [default = "a\"b"];
  optional int32 n = 2 [default = 7, deprecated = true];
  optional Kind k = 3 [default = B];
  extensions 100 to max;
  enum Kind { A = 1; B = 2; }
}
message Resp { optional bool ok = 1; }
service S {
  rpc Get (Req) returns (stream Resp);
}
)");
  EXPECT_EQ(s.canonical(),
            "syntax = \"proto2\";\n"
            "\n"
            "message Req {\n"
            "  required string id = 1 [default = \"a\\\"b\"];\n"
            "  optional int32 n = 2 [\n"
            "    deprecated = true,\n"
            "    default = 7\n"
            "  ];\n"
            "  optional Kind k = 3 [default = B];\n"
            "\n"
            "  extensions 100 to max;\n"
            "\n"
            "  enum Kind {\n"
            "    A = 1;\n"
            "    B = 2;\n"
            "  }\n"
            "}\n"
            "message Resp {\n"
            "  optional bool ok = 1;\n"
            "}\n"
            "\n"
            "service S {\n"
            "  rpc Get (Req) returns (stream Resp);\n"
            "}\n");
  // Normalize drops the proto2 syntax line and resolves names; options sort by name.
  EXPECT_NE(s.normalized().find("  optional .Req.Kind k = 3 [default = B];\n"), std::string::npos)
      << s.normalized();
  EXPECT_NE(s.normalized().find("    default = 7,\n    deprecated = true\n"), std::string::npos);
  EXPECT_EQ(s.normalized().find("syntax"), std::string::npos);
  EXPECT_NE(s.normalized().find("rpc Get (.Req) returns (stream .Resp);"), std::string::npos);
}

TEST(ProtobufSchema, AggregateOptionPrintsOneKeyPerLine) {
  auto s = must_parse(R"(syntax = "proto3";
import "confluent/meta.proto";
message M {
  option (confluent.message_meta) = { doc: "hi" tags: ["a", "b"] };
  string f = 1 [(confluent.field_meta).doc = "d"];
}
)");
  EXPECT_NE(s.canonical().find("  option (confluent.message_meta) = {\n"
                               "    doc: \"hi\",\n"
                               "    tags: [\n"
                               "      \"a\",\n"
                               "      \"b\"\n"
                               "    ]\n"
                               "  };\n"),
            std::string::npos)
      << s.canonical();
  EXPECT_NE(s.canonical().find("  string f = 1 [(confluent.field_meta).doc = \"d\"];\n"),
            std::string::npos);
}

TEST(ProtobufSchema, UndeclaredCustomOptionIsAccepted) {
  // Confluent never interprets options: an extension nothing declares is no error.
  auto s = must_parse("syntax = \"proto3\";\nmessage M {\n  int32 a = 1 [(nowhere.opt) = 3];\n}\n");
  EXPECT_EQ(s.canonical(),
            "syntax = \"proto3\";\n\nmessage M {\n  int32 a = 1 [(nowhere.opt) = 3];\n}\n");
}

TEST(ProtobufSchema, References) {
  auto common = must_parse(R"(syntax = "proto3";
package shared;
message Address { string street = 1; }
enum Color { RED = 0; }
)");
  auto main = must_parse(R"(syntax = "proto3";
package app;
import "shared/common.proto";
message Person {
  shared.Address home = 1;
  shared.Color color = 2;
}
)",
                         {{"shared/common.proto", &common}});
  EXPECT_EQ(main.name(), "app.Person");
  EXPECT_NE(main.normalized().find(".shared.Address home = 1;"), std::string::npos);
  // A reference of a reference resolves through the referenced schema.
  auto outer = must_parse(R"(syntax = "proto3";
import "app/person.proto";
message Team { repeated app.Person people = 1; }
)",
                          {{"app/person.proto", &main}});
  EXPECT_EQ(outer.name(), "Team");
}

TEST(ProtobufSchema, WellKnownImportsNeedNoReference) {
  const char* files[] = {
      "google/protobuf/any.proto",
      "google/protobuf/api.proto",
      "google/protobuf/descriptor.proto",
      "google/protobuf/duration.proto",
      "google/protobuf/empty.proto",
      "google/protobuf/field_mask.proto",
      "google/protobuf/source_context.proto",
      "google/protobuf/struct.proto",
      "google/protobuf/timestamp.proto",
      "google/protobuf/type.proto",
      "google/protobuf/wrappers.proto",
      "google/type/calendar_period.proto",
      "google/type/color.proto",
      "google/type/date.proto",
      "google/type/datetime.proto",
      "google/type/dayofweek.proto",
      "google/type/decimal.proto",
      "google/type/expr.proto",
      "google/type/fraction.proto",
      "google/type/interval.proto",
      "google/type/latlng.proto",
      "google/type/money.proto",
      "google/type/month.proto",
      "google/type/phone_number.proto",
      "google/type/postal_address.proto",
      "google/type/quaternion.proto",
      "google/type/timeofday.proto",
      "confluent/meta.proto",
      "confluent/type/decimal.proto",
  };
  for (const char* f : files) {
    std::string text = std::string("syntax = \"proto3\";\nimport \"") + f + "\";\nmessage M {}\n";
    EXPECT_TRUE(parse(text, {})) << f << ": " << parse(text, {}).error;
  }
  auto s = must_parse(R"(syntax = "proto3";
import "google/type/money.proto";
import "google/type/datetime.proto";
import "confluent/type/decimal.proto";
import "google/protobuf/struct.proto";
message Order {
  google.type.Money price = 1;
  google.type.DateTime at = 2;
  confluent.type.Decimal amount = 3;
  google.protobuf.Struct extra = 4;
}
)");
  EXPECT_NE(s.normalized().find(".google.type.Money price = 1;"), std::string::npos);
}

TEST(ProtobufSchema, DescriptorInput) {
  // The same file as a base64 FileDescriptorProto: maps stay entry messages, names stay as the
  // descriptor has them, and proto3's implicit labels print as none.
  const char* text = R"(syntax = "proto3";
package d;
message M {
  map<string, int32> counts = 1;
  optional string note = 2;
  oneof pick { int64 a = 3; string b = 4; }
}
)";
  google::protobuf::io::ArrayInputStream in(text, static_cast<int>(strlen(text)));
  struct : google::protobuf::io::ErrorCollector {
    void AddError(int, int, const std::string&) override {}
  } quiet;
  google::protobuf::io::Tokenizer tokenizer(&in, &quiet);
  google::protobuf::compiler::Parser parser;
  google::protobuf::FileDescriptorProto proto;
  ASSERT_TRUE(parser.Parse(&tokenizer, &proto));
  proto.set_name("d.proto");
  proto.mutable_message_type(0)->mutable_field(0)->set_type_name(".d.M.CountsEntry");
  std::string bytes = proto.SerializeAsString();
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16;
    if (n > 1) v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8;
    if (n > 2) v |= static_cast<uint8_t>(bytes[i + 2]);
    b64 += kAlphabet[(v >> 18) & 63];
    b64 += kAlphabet[(v >> 12) & 63];
    b64 += n > 1 ? kAlphabet[(v >> 6) & 63] : '=';
    b64 += n > 2 ? kAlphabet[v & 63] : '=';
  }
  auto s = must_parse(b64);
  EXPECT_EQ(s.canonical(),
            "syntax = \"proto3\";\n"
            "package d;\n"
            "\n"
            "message M {\n"
            "  repeated .d.M.CountsEntry counts = 1;\n"
            "  optional string note = 2;\n"
            "\n"
            "  oneof pick {\n"
            "    int64 a = 3;\n"
            "    string b = 4;\n"
            "  }\n"
            "\n"
            "  message CountsEntry {\n"
            "    option map_entry = true;\n"
            "  \n"
            "    string key = 1;\n"
            "    int32 value = 2;\n"
            "  }\n"
            "}\n");
  // Normalized, it is the text's normalized form.
  EXPECT_EQ(s.normalized(), must_parse(text).normalized());
}

TEST(ProtobufSchema, Errors) {
  EXPECT_EQ(parse_error("syntax = \"proto3\";\nmessage M { int32 a = 1 }\n"),
            "Could not parse Protobuf - 2:25: Expected \";\".");
  EXPECT_EQ(parse_error("syntax = \"proto3\";\nmessage M { Missing a = 1; }\n"),
            "Could not resolve type: Missing");
  EXPECT_NE(parse_error("syntax = \"proto3\";\nimport \"other.proto\";\nmessage M {}\n")
                .find("import \"other.proto\""),
            std::string::npos);
  EXPECT_NE(parse_error("syntax = \"proto3\";\nmessage M { int32 a = 1; int32 b = 1; }\n")
                .find("has already been used"),
            std::string::npos);
  EXPECT_EQ(parse_error("syntax = \"proto3\";\n"),
            "Protobuf schema definition contains no type definitions");
  EXPECT_EQ(parse_error("syntax = \"proto3\";\nmessage M { int32 a = 1; }\nmessage M {}\n")
                .find("Could not parse Protobuf - "),
            0u);
  // Not text and not a descriptor.
  EXPECT_EQ(parse_error("{\"type\":\"record\"}").find("Could not parse Protobuf - "), 0u);
  EXPECT_EQ(parse_error("AAAA").find("Could not parse Protobuf"), 0u);
  // A type imported only by a file that was not imported publicly is not visible.
  EXPECT_FALSE(parse("syntax = \"proto3\";\nmessage M { google.type.PhoneNumber p = 1; }\n", {}));
}

TEST(ProtobufSchema, HugeAndDeepInputsAreRefused) {
  std::string deep = "syntax = \"proto3\";\n";
  for (int i = 0; i < 10000; ++i) deep += "message M" + std::to_string(i) + " {";
  EXPECT_NE(parse_error(deep).find("nests deeper"), std::string::npos);
  std::string aggregate = "syntax = \"proto3\";\noption (x) = ";
  for (int i = 0; i < 100000; ++i) aggregate += "{a:";
  EXPECT_FALSE(parse(aggregate, {}));
  std::string huge(kMaxSchemaBytes + 1, ' ');
  EXPECT_NE(parse_error(huge).find("larger than"), std::string::npos);
  // Many messages, each fine: accepted.
  std::string wide = "syntax = \"proto3\";\n";
  for (int i = 0; i < 2000; ++i) wide += "message M" + std::to_string(i) + " { int32 a = 1; }\n";
  EXPECT_TRUE(parse(wide, {}));
}

}  // namespace
}  // namespace oxbow::registry::protobuf
