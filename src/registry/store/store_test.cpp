// The _schemas records in Confluent's bytes, and what a sequence of them adds up to.
#include <gtest/gtest.h>

#include "registry/store/records.h"
#include "registry/store/schema_state.h"

namespace oxbow::registry::store {
namespace {

RecordKey schema_key(const std::string& subject, int version) {
  return {KeyType::kSchema, subject, version, 1};
}

SchemaValue schema(const std::string& subject, int version, int id, const std::string& text,
                   bool deleted = false) {
  SchemaValue v;
  v.subject = subject;
  v.version = version;
  v.id = id;
  v.schema = text;
  v.deleted = deleted;
  return v;
}

TEST(SchemaRecords, KeysAndValuesAreConfluentsBytes) {
  EXPECT_EQ(encode_key(schema_key("s", 1)),
            R"({"keytype":"SCHEMA","subject":"s","version":1,"magic":1})");
  EXPECT_EQ(encode_key({KeyType::kConfig, std::nullopt, 0, 0}),
            R"({"keytype":"CONFIG","magic":0})");
  EXPECT_EQ(encode_key({KeyType::kMode, "s", 0, 0}),
            R"({"keytype":"MODE","subject":"s","magic":0})");
  EXPECT_EQ(encode_key({KeyType::kNoop, std::nullopt, 0, 0}), R"({"keytype":"NOOP","magic":0})");
  EXPECT_EQ(encode_value(schema("s", 1, 7, "\"int\"")),
            R"({"subject":"s","version":1,"id":7,"schema":"\"int\"","deleted":false})");
  SchemaValue proto = schema("s", 2, 8, "syntax = \"proto3\";");
  proto.schema_type = "PROTOBUF";
  proto.references = {{"other.proto", "other", 1}};
  EXPECT_EQ(encode_value(proto),
            R"({"subject":"s","version":2,"id":8,"schemaType":"PROTOBUF","references":)"
            R"([{"name":"other.proto","subject":"other","version":1}],)"
            R"("schema":"syntax = \"proto3\";","deleted":false})");
  EXPECT_EQ(encode_value(ConfigValue{std::nullopt, "FULL", {}}),
            R"({"compatibilityLevel":"FULL"})");
  EXPECT_EQ(encode_value(ModeValue{"s", "READONLY"}), R"({"subject":"s","mode":"READONLY"})");
  EXPECT_EQ(encode_value(DeleteSubjectValue{"s", 3}), R"({"subject":"s","version":3})");
}

TEST(SchemaRecords, WhatOtherRegistriesWroteIsRead) {
  // Any key order, a null global subject (before 6.2, Karapace), a SCHEMA key of magic 0.
  auto key = decode_key(R"({"subject":null,"magic":0,"keytype":"CONFIG"})");
  ASSERT_TRUE(key.value) << key.error;
  EXPECT_EQ(key.value->type, KeyType::kConfig);
  EXPECT_FALSE(key.value->subject);
  auto old = decode_key(R"({"magic":0,"keytype":"SCHEMA","subject":"s","version":4})");
  ASSERT_TRUE(old.value);
  EXPECT_EQ(old.value->version, 4);
  // A config value without its subject takes the key's; unknown keys are kept.
  auto config = decode_value({KeyType::kConfig, "s", 0, 0},
                             R"({"compatibilityLevel":"NONE","normalize":true})");
  ASSERT_TRUE(config.value);
  const auto& c = std::get<ConfigValue>(*config.value);
  EXPECT_EQ(c.subject, "s");
  EXPECT_EQ(encode_value(c), R"({"subject":"s","compatibilityLevel":"NONE","normalize":true})");
  auto value = decode_value(*old.value, R"({"subject":"s","version":4,"id":2,"schema":"\"int\""})");
  ASSERT_TRUE(value.value);
  EXPECT_EQ(std::get<SchemaValue>(*value.value).schema_type, "AVRO");
  EXPECT_FALSE(std::get<SchemaValue>(*value.value).deleted);
  // Refusals name the problem as Confluent's reader does.
  EXPECT_EQ(decode_key(R"({"keytype":"WHAT","magic":0})").error,
            "Unknown schema registry key type : WHAT");
  EXPECT_EQ(decode_key(R"({"keytype":"SCHEMA","subject":"s","version":1,"magic":7})").error,
            "Can't deserialize schema for the magic byte 7");
  EXPECT_FALSE(decode_key("not json").value);
  EXPECT_FALSE(decode_value(*old.value, R"({"subject":"s"})").value);
}

TEST(SchemaState, SoftAndHardDeletesAndIdsFollowTheRecords) {
  SchemaState state;
  auto put = [&](const SchemaValue& v) {
    return state.apply(schema_key(v.subject, v.version), RecordValue(v));
  };
  EXPECT_EQ(put(schema("a", 1, 1, "\"int\"")), "");
  EXPECT_EQ(put(schema("a", 2, 2, "\"long\"")), "");
  EXPECT_EQ(put(schema("b", 1, 1, "\"int\"")), "");  // the same schema elsewhere: the same id
  EXPECT_EQ(state.subjects(false), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(state.latest("a")->version, 2);
  EXPECT_EQ(state.holders(1), (std::vector<std::pair<std::string, int>>{{"a", 1}, {"b", 1}}));
  // Another text under a used id is refused.
  EXPECT_EQ(put(schema("c", 1, 2, "\"string\"")), "Found a schema with duplicate ID 2");
  EXPECT_TRUE(state.subjects(true).size() == 2);

  // A subject's soft delete is one record; its versions stay, marked.
  state.apply({KeyType::kDeleteSubject, "a", 0, 0}, RecordValue(DeleteSubjectValue{"a", 2}));
  EXPECT_EQ(state.subjects(false), std::vector<std::string>{"b"});
  EXPECT_EQ(state.subjects(true), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(state.subjects(false, true), std::vector<std::string>{"a"});
  EXPECT_EQ(state.latest("a"), nullptr);
  EXPECT_TRUE(state.version("a", 1)->deleted);
  EXPECT_EQ(state.by_id(2)->schema, "\"long\"");  // ids stay resolvable

  // Hard delete: tombstones; the largest id stays known.
  state.apply(schema_key("a", 1), std::nullopt);
  state.apply(schema_key("a", 2), std::nullopt);
  EXPECT_EQ(state.subjects(true), std::vector<std::string>{"b"});
  EXPECT_EQ(state.by_id(2), nullptr);
  EXPECT_EQ(state.max_id(), 2);

  // Settings, global and per subject, and their removal.
  state.apply({KeyType::kConfig, std::nullopt, 0, 0},
              RecordValue(ConfigValue{std::nullopt, "FULL", {}}));
  state.apply({KeyType::kMode, "b", 0, 0}, RecordValue(ModeValue{"b", "READONLY"}));
  EXPECT_EQ(state.config(std::nullopt)->compatibility_level, "FULL");
  EXPECT_EQ(state.mode("b")->mode, "READONLY");
  state.apply({KeyType::kMode, "b", 0, 0}, std::nullopt);
  EXPECT_EQ(state.mode("b"), nullptr);
}

TEST(SchemaState, ClearSubjectForgetsOnlySoftDeletedVersions) {
  SchemaState state;
  for (int v = 1; v <= 3; ++v)
    state.apply(schema_key("s", v), RecordValue(schema("s", v, v, std::to_string(v), v < 3)));
  state.apply({KeyType::kClearSubject, "s", 0, 0}, RecordValue(ClearSubjectValue{"s"}));
  ASSERT_EQ(state.versions("s").size(), 1u);
  EXPECT_EQ(state.versions("s")[0]->version, 3);
  EXPECT_EQ(state.max_id(), 3);
}

}  // namespace
}  // namespace oxbow::registry::store
