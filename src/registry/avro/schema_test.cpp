#include "registry/avro/schema.h"

#include <gtest/gtest.h>

#include <string>

namespace oxbow::registry::avro {
namespace {

Schema parsed(const std::string& json, const std::vector<const Schema*>& known = {}) {
  auto result = parse(json, {known, true});
  EXPECT_TRUE(result) << json << ": " << result.error;
  if (!result) std::abort();
  return std::move(*result.schema);
}

std::string error_of(const std::string& json) {
  auto result = parse(json);
  EXPECT_FALSE(result) << json << " parsed";
  return result.error;
}

TEST(AvroSchema, PrimitivesInEitherFormHaveTheirNameAsCanonicalForm) {
  for (const char* name :
       {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}) {
    std::string quoted = std::string("\"") + name + "\"";
    EXPECT_EQ(parsing_canonical_form(parsed(quoted)), quoted);
    EXPECT_EQ(parsing_canonical_form(parsed(std::string("{\"type\":") + quoted + "}")), quoted);
  }
}

TEST(AvroSchema, CanonicalFormUsesFullNamesKeepsOnlyWhatReadingNeedsInItsOrder) {
  auto schema = parsed(R"({
    "type": "record", "name": "User", "namespace": "com.example", "doc": "a user",
    "aliases": ["Person"], "custom": {"x": 1},
    "fields": [
      {"name": "id", "type": {"type": "long", "logicalType": "timestamp-millis"}, "default": 0,
       "doc": "when", "order": "descending"},
      {"name": "kind", "type": {"symbols": ["A", "B"], "type": "enum", "name": "Kind",
                                "default": "A"}},
      {"name": "hash", "type": {"size": 16, "type": "fixed", "name": "Hash",
                                "namespace": "other"}},
      {"name": "tags", "type": {"items": "string", "type": "array"}, "default": []},
      {"name": "scores", "type": {"type": "map", "values": "double"}, "default": {"a": 1.5}},
      {"name": "next", "type": ["null", "User"], "default": null},
      {"name": "again", "type": "Kind"},
      {"name": "other", "type": "other.Hash"}
    ]})");
  EXPECT_EQ(
      parsing_canonical_form(schema),
      R"({"name":"com.example.User","type":"record","fields":[)"
      R"({"name":"id","type":"long"},)"
      R"({"name":"kind","type":{"name":"com.example.Kind","type":"enum","symbols":["A","B"]}},)"
      R"({"name":"hash","type":{"name":"other.Hash","type":"fixed","size":16}},)"
      R"({"name":"tags","type":{"type":"array","items":"string"}},)"
      R"({"name":"scores","type":{"type":"map","values":"double"}},)"
      R"({"name":"next","type":["null","com.example.User"]},)"
      R"({"name":"again","type":"com.example.Kind"},)"
      R"({"name":"other","type":"other.Hash"}]})");
  const Node& root = schema.root();
  EXPECT_EQ(root.aliases, std::vector<std::string>{"com.example.Person"});
  EXPECT_EQ(root.doc, "a user");
  EXPECT_EQ(root.properties.dump(), R"({"custom":{"x":1}})");
  EXPECT_EQ(root.fields[0].type->logical_type, "timestamp-millis");
  EXPECT_EQ(root.fields[0].order, "descending");
  EXPECT_EQ(root.fields[5].type->branches[1], &root);  // recursive
  EXPECT_EQ(schema.named("other.Hash")->size, 16);
}

TEST(AvroSchema, ANameIsLookedUpInTheEnclosingNamespaceThenInTheNullOne) {
  auto schema = parsed(R"([
    {"type": "fixed", "name": "Foo", "size": 2},
    {"type": "record", "name": "R", "namespace": "ns", "fields": [
      {"name": "f", "type": "Foo"},
      {"name": "g", "type": {"type": "fixed", "name": "Foo", "size": 3}},
      {"name": "h", "type": "Foo"}]}])");
  const Node& r = *schema.named("ns.R");
  EXPECT_EQ(r.fields[0].type->full_name, "Foo");
  EXPECT_EQ(r.fields[1].type->full_name, "ns.Foo");
  EXPECT_EQ(r.fields[2].type->full_name, "ns.Foo");  // the namespace's own now comes first
  // A dotted name is a full name, whatever the namespace attribute says.
  EXPECT_EQ(
      parsed(R"({"type":"enum","name":"a.b.E","namespace":"x","symbols":["S"]})").root().full_name,
      "a.b.E");
}

TEST(AvroSchema, TypesOfReferencedSchemasMayBeUsedByName) {
  auto address = parsed(R"({"type":"record","name":"Address","namespace":"geo",
                            "fields":[{"name":"city","type":"string"}]})");
  auto user = parsed(R"({"type":"record","name":"User","fields":[
                         {"name":"home","type":"geo.Address"}]})",
                     {&address});
  EXPECT_EQ(user.root().fields[0].type, &address.root());
  EXPECT_EQ(
      error_of(R"({"type":"record","name":"U","fields":[{"name":"a","type":"geo.Address"}]})"),
      "Undefined name: \"geo.Address\"");
  // Nor may a referencing schema define a type again.
  EXPECT_FALSE(
      parse(R"({"type":"fixed","name":"Address","namespace":"geo","size":1})", {{&address}, true}));
}

TEST(AvroSchema, DefaultsAreCheckedAgainstTheirTypes) {
  auto field = [](const std::string& type, const std::string& value) {
    return R"({"type":"record","name":"R","fields":[{"name":"f","type":)" + type +
           R"(,"default":)" + value + "}]}";
  };
  struct Case {
    const char* type;
    const char* value;
    bool valid;
  };
  for (Case c : {Case{"\"int\"", "1", true},
                 Case{"\"int\"", "2147483648", false},
                 Case{"\"int\"", "\"1\"", false},
                 Case{"\"long\"", "2147483648", true},
                 Case{"\"long\"", "1.5", false},
                 Case{"\"double\"", "1", true},
                 Case{"\"float\"", "null", false},
                 Case{"\"string\"", "\"x\"", true},
                 Case{"\"bytes\"", "\"\\u00ff\"", true},
                 Case{"\"boolean\"", "0", false},
                 Case{"\"null\"", "null", true},
                 Case{R"(["null","string"])", "null", true},
                 Case{R"(["null","string"])", "\"x\"", false},  // the first branch decides
                 Case{R"(["string","null"])", "\"x\"", true},
                 Case{R"({"type":"array","items":"int"})", "[1,2]", true},
                 Case{R"({"type":"array","items":"int"})", "[1,\"2\"]", false},
                 Case{R"({"type":"map","values":"long"})", R"({"a":1})", true},
                 Case{R"({"type":"map","values":"long"})", "[]", false},
                 Case{R"({"type":"enum","name":"E","symbols":["A"]})", "\"A\"", true},
                 Case{R"({"type":"enum","name":"E","symbols":["A"]})", "\"B\"", false},
                 Case{R"({"type":"fixed","name":"F","size":2})", "\"ab\"", true},
                 Case{R"({"type":"record","name":"S","fields":[{"name":"a","type":"int"},
                          {"name":"b","type":"int","default":5}]})",
                      R"({"a":1})", true},
                 Case{R"({"type":"record","name":"S","fields":[{"name":"a","type":"int"}]})", "{}",
                      false}}) {
    auto result = parse(field(c.type, c.value));
    EXPECT_EQ(static_cast<bool>(result), c.valid)
        << c.type << " default " << c.value << ": " << result.error;
    // As Confluent's registry parses by default: defaults not checked.
    EXPECT_TRUE(parse(field(c.type, c.value), {{}, false})) << c.type << " default " << c.value;
  }
}

TEST(AvroSchema, InvalidSchemasAreRefusedWithAReason) {
  EXPECT_EQ(error_of("{"), "Invalid JSON");
  EXPECT_EQ(error_of("\"Nope\""), "Undefined name: \"Nope\"");
  EXPECT_EQ(error_of("{\"name\":\"x\"}"), "No type: {\"name\":\"x\"}");
  EXPECT_EQ(error_of("42"), "Schema is not a JSON string, object or array: 42");
  EXPECT_EQ(error_of(R"({"type":"record","name":"R","fields":[{"name":"a","type":"int"},
                         {"name":"a","type":"long"}]})"),
            "Duplicate field a in record R");
  EXPECT_EQ(
      error_of(R"([{"type":"fixed","name":"F","size":1},{"type":"fixed","name":"F","size":2}])"),
      "Can't redefine: F");
  EXPECT_EQ(error_of(R"({"type":"record","name":"1abc","fields":[]})"), "Illegal name: \"1abc\"");
  EXPECT_EQ(error_of(R"({"type":"record","name":"a-b","fields":[]})"), "Illegal name: \"a-b\"");
  EXPECT_EQ(error_of(R"({"type":"record","name":"ns.int","fields":[]})"),
            "Schemas may not be named after primitives: ns.int");
  EXPECT_EQ(error_of(R"({"type":"record","name":"R"})"),
            R"(Record has no fields: {"type":"record","name":"R"})");
  EXPECT_EQ(error_of(R"(["int",["long"]])"), R"(Nested union: ["int",["long"]])");
  EXPECT_EQ(error_of(R"(["int","int"])"), "Duplicate in union: int");
  EXPECT_EQ(error_of(R"({"type":"enum","name":"E","symbols":["A","A"]})"),
            "Duplicate enum symbol: A");
  EXPECT_EQ(error_of(R"({"type":"enum","name":"E","symbols":["A"],"default":"B"})"),
            R"(The Enum Default: "B" is not in the enum symbol set: ["A"])");
  EXPECT_EQ(error_of(R"({"type":"fixed","name":"F"})"),
            R"(Invalid or no size: {"type":"fixed","name":"F"})");
  EXPECT_EQ(error_of(R"({"type":"array"})"), R"(array has no items: {"type":"array"})");
  EXPECT_EQ(error_of(R"({"type":"record","name":"R","fields":[{"name":"a","type":"int",
                         "order":"sideways"}]})"),
            R"(Illegal field order: "sideways")");
  // Deep nesting is refused, not recursed into until the stack ends.
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += R"({"type":"array","items":)";
  deep += "\"int\"";
  for (int i = 0; i < 5000; ++i) deep += "}";
  EXPECT_EQ(error_of(deep), "Schema nested too deeply");
}

TEST(AvroSchema, ValidLogicalTypesAreKeptInvalidOnesIgnored) {
  auto type_of = [](const std::string& json) { return parsed(json).root().logical_type; };
  EXPECT_EQ(type_of(R"({"type":"bytes","logicalType":"decimal","precision":9,"scale":2})"),
            "decimal");
  EXPECT_EQ(type_of(R"({"type":"bytes","logicalType":"decimal","precision":2,"scale":3})"), "");
  EXPECT_EQ(
      type_of(R"({"type":"fixed","name":"D","size":4,"logicalType":"decimal","precision":9})"),
      "decimal");
  EXPECT_EQ(
      type_of(R"({"type":"fixed","name":"D","size":4,"logicalType":"decimal","precision":10})"),
      "");  // four bytes hold nine digits at most
  EXPECT_EQ(type_of(R"({"type":"string","logicalType":"uuid"})"), "uuid");
  EXPECT_EQ(type_of(R"({"type":"int","logicalType":"uuid"})"), "");
  EXPECT_EQ(type_of(R"({"type":"int","logicalType":"date"})"), "date");
  EXPECT_EQ(type_of(R"({"type":"long","logicalType":"local-timestamp-micros"})"),
            "local-timestamp-micros");
  EXPECT_EQ(type_of(R"({"type":"fixed","name":"P","size":12,"logicalType":"duration"})"),
            "duration");
  auto ignored = parsed(R"({"type":"int","logicalType":"timestamp-millis"})");
  EXPECT_EQ(ignored.root().logical_type, "");
  EXPECT_EQ(ignored.root().properties.dump(), R"({"logicalType":"timestamp-millis"})");
}

// The CRC-64-AVRO of the specification, bit by bit, independent of the table the library uses.
uint64_t reference_fingerprint(std::string_view text) {
  constexpr uint64_t kEmpty = 0xc15d213aa4d7a795ULL;
  uint64_t fp = kEmpty;
  for (unsigned char c : text) {
    fp ^= c;
    for (int bit = 0; bit < 8; ++bit) fp = (fp >> 1) ^ ((fp & 1) ? kEmpty : 0);
  }
  return fp;
}

TEST(AvroSchema, FingerprintIsTheSpecificationsRabinFingerprint) {
  EXPECT_EQ(fingerprint64(""), 0xc15d213aa4d7a795ULL);
  for (const char* text : {"\"int\"", "\"string\"",
                           R"({"name":"R","type":"record","fields":[{"name":"a","type":"int"}]})"})
    EXPECT_EQ(fingerprint64(text), reference_fingerprint(text)) << text;
  EXPECT_NE(fingerprint64("\"int\""), fingerprint64("\"long\""));
}

TEST(AvroSchema, CanonicalStringIsWhatAvroJavaPrints) {
  // Key order, namespaces relative to the enclosing one, references by name, kept attributes.
  auto schema = parsed(R"({
    "namespace": "com.example", "name": "User", "type": "record", "doc": "a user",
    "aliases": ["com.example.Person", "old.People"], "connect.name": "x",
    "fields": [
      {"type": {"type": "long", "logicalType": "timestamp-millis"}, "name": "at", "default": 0,
       "order": "ascending"},
      {"name": "kind", "order": "descending", "doc": "k", "aliases": ["sort"],
       "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"], "default": "A"}},
      {"name": "hash", "type": {"type": "fixed", "name": "Hash", "namespace": "other", "size": 4}},
      {"name": "plain", "type": {"type": "fixed", "name": "Plain", "namespace": "", "size": 1}},
      {"name": "tags", "type": {"type": "array", "items": {"type": "string"}}, "default": ["a"]},
      {"name": "next", "type": ["null", "User", "other.Hash", "Kind"], "default": null, "x-prop": 1}
    ]})");
  EXPECT_EQ(
      canonical_string(schema),
      R"({"type":"record","name":"User","namespace":"com.example","doc":"a user","fields":[)"
      R"({"name":"at","type":{"type":"long","logicalType":"timestamp-millis"},"default":0},)"
      R"({"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"],"default":"A"},)"
      R"("doc":"k","order":"descending","aliases":["sort"]},)"
      R"({"name":"hash","type":{"type":"fixed","name":"Hash","namespace":"other","size":4}},)"
      R"({"name":"plain","type":{"type":"fixed","name":"Plain","namespace":"","size":1}},)"
      R"({"name":"tags","type":{"type":"array","items":"string"},"default":["a"]},)"
      R"({"name":"next","type":["null","User","other.Hash","Kind"],"default":null,"x-prop":1}],)"
      R"("connect.name":"x","aliases":["Person","old.People"]})");
  // A dotted name splits into name and namespace; an error record says so.
  EXPECT_EQ(canonical_string(parsed(R"({"type":"error","name":"a.b.Oops","fields":[]})")),
            R"({"type":"error","name":"Oops","namespace":"a.b","fields":[]})");
  // Types of referenced schemas are written by name, not spelled out.
  auto address = parsed(R"({"type":"record","name":"Address","namespace":"geo","fields":[]})");
  auto user = parsed(R"({"type":"record","name":"U","fields":[{"name":"a","type":"geo.Address"}]})",
                     {&address});
  EXPECT_EQ(canonical_string(user, {&address}),
            R"({"type":"record","name":"U","fields":[{"name":"a","type":"geo.Address"}]})");
  // Non-ASCII characters are written as they are.
  EXPECT_EQ(
      canonical_string(parsed(R"({"type":"enum","name":"E","doc":"caf\u00e9","symbols":[]})")),
      "{\"type\":\"enum\",\"name\":\"E\",\"doc\":\"caf\xc3\xa9\",\"symbols\":[]}");
}

}  // namespace
}  // namespace oxbow::registry::avro
