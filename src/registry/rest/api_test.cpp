// The REST API without a socket: requests in, Confluent's bodies, statuses and types out.
#include "registry/rest/api.h"

#include <gtest/gtest.h>

#include "registry/memory_log.h"

namespace oxbow::registry::rest {
namespace {

struct RestApiTest : ::testing::Test {
  MemoryLog log;
  RegistryService service{log, {}};
  Api api{service};

  http::Response call(const std::string& method, const std::string& target,
                      const std::string& body = "", const std::string& accept = "") {
    http::Request r;
    r.method = method;
    auto q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    r.body = body;
    r.accept = accept;
    return api.handle(r);
  }
  std::string answer(const http::Response& r) { return std::to_string(r.status) + " " + r.body; }
};

const char* kSchema =
    R"({"schema":"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]}"})";
const char* kStored =
    R"({\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]})";

TEST_F(RestApiTest, RegisterReadAndLookUpAsConfluentAnswers) {
  EXPECT_EQ(answer(call("POST", "/subjects/orders-value/versions", kSchema)), R"(200 {"id":1})");
  EXPECT_EQ(answer(call("GET", "/subjects")), R"(200 ["orders-value"])");
  EXPECT_EQ(answer(call("GET", "/subjects/orders-value/versions")), "200 [1]");
  EXPECT_EQ(answer(call("GET", "/subjects/orders-value/versions/latest")),
            std::string(R"(200 {"subject":"orders-value","version":1,"id":1,"schema":")") +
                kStored + "\"}");
  EXPECT_EQ(answer(call("GET", "/subjects/orders-value/versions/1/schema")),
            R"(200 {"type":"record","name":"r","fields":[{"name":"a","type":"string"}]})");
  EXPECT_EQ(answer(call("POST", "/subjects/orders-value", kSchema)),
            std::string(R"(200 {"subject":"orders-value","version":1,"id":1,"schema":")") +
                kStored + "\"}");
  EXPECT_EQ(answer(call("GET", "/schemas/ids/1")),
            std::string(R"(200 {"schema":")") + kStored + "\"}");
  EXPECT_EQ(answer(call("GET", "/schemas/types")), R"(200 ["JSON","PROTOBUF","AVRO"])");
  EXPECT_EQ(answer(call("GET", "/")), "200 {}");
  EXPECT_EQ(call("GET", "/subjects").content_type, "application/vnd.schemaregistry.v1+json");
  EXPECT_EQ(call("GET", "/subjects", "", "application/json").content_type, "application/json");
}

TEST_F(RestApiTest, EscapedSubjectsAndQueryParametersAreDecoded) {
  EXPECT_EQ(answer(call("POST", "/subjects/a%2Fb/versions", kSchema)), R"(200 {"id":1})");
  EXPECT_EQ(answer(call("GET", "/subjects?subjectPrefix=a%2F")), R"(200 ["a/b"])");
  EXPECT_EQ(answer(call("GET", "/subjects?subjectPrefix=x")), "200 []");
  EXPECT_EQ(answer(call("DELETE", "/subjects/a%2Fb")), "200 [1]");
  EXPECT_EQ(answer(call("GET", "/subjects")), "200 []");
  EXPECT_EQ(answer(call("GET", "/subjects?deleted=true")), R"(200 ["a/b"])");
  EXPECT_EQ(answer(call("DELETE", "/subjects/a%2Fb?permanent=true")), "200 [1]");
}

TEST_F(RestApiTest, ErrorsAreConfluentsJson) {
  EXPECT_EQ(answer(call("GET", "/subjects/nope/versions")),
            R"(404 {"error_code":40401,"message":"Subject 'nope' not found."})");
  EXPECT_EQ(
      answer(call("GET", "/subjects/nope/versions/a")),
      R"(422 {"error_code":42202,"message":"The specified version 'a' is not a valid version id. )"
      R"(Allowed values are between [1, 2^31-1] and the string \"latest\""})");
  EXPECT_EQ(answer(call("GET", "/schemas/ids/7")),
            R"(404 {"error_code":40403,"message":"Schema 7 not found"})");
  EXPECT_EQ(answer(call("GET", "/schemas/ids/x")),
            R"(404 {"error_code":404,"message":"HTTP 404 Not Found"})");
  EXPECT_EQ(answer(call("GET", "/nowhere")),
            R"(404 {"error_code":404,"message":"HTTP 404 Not Found"})");
  EXPECT_EQ(answer(call("PUT", "/subjects")),
            R"(405 {"error_code":405,"message":"HTTP 405 Method Not Allowed"})");
  EXPECT_EQ(call("POST", "/subjects/s/versions", "{not json").status, 400);
  EXPECT_EQ(call("POST", "/subjects/s/versions", "[1]").status, 400);
  EXPECT_EQ(answer(call("POST", "/subjects/s/versions", "")),
            R"(422 {"error_code":422,"message":"request body may not be null"})");
  EXPECT_EQ(answer(call("POST", "/subjects/s/versions", R"({"schema":""})")),
            R"(422 {"error_code":42201,"message":"Empty schema"})");
  EXPECT_EQ(call("POST", "/subjects/s/versions", R"({"schema":"{\"type\":\"nope\"}"})").status,
            422);
}

TEST_F(RestApiTest, ConfigAndCompatibilityChecks) {
  EXPECT_EQ(answer(call("GET", "/config")), R"(200 {"compatibilityLevel":"BACKWARD"})");
  EXPECT_EQ(answer(call("PUT", "/config/s", R"({"compatibility":"full"})")),
            R"(200 {"compatibility":"FULL"})");
  EXPECT_EQ(answer(call("GET", "/config/s")), R"(200 {"compatibilityLevel":"FULL"})");
  EXPECT_EQ(
      answer(call("GET", "/config/t")),
      R"(404 {"error_code":40408,"message":"Subject 't' does not have subject-level compatibility configured"})");
  EXPECT_EQ(answer(call("GET", "/config/t?defaultToGlobal=true")),
            R"(200 {"compatibilityLevel":"BACKWARD"})");
  EXPECT_EQ(call("PUT", "/config", R"({"compatibility":"SIDEWAYS"})").status, 422);

  call("POST", "/subjects/s/versions", kSchema);
  std::string breaking =
      R"({"schema":"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"}]}"})";
  EXPECT_EQ(answer(call("POST", "/compatibility/subjects/s/versions/latest", kSchema)),
            R"(200 {"is_compatible":true})");
  EXPECT_EQ(answer(call("POST", "/compatibility/subjects/s/versions/latest?verbose=true", kSchema)),
            R"(200 {"is_compatible":true,"messages":[]})");
  auto verbose = call("POST", "/compatibility/subjects/s/versions?verbose=true", breaking);
  EXPECT_EQ(verbose.status, 200);
  EXPECT_EQ(
      verbose.body.rfind(R"({"is_compatible":false,"messages":["{errorType:'TYPE_MISMATCH')", 0),
      0u)
      << verbose.body;
  EXPECT_EQ(answer(call("POST", "/compatibility/subjects/s/versions/9", kSchema)),
            R"(404 {"error_code":40402,"message":"Version 9 not found."})");
  EXPECT_EQ(answer(call("POST", "/compatibility/subjects/none/versions/latest", kSchema)),
            R"(200 {"is_compatible":true})");
  EXPECT_EQ(call("POST", "/subjects/s/versions", breaking).status, 409);
}

TEST_F(RestApiTest, ModesGateWritesAndComeBackOff) {
  EXPECT_EQ(answer(call("GET", "/mode")), R"(200 {"mode":"READWRITE"})");
  EXPECT_EQ(answer(call("PUT", "/mode/s", R"({"mode":"readonly"})")), R"(200 {"mode":"READONLY"})");
  EXPECT_EQ(answer(call("GET", "/mode/s")), R"(200 {"mode":"READONLY"})");
  EXPECT_EQ(answer(call("POST", "/subjects/s/versions", kSchema)),
            R"(422 {"error_code":42205,"message":"Subject s in context  is in read-only mode"})");
  EXPECT_EQ(answer(call("DELETE", "/mode/s")), R"(200 {"mode":"READONLY"})");
  EXPECT_EQ(
      answer(call("GET", "/mode/s")),
      R"(404 {"error_code":40409,"message":"Subject 's' does not have subject-level mode configured"})");
  EXPECT_EQ(answer(call("DELETE", "/mode/s")),
            R"(404 {"error_code":40401,"message":"Subject 's' not found."})");
  EXPECT_EQ(
      answer(call("PUT", "/mode", R"({"mode":"SOMETIMES"})")),
      R"(422 {"error_code":42204,"message":"Invalid mode. Valid values are READWRITE, READONLY, and IMPORT."})");
  EXPECT_EQ(answer(call("POST", "/subjects/s/versions", kSchema)), R"(200 {"id":1})");
  EXPECT_EQ(answer(call("PUT", "/mode", R"({"mode":"IMPORT"})")),
            R"(422 {"error_code":42205,"message":"Cannot import since found existing subjects"})");
  EXPECT_EQ(answer(call("PUT", "/mode?force=true", R"({"mode":"IMPORT"})")),
            R"(200 {"mode":"IMPORT"})");
  // Config deletes answer what was set; the global one the default when none was.
  EXPECT_EQ(answer(call("DELETE", "/config")), R"(200 {"compatibilityLevel":"BACKWARD"})");
  call("PUT", "/config/s", R"({"compatibility":"NONE"})");
  EXPECT_EQ(answer(call("DELETE", "/config/s")), R"(200 {"compatibilityLevel":"NONE"})");
  EXPECT_EQ(answer(call("DELETE", "/config/s")),
            R"(404 {"error_code":40401,"message":"Subject 's' not found."})");
}

TEST_F(RestApiTest, SchemasAreListedWithTheirHoldersAndReferences) {
  const char* address =
      R"({"schema":"{\"type\":\"record\",\"name\":\"Address\",\"namespace\":\"geo\",\"fields\":[{\"name\":\"city\",\"type\":\"string\"}]}"})";
  const char* user =
      R"({"schema":"{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"home\",\"type\":\"geo.Address\"}]}",)"
      R"("references":[{"name":"geo.Address","subject":"address","version":1}]})";
  EXPECT_EQ(answer(call("POST", "/subjects/address/versions", address)), R"(200 {"id":1})");
  EXPECT_EQ(answer(call("POST", "/subjects/user/versions", user)), R"(200 {"id":2})");
  EXPECT_EQ(answer(call("POST", "/subjects/user2/versions", user)), R"(200 {"id":2})");
  EXPECT_EQ(answer(call("GET", "/subjects/address/versions/1/referencedby")), "200 [2]");
  EXPECT_EQ(answer(call("GET", "/schemas/ids/2/subjects")), R"(200 ["user","user2"])");
  EXPECT_EQ(answer(call("GET", "/schemas/ids/2/versions")),
            R"(200 [{"subject":"user","version":1},{"subject":"user2","version":1}])");
  EXPECT_EQ(answer(call("GET", "/schemas/ids/9/versions")),
            R"(404 {"error_code":40403,"message":"Schema not found"})");
  auto by_id = call("GET", "/schemas/ids/2");
  EXPECT_NE(
      by_id.body.find(R"("references":[{"name":"geo.Address","subject":"address","version":1}])"),
      std::string::npos)
      << by_id.body;
  auto listed = call("GET", "/schemas?subjectPrefix=user&offset=1&limit=5");
  EXPECT_EQ(listed.body.rfind(R"([{"subject":"user2","version":1,"id":2,"references":)", 0), 0u)
      << listed.body;
  EXPECT_EQ(call("GET", "/schemas?limit=0").body, "[]");
  // A referenced version may not go, nor its subject.
  EXPECT_EQ(answer(call("DELETE", "/subjects/address/versions/1")),
            R"(422 {"error_code":42206,"message":"One or more references exist to the schema )"
            R"({magic=1,keytype=SCHEMA,subject=address,version=1}."})");
  EXPECT_EQ(call("DELETE", "/subjects/address").status, 422);
  EXPECT_EQ(
      answer(call("GET", "/v1/metadata/id")),
      R"(200 {"scope":{"path":[],"clusters":{"kafka-cluster":"","schema-registry-cluster":"schema-registry"}}})");
}

TEST(PercentDecoding, EscapesAreDecodedAndStrayPercentsKept) {
  EXPECT_EQ(percent_decode("a%2Fb%3Ac"), "a/b:c");
  EXPECT_EQ(percent_decode("100%"), "100%");
  EXPECT_EQ(percent_decode("%zz%4"), "%zz%4");
}

TEST_F(RestApiTest, FormatResolvedWritesAvroReferencesInPlace) {
  ASSERT_EQ(call("POST", "/subjects/inner/versions",
                 R"({"schema":"{\"type\":\"fixed\",\"name\":\"Id\",\"size\":4}"})")
                .status,
            200);
  ASSERT_EQ(call("POST", "/subjects/outer/versions",
                 R"({"schema":"{\"type\":\"record\",\"name\":\"O\",\"fields\":[)"
                 R"({\"name\":\"id\",\"type\":\"Id\"}]}",)"
                 R"("references":[{"name":"Id","subject":"inner","version":1}]})")
                .status,
            200);
  EXPECT_EQ(call("GET", "/subjects/outer/versions/1/schema").body,
            R"({"type":"record","name":"O","fields":[{"name":"id","type":"Id"}]})");
  const std::string resolved = R"({"type":"record","name":"O","fields":[{"name":"id","type":)"
                               R"({"type":"fixed","name":"Id","size":4}}]})";
  EXPECT_EQ(call("GET", "/subjects/outer/versions/1/schema?format=resolved").body, resolved);
  EXPECT_EQ(call("GET", "/schemas/ids/2/schema?format=resolved").body, resolved);
  // A format the type does not have gives the stored text, as Confluent's does.
  EXPECT_EQ(call("GET", "/schemas/ids/2/schema?format=serialized").body,
            R"({"type":"record","name":"O","fields":[{"name":"id","type":"Id"}]})");
}

TEST_F(RestApiTest, FormatSerializedGivesAProtobufDescriptorThatRegistersAsTheSameSchema) {
  const char* proto = R"({"schemaType":"PROTOBUF","schema":"syntax = \"proto3\";\npackage shop;\n)"
                      R"(message Order {\n  int64 id = 1;\n  string item = 2;\n}\n"})";
  ASSERT_EQ(answer(call("POST", "/subjects/orders/versions", proto)), R"(200 {"id":1})");
  auto serialized = call("GET", "/schemas/ids/1/schema?format=serialized").body;
  EXPECT_NE(serialized.find_first_not_of(
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
            0u);
  EXPECT_EQ(serialized.find_first_not_of(
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
            std::string::npos);
  // The descriptor is the same schema: looked up in the subject, it is version 1.
  EXPECT_EQ(call("POST", "/subjects/orders",
                 R"({"schemaType":"PROTOBUF","schema":")" + serialized + "\"}")
                .status,
            200);
}

}  // namespace
}  // namespace oxbow::registry::rest
