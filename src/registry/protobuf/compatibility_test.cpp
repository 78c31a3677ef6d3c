#include <gtest/gtest.h>

#include "registry/protobuf/schema.h"

namespace oxbow::registry::protobuf {
namespace {

Schema must_parse(const std::string& text, const std::vector<Reference>& refs = {}) {
  auto r = parse(text, refs);
  EXPECT_TRUE(r) << r.error << "\n" << text;
  if (!r) std::abort();
  return *r.schema;
}

// proto3 file with one message M of the given body (and optional extra declarations).
std::string m3(const std::string& body, const std::string& extra = "") {
  return "syntax = \"proto3\";\npackage t;\nmessage M {\n" + body + "\n}\n" + extra;
}
std::string m2(const std::string& body, const std::string& extra = "") {
  return "syntax = \"proto2\";\npackage t;\nmessage M {\n" + body + "\n}\n" + extra;
}

// BACKWARD: the new schema reads the old one's data (diff from old to new); FORWARD the reverse;
// FULL both.
bool backward_ok(const Schema& old_s, const Schema& new_s) {
  return reader_problems(new_s, old_s, "new", "old").empty();
}

struct Case {
  const char* rule;
  std::string old_text, new_text;
  bool backward, forward;
};

const std::string kMsgs = "message A { int32 x = 1; }\nmessage B { int32 x = 1; }\n";

const Case kCases[] = {
    {"identical", m3("int32 a = 1;"), m3("int32 a = 1;"), true, true},
    {"FIELD_ADDED / FIELD_REMOVED are compatible", m3("int32 a = 1;"),
     m3("int32 a = 1;\nstring b = 2;"), true, true},
    {"FIELD_NAME_CHANGED (same tag) is compatible", m3("int32 a = 1;"), m3("int32 renamed = 1;"),
     true, true},
    {"int32 -> int64: same GENERAL_NUMBER group", m3("int32 a = 1;"), m3("int64 a = 1;"), true,
     true},
    {"int32 -> uint64: same group", m3("int32 a = 1;"), m3("uint64 a = 1;"), true, true},
    {"int32 -> bool: same group", m3("int32 a = 1;"), m3("bool a = 1;"), true, true},
    {"int32 -> enum: enums count as GENERAL_NUMBER", m3("int32 a = 1;"),
     m3("E a = 1;", "enum E { Z = 0; }\n"), true, true},
    {"int32 -> sint32: FIELD_SCALAR_KIND_CHANGED", m3("int32 a = 1;"), m3("sint32 a = 1;"), false,
     false},
    {"sint32 -> sint64: SIGNED_NUMBER group", m3("sint32 a = 1;"), m3("sint64 a = 1;"), true, true},
    {"string -> bytes: STRING_OR_BYTES group", m3("string a = 1;"), m3("bytes a = 1;"), true, true},
    {"fixed32 -> sfixed32: FIXED32 group", m3("fixed32 a = 1;"), m3("sfixed32 a = 1;"), true, true},
    {"fixed32 -> fixed64: scalar kind changed", m3("fixed32 a = 1;"), m3("fixed64 a = 1;"), false,
     false},
    {"float -> double: scalar kind changed", m3("float a = 1;"), m3("double a = 1;"), false, false},
    {"int64 -> double: scalar kind changed", m3("int64 a = 1;"), m3("double a = 1;"), false, false},
    {"string -> int32: scalar kind changed", m3("string a = 1;"), m3("int32 a = 1;"), false, false},
    {"enum -> string: scalar kind changed", m3("E a = 1;", "enum E { Z = 0; }\n"),
     m3("string a = 1;", "enum E { Z = 0; }\n"), false, false},
    {"string -> message: FIELD_KIND_CHANGED", m3("string a = 1;", kMsgs), m3("A a = 1;", kMsgs),
     false, false},
    {"bytes -> message: a kind change too (unlike protobuf's own guide)", m3("bytes a = 1;", kMsgs),
     m3("A a = 1;", kMsgs), false, false},
    {"message -> map: FIELD_KIND_CHANGED", m3("A a = 1;", kMsgs),
     m3("map<string, A> a = 1;", kMsgs), false, false},
    {"map value int32 -> int64: compared as scalars", m3("map<string, int32> a = 1;"),
     m3("map<string, int64> a = 1;"), true, true},
    {"map value int32 -> string: scalar kind changed", m3("map<string, int32> a = 1;"),
     m3("map<string, string> a = 1;"), false, false},
    {"map key string -> int32: scalar kind changed", m3("map<string, string> a = 1;"),
     m3("map<int32, string> a = 1;"), false, false},
    {"map value message renamed: FIELD_NAMED_TYPE_CHANGED", m3("map<string, A> a = 1;", kMsgs),
     m3("map<string, B> a = 1;", kMsgs), false, false},
    {"message type A -> B: FIELD_NAMED_TYPE_CHANGED", m3("A a = 1;", kMsgs), m3("B a = 1;", kMsgs),
     false, false},
    {"map field removed: its entry is no MESSAGE_REMOVED", m3("map<string, int32> a = 1;"),
     m3("int32 b = 2;"), true, true},
    {"implicit -> repeated: labels compared only when both are written", m3("int32 a = 1;"),
     m3("repeated int32 a = 1;"), true, true},
    {"optional -> repeated numeric: FIELD_NUMERIC_LABEL_CHANGED", m3("optional int32 a = 1;"),
     m3("repeated int32 a = 1;"), false, false},
    {"optional -> repeated string: FIELD_STRING_OR_BYTES_LABEL_CHANGED is compatible",
     m3("optional string a = 1;"), m3("repeated string a = 1;"), true, true},
    {"proto2 optional -> required numeric: label changed", m2("optional int32 a = 1;"),
     m2("required int32 a = 1;"), false, false},
    {"proto2 required field added: REQUIRED_FIELD_ADDED / _REMOVED", m2("optional int32 a = 1;"),
     m2("optional int32 a = 1;\nrequired int32 b = 2;"), false, false},
    {"proto2 required field removed: REQUIRED_FIELD_REMOVED / _ADDED",
     m2("optional int32 a = 1;\nrequired int32 b = 2;"), m2("optional int32 a = 1;"), false, false},
    {"proto2 optional field added", m2("optional int32 a = 1;"),
     m2("optional int32 a = 1;\noptional string b = 2;"), true, true},
    {"proto2 -> proto3 same fields: no label on one side", m2("optional int32 a = 1;"),
     m3("int32 a = 1;"), true, true},
    {"top-level message removed: MESSAGE_REMOVED (added is compatible)",
     m3("int32 a = 1;", "message Other { string s = 1; }\n"), m3("int32 a = 1;"), false, true},
    {"top-level message added: MESSAGE_ADDED", m3("int32 a = 1;"),
     m3("int32 a = 1;", "message Other { string s = 1; }\n"), true, false},
    {"messages reordered: MESSAGE_MOVED is compatible", m3("int32 a = 1;", kMsgs),
     "syntax = \"proto3\";\npackage t;\n" + kMsgs + "message M {\nint32 a = 1;\n}\n", true, true},
    {"nested message removed: MESSAGE_REMOVED at #/M/N", m3("int32 a = 1;\nmessage N {}"),
     m3("int32 a = 1;"), false, true},
    {"nested message field changed kind", m3("N n = 1;\nmessage N { string s = 1; }"),
     m3("N n = 1;\nmessage N { int32 s = 1; }"), false, false},
    {"enum removed: ENUM_REMOVED is compatible", m3("int32 a = 1;", "enum E { Z = 0; }\n"),
     m3("int32 a = 1;"), true, true},
    {"enum constant added, renamed, removed: all compatible",
     m3("int32 a = 1;", "enum E { Z = 0; ONE = 1; TWO = 2; }\n"),
     m3("int32 a = 1;", "enum E { Z = 0; UNO = 1; THREE = 3; }\n"), true, true},
    {"package changed: PACKAGE_CHANGED", m3("int32 a = 1;"),
     "syntax = \"proto3\";\npackage other;\nmessage M {\nint32 a = 1;\n}\n", false, false},
    {"new oneof of new fields: ONEOF_ADDED, ONEOF_FIELD_ADDED; its whole removal is fine",
     m3("int32 a = 1;"), m3("int32 a = 1;\noneof o { string b = 2; int64 c = 3; }"), true, true},
    {"oneof member removed: ONEOF_FIELD_REMOVED", m3("oneof o { string b = 2; int64 c = 3; }"),
     m3("oneof o { string b = 2; }"), false, true},
    {"oneof member changed type: scalar kind at #/M/o/3",
     m3("oneof o { string b = 2; int64 c = 3; }"), m3("oneof o { string b = 2; string c = 3; }"),
     false, false},
    {"one field moved into a new oneof: nothing became exclusive", m3("int32 a = 1;"),
     m3("oneof o { int32 a = 1; }"), true, true},
    {"two fields moved into one oneof: MULTIPLE_FIELDS_MOVED_TO_ONEOF",
     m3("int32 a = 1;\nstring b = 2;"), m3("oneof o { int32 a = 1; string b = 2; }"), false, true},
    {"field moved into an existing oneof: FIELD_MOVED_TO_EXISTING_ONEOF",
     m3("int32 a = 1;\noneof o { string b = 2; }"), m3("oneof o { int32 a = 1; string b = 2; }"),
     false, true},
    {"oneof renamed: ONEOF_REMOVED + ONEOF_ADDED only", m3("oneof o { string b = 2; }"),
     m3("oneof p { string b = 2; }"), true, true},
    {"oneof member moved to top level: ONEOF_FIELD_MOVED_TO_TOP_LEVEL is compatible",
     m3("oneof o { string b = 2; }"), m3("string b = 2;"), true, true},
    {"service added: services are not compared", m3("int32 a = 1;"),
     m3("int32 a = 1;", "service S { rpc Get (M) returns (M); }\n"), true, true},
    {"well-known type Timestamp -> Duration: FIELD_NAMED_TYPE_CHANGED",
     "syntax = \"proto3\";\npackage t;\nimport \"google/protobuf/timestamp.proto\";\n"
     "import \"google/protobuf/duration.proto\";\nmessage M { google.protobuf.Timestamp a = 1; }\n",
     "syntax = \"proto3\";\npackage t;\nimport \"google/protobuf/timestamp.proto\";\n"
     "import \"google/protobuf/duration.proto\";\nmessage M { google.protobuf.Duration a = 1; }\n",
     false, false},
    {"same well-known type on both sides: compared recursively, equal",
     "syntax = \"proto3\";\nimport \"google/protobuf/timestamp.proto\";\n"
     "message M { google.protobuf.Timestamp a = 1; }\n",
     "syntax = \"proto3\";\nimport \"google/protobuf/timestamp.proto\";\n"
     "message M { google.protobuf.Timestamp b = 1; int32 c = 2; }\n",
     true, true},
};

TEST(ProtobufCompatibility, Table) {
  for (const Case& c : kCases) {
    Schema o = must_parse(c.old_text), n = must_parse(c.new_text);
    EXPECT_EQ(backward_ok(o, n), c.backward) << "BACKWARD: " << c.rule;
    EXPECT_EQ(backward_ok(n, o), c.forward) << "FORWARD: " << c.rule;
    EXPECT_EQ(backward_ok(o, n) && backward_ok(n, o), c.backward && c.forward)
        << "FULL: " << c.rule;
  }
}

std::vector<std::string> types(const Schema& original, const Schema& update) {
  std::vector<std::string> out;
  for (const auto& d : differences(original, update))
    out.push_back(std::string(type_name(d.type)) + " " + d.path);
  return out;
}

TEST(ProtobufCompatibility, DifferencesAndPaths) {
  using V = std::vector<std::string>;
  EXPECT_EQ(types(must_parse(m3("N n = 1;\nmessage N { string s = 1; }")),
                  must_parse(m3("N n = 1;\nmessage N { int32 s = 1; }"))),
            (V{"FIELD_SCALAR_KIND_CHANGED #/M/N/1"}));
  EXPECT_EQ(types(must_parse(m3("oneof o { string b = 2; int64 c = 3; }")),
                  must_parse(m3("oneof o { string b = 2; string c = 3; }"))),
            (V{"FIELD_SCALAR_KIND_CHANGED #/M/o/3"}));
  EXPECT_EQ(types(must_parse(m3("int32 a = 1;\nstring b = 2;")),
                  must_parse(m3("oneof o { int32 a = 1; string b = 2; }"))),
            (V{"MULTIPLE_FIELDS_MOVED_TO_ONEOF #/M/o", "ONEOF_ADDED #/M/o"}));
  EXPECT_EQ(types(must_parse(m3("oneof o { string b = 2; }")), must_parse(m3("string b = 2;"))),
            (V{"ONEOF_REMOVED #/M/o", "ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/M/2"}));
  EXPECT_EQ(types(must_parse(m3("int32 a = 1;", kMsgs)),
                  must_parse("syntax = \"proto3\";\npackage t;\n" + kMsgs +
                             "message M {\nint32 a = 1;\n}\n")),
            (V{"MESSAGE_MOVED #/A", "MESSAGE_MOVED #/B", "MESSAGE_MOVED #/M"}));
  EXPECT_EQ(types(must_parse(m3("int32 a = 1;", "enum E { Z = 0; ONE = 1; }\n")),
                  must_parse(m3("int32 a = 1;", "enum E { Z = 0; UNO = 1; TWO = 2; }\n"))),
            (V{"ENUM_CONST_CHANGED #/E/1", "ENUM_CONST_ADDED #/E/2"}));
}

TEST(ProtobufCompatibility, ReferencedTypeComparedWithPathsFromItsName) {
  auto v1 =
      must_parse("syntax = \"proto3\";\npackage s;\nmessage Address { string street = 1; }\n");
  auto v2 = must_parse("syntax = \"proto3\";\npackage s;\nmessage Address { int32 street = 1; }\n");
  const std::string person = R"(syntax = "proto3";
package app;
import "s/address.proto";
message Person { s.Address home = 1; }
)";
  auto old_p = must_parse(person, {{"s/address.proto", &v1}});
  auto new_p = must_parse(person, {{"s/address.proto", &v2}});
  auto same = must_parse(person, {{"s/address.proto", &v1}});
  EXPECT_EQ(types(old_p, new_p), (std::vector<std::string>{"FIELD_SCALAR_KIND_CHANGED #/Address/1",
                                                           "FIELD_NAMED_TYPE_CHANGED #/Person/1"}));
  EXPECT_TRUE(types(old_p, same).empty());
}

TEST(ProtobufCompatibility, ConfluentMessages) {
  // docs/registry/confluent-json-protobuf.md §2.6's example (FULL, string f2 -> int32 f2 in
  // pkg3.Schema1): the old schema reading new data comes first, then the new reading old.
  auto o = must_parse(
      "syntax = \"proto3\";\npackage pkg3;\nmessage Schema1 {\n  string f1 = 1;\n  string f2 = "
      "2;\n}\n");
  auto n = must_parse(
      "syntax = \"proto3\";\npackage pkg3;\nmessage Schema1 {\n  string f1 = 1;\n  int32 f2 = "
      "2;\n}\n");
  EXPECT_EQ(reader_problems(o, n, "old", "new"),
            (std::vector<std::string>{
                "{errorType:\"FIELD_SCALAR_KIND_CHANGED\", description:\"The kind of a SCALAR "
                "field at path '#/Schema1/2' in the old schema does not match its kind in the new "
                "schema\"}"}));
  EXPECT_EQ(reader_problems(n, o, "new", "old"),
            (std::vector<std::string>{
                "{errorType:\"FIELD_SCALAR_KIND_CHANGED\", description:\"The kind of a SCALAR "
                "field at path '#/Schema1/2' in the new schema does not match its kind in the old "
                "schema\"}"}));

  auto with_other = must_parse(m3("int32 a = 1;", "message Other {}\n"));
  auto without = must_parse(m3("int32 a = 1;"));
  EXPECT_EQ(reader_problems(without, with_other, "new", "old"),
            (std::vector<std::string>{
                "{errorType:\"MESSAGE_REMOVED\", description:\"The new schema is missing a "
                "MESSAGE type at path '#/Other' in the old schema\"}"}));

  auto other_pkg = must_parse("syntax = \"proto3\";\npackage u;\nmessage M {\nint32 a = 1;\n}\n");
  EXPECT_EQ(reader_problems(other_pkg, without, "new", "old"),
            (std::vector<std::string>{
                "{errorType:\"PACKAGE_CHANGED\", description:\"The package at '#/' in the new "
                "schema does not match the package in the old schema\"}"}));

  auto req = must_parse(m2("optional int32 a = 1;\nrequired int32 b = 2;"));
  auto opt = must_parse(m2("optional int32 a = 1;"));
  EXPECT_EQ(reader_problems(req, opt, "new", "old"),
            (std::vector<std::string>{
                "{errorType:\"REQUIRED_FIELD_ADDED\", description:\"A required field  at path "
                "'#/M/2' in the new schema is missing in the old schema\"}"}));
  EXPECT_EQ(reader_problems(opt, req, "new", "old"),
            (std::vector<std::string>{
                "{errorType:\"REQUIRED_FIELD_REMOVED\", description:\"The new schema is missing a "
                "required field at path: '#/M/2' in the old schema\"}"}));

  auto two = must_parse(m3("int32 a = 1;\nstring b = 2;"));
  auto one_of = must_parse(m3("oneof o { int32 a = 1; string b = 2; }"));
  EXPECT_EQ(reader_problems(one_of, two, "new", "old"),
            (std::vector<std::string>{
                "{errorType:\"MULTIPLE_FIELDS_MOVED_TO_ONEOF\", description:\"Multiple fields in "
                "the oneof at path '#/M/o' in the new schema are outside a oneof in the old "
                "schema\"}"}));
}

}  // namespace
}  // namespace oxbow::registry::protobuf
