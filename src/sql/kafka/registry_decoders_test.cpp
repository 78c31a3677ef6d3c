// PRINT's text of Schema Registry records: an Avro datum as Avro's toString writes it.
#include "sql/kafka/registry_decoders.h"

#include <gtest/gtest.h>

namespace oxbow::sql {
namespace {

TEST(RegistryDecodersTest, AvroDatumAsAvrosToString) {
  auto datum = nlohmann::ordered_json::parse(
      R"({"id": 7, "name": "a/\"b\"\n\u0085\u2028\u00e9", "score": 1.0, "tags": ["x", "y"], "next": null,
          "flags": {"on": true}, "big": 1e20})");
  EXPECT_EQ(
      avro_text(datum),
      R"({"id": 7, "name": "a/\"b\"\n\u0085\u2028é", "score": 1.0, "tags": ["x", "y"], "next": null, )"
      R"("flags": {"on": true}, "big": 1.0E20})");
  EXPECT_EQ(avro_text(nlohmann::ordered_json(42)), "42");
}

TEST(RegistryDecodersTest, NoRegistryNoDecoders) {
  RegistryDecoders none = registry_decoders("");
  EXPECT_FALSE(none.avro || none.protobuf || none.json_sr);
}

}  // namespace
}  // namespace oxbow::sql
