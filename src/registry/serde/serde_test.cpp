#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "oxbow/registry/client.h"
#include "oxbow/registry/serdes.h"
#include "oxbow/streams/registry_serde.h"

namespace oxbow::registry {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;
using Json = nlohmann::json;

// An in-process stand-in for the registry's REST API: enough of it for the client (ids shared
// across subjects by schema text, versions per subject, Confluent's error bodies).
class FakeRegistry {
 public:
  FakeRegistry() : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this] { accept_loop(); });
  }
  ~FakeRegistry() {
    stopping_ = true;
    beast::error_code ec;
    tcp::socket wake(io_);
    wake.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
    std::lock_guard lock(mutex_);
    for (auto& s : sockets_) s->shutdown(tcp::socket::shutdown_both, ec);
    for (auto& t : connections_) t.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  int port() const { return acceptor_.local_endpoint().port(); }
  int requests() const { return requests_; }
  std::string authorization() {
    std::lock_guard lock(mutex_);
    return authorization_;
  }

 private:
  struct Version {
    int id;
    std::string schema;
  };

  void accept_loop() {
    while (!stopping_) {
      auto socket = std::make_shared<tcp::socket>(io_);
      beast::error_code ec;
      acceptor_.accept(*socket, ec);
      if (ec || stopping_) return;
      std::lock_guard lock(mutex_);
      sockets_.push_back(socket);
      connections_.emplace_back([this, socket] { serve(*socket); });
    }
  }

  void serve(tcp::socket& socket) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      beast::error_code ec;
      http::read(socket, buffer, req, ec);
      if (ec) return;
      ++requests_;
      auto [status, body] = answer(req);
      http::response<http::string_body> res{static_cast<http::status>(status), 11};
      res.set(http::field::content_type, "application/vnd.schemaregistry.v1+json");
      res.keep_alive(req.keep_alive());
      res.body() = body.dump();
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec || !req.keep_alive()) return;
    }
  }

  static std::string decoded(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size()) {
        out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  static std::pair<int, Json> error(int status, int code, const std::string& message) {
    return {status, {{"error_code", code}, {"message", message}}};
  }

  std::pair<int, Json> answer(const http::request<http::string_body>& req) {
    std::lock_guard lock(mutex_);
    authorization_ = std::string(req[http::field::authorization]);
    std::string target(req.target());
    const bool normalize = target.ends_with("?normalize=true");
    if (normalize) target.resize(target.size() - 15);
    if (target.rfind("/schemas/ids/", 0) == 0) {
      const int id = std::stoi(target.substr(13));
      if (!by_id_.count(id))
        return error(404, 40403, "Schema " + std::to_string(id) + " not found");
      return {200, {{"schema", by_id_[id]}}};
    }
    if (target.rfind("/subjects/", 0) != 0) return error(404, 404, "HTTP 404 Not Found");
    std::string rest = target.substr(10);
    const auto slash = rest.find('/');
    const std::string subject = decoded(rest.substr(0, slash));
    const std::string tail = slash == std::string::npos ? "" : rest.substr(slash);
    auto& versions = subjects_[subject];
    auto version_json = [&](size_t v) {
      return Json{{"subject", subject},
                  {"version", v + 1},
                  {"id", versions[v].id},
                  {"schema", versions[v].schema}};
    };
    if (req.method() == http::verb::post) {
      const std::string schema = Json::parse(req.body()).at("schema");
      for (size_t v = 0; v < versions.size(); ++v)
        if (versions[v].schema == schema)
          return {200, tail.empty() ? version_json(v) : Json{{"id", versions[v].id}}};
      if (tail.empty()) return error(404, 40403, "Schema not found");
      int id = 0;
      for (const auto& [known, text] : by_id_)
        if (text == schema) id = known;
      if (id == 0) by_id_[id = static_cast<int>(by_id_.size()) + 1] = schema;
      versions.push_back({id, schema});
      return {200, {{"id", id}}};
    }
    if (versions.empty()) return error(404, 40401, "Subject '" + subject + "' not found.");
    if (tail == "/versions/latest") return {200, version_json(versions.size() - 1)};
    const size_t v = std::stoul(tail.substr(10));
    if (v < 1 || v > versions.size()) return error(404, 40402, "Version not found.");
    return {200, version_json(v - 1)};
  }

  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  std::mutex mutex_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;
  std::vector<std::thread> connections_;
  std::map<int, std::string> by_id_;
  std::map<std::string, std::vector<Version>> subjects_;
  std::string authorization_;
};

const std::string kOrder = R"({"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null}]})";

SerdeConfig config_for(const FakeRegistry& registry) {
  return SerdeConfig::from_properties({{"schema.registry.url", registry.url()}});
}

TEST(SerdeWire, HeaderIsMagicByteThenBigEndianId) {
  EXPECT_EQ(wire::header(0x01020304), std::string("\x00\x01\x02\x03\x04", 5));
  const auto framed = wire::parse(std::string("\x00\x00\x00\x01\x00xyz", 8));
  EXPECT_EQ(framed.schema_id, 256);
  EXPECT_EQ(framed.payload, "xyz");
  try {
    wire::parse("\x01\x00\x00\x00\x01");
    FAIL();
  } catch (const SerdeError& e) {
    EXPECT_STREQ(e.what(), "Unknown magic byte!");
  }
  EXPECT_THROW(wire::parse(std::string("\x00\x00", 2)), SerdeError);
  EXPECT_THROW(wire::parse(""), SerdeError);
}

TEST(SerdeStrategies, SubjectsAsConfluentNamesThem) {
  EXPECT_EQ(subject_name(SubjectNameStrategy::kTopicName, "orders", true, ""), "orders-key");
  EXPECT_EQ(subject_name(SubjectNameStrategy::kTopicName, "orders", false, "x.Y"), "orders-value");
  EXPECT_EQ(subject_name(SubjectNameStrategy::kRecordName, "orders", false, "shop.Order"),
            "shop.Order");
  EXPECT_EQ(subject_name(SubjectNameStrategy::kTopicRecordName, "orders", true, "shop.Order"),
            "orders-shop.Order");
  try {
    subject_name(SubjectNameStrategy::kRecordName, "orders", false, "");
    FAIL();
  } catch (const SerdeError& e) {
    EXPECT_STREQ(e.what(),
                 "In configuration value.subject.name.strategy = "
                 "io.confluent.kafka.serializers.subject.RecordNameStrategy, the message value "
                 "must only be a record schema");
  }
  EXPECT_EQ(
      parse_subject_name_strategy("io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"),
      SubjectNameStrategy::kTopicRecordName);
  EXPECT_EQ(parse_subject_name_strategy("RecordNameStrategy"), SubjectNameStrategy::kRecordName);
  EXPECT_FALSE(parse_subject_name_strategy("Nope"));

  const auto config =
      SerdeConfig::from_properties({{"schema.registry.url", "http://a:1, http://b:2"},
                                    {"auto.register.schemas", "false"},
                                    {"value.subject.name.strategy", "RecordNameStrategy"},
                                    {"basic.auth.user.info", "u:p"}});
  EXPECT_EQ(config.client.urls, (std::vector<std::string>{"http://a:1", "http://b:2"}));
  EXPECT_FALSE(config.auto_register_schemas);
  EXPECT_EQ(config.value_subject_name_strategy, SubjectNameStrategy::kRecordName);
  EXPECT_EQ(config.key_subject_name_strategy, SubjectNameStrategy::kTopicName);
  EXPECT_EQ(config.client.basic_auth_user_info, "u:p");
  EXPECT_THROW(SerdeConfig::from_properties({{"use.latest.version", "yes"}}), SerdeError);
}

TEST(SerdeClient, RegistersLooksUpAndCaches) {
  FakeRegistry registry;
  ClientConfig config;
  config.urls = {registry.url()};
  config.basic_auth_user_info = "user:secret";
  SchemaRegistryClient client(config);
  const SchemaInfo order{kOrder, "AVRO", {}};
  const int id = client.register_schema("orders-value", order);
  EXPECT_EQ(id, 1);
  EXPECT_EQ(registry.authorization(), "Basic dXNlcjpzZWNyZXQ=");
  const int requests = registry.requests();
  EXPECT_EQ(client.register_schema("orders-value", order), id);
  EXPECT_EQ(client.schema_by_id(id), order);
  EXPECT_EQ(registry.requests(), requests);  // both answered from the cache
  const auto found = client.lookup("orders-value", order);
  EXPECT_EQ(found.id, id);
  EXPECT_EQ(found.version, 1);
  EXPECT_EQ(client.latest("orders-value").id, id);
  EXPECT_EQ(client.version("orders-value", 1).info.schema, kOrder);

  try {
    client.schema_by_id(42);
    FAIL();
  } catch (const RegistryClientError& e) {
    EXPECT_EQ(e.http_status(), 404);
    EXPECT_EQ(e.error_code(), 40403);
    EXPECT_EQ(e.message(), "Schema 42 not found");
  }
  try {
    client.latest("a/b c");
    FAIL();
  } catch (const RegistryClientError& e) {
    EXPECT_EQ(e.error_code(), 40401);
    EXPECT_EQ(e.message(), "Subject 'a/b c' not found.");
  }
}

TEST(SerdeClient, FailsOverToTheNextUrlAndReportsUnreachable) {
  FakeRegistry registry;
  int dead_port = 0;
  {
    FakeRegistry gone;
    dead_port = gone.port();
  }
  ClientConfig config;
  config.urls = {"http://127.0.0.1:" + std::to_string(dead_port), registry.url()};
  config.timeout = std::chrono::milliseconds(2000);
  SchemaRegistryClient client(config);
  EXPECT_EQ(client.register_schema("s", {kOrder, "AVRO", {}}), 1);

  SchemaRegistryClient unreachable(
      ClientConfig{{"http://127.0.0.1:" + std::to_string(dead_port)}, "", config.timeout});
  try {
    unreachable.schema_by_id(1);
    FAIL();
  } catch (const RegistryClientError& e) {
    EXPECT_EQ(e.http_status(), 0);
  }
  EXPECT_THROW(SchemaRegistryClient(ClientConfig{{"https://x:1"}, "", config.timeout}),
               RegistryClientError);
}

TEST(SerdeAvro, SerializesRegistersAndDeserializes) {
  FakeRegistry registry;
  auto client = std::make_shared<SchemaRegistryClient>(config_for(registry).client);
  Serializer serializer(client, config_for(registry), Format::kAvro, kOrder, false);
  const std::string bytes = serializer.serialize("orders", {{"id", 5}, {"note", "hi"}});
  EXPECT_EQ(bytes, wire::header(1) + std::string("\x0a\x02\x04hi", 5));
  EXPECT_EQ(client->lookup("orders-value", {kOrder, "AVRO", {}}).id, 1);

  // A second client, as another process: the writer's schema comes from the registry by id.
  auto other = std::make_shared<SchemaRegistryClient>(config_for(registry).client);
  Deserializer deserializer(other, config_for(registry), Format::kAvro, false);
  EXPECT_EQ(deserializer.deserialize("orders", bytes),
            Json::parse(R"({"id":5,"note":{"string":"hi"}})"));
  EXPECT_EQ(deserializer.deserialize_ordered("orders", bytes).dump(),
            R"({"id":5,"note":{"string":"hi"}})");

  EXPECT_THROW(deserializer.deserialize("orders", "\x01\x00\x00\x00\x01"), SerdeError);
  try {
    deserializer.deserialize("orders", wire::header(77) + "x");
    FAIL();
  } catch (const SerdeError& e) {
    EXPECT_NE(std::string(e.what()).find("Error retrieving Avro schema for id 77"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Schema 77 not found"), std::string::npos);
  }
  EXPECT_THROW(deserializer.deserialize("orders", wire::header(1) + "\x0a\x04"), SerdeError);
  EXPECT_THROW(serializer.serialize("orders", {{"id", "five"}}), SerdeError);
}

TEST(SerdeAvro, StrategiesLatestVersionLookupAndReaderSchema) {
  FakeRegistry registry;
  auto config = config_for(registry);
  auto client = std::make_shared<SchemaRegistryClient>(config.client);
  config.value_subject_name_strategy = SubjectNameStrategy::kTopicRecordName;
  Serializer by_record(client, config, Format::kAvro, kOrder, false);
  (void)by_record.serialize("orders", {{"id", 1}});
  EXPECT_EQ(client->latest("orders-shop.Order").id, 1);
  Serializer primitive(client, config, Format::kAvro, R"("string")", false);
  EXPECT_THROW(primitive.serialize("orders", "x"), SerdeError);

  auto latest_config = config_for(registry);
  latest_config.use_latest_version = true;
  latest_config.auto_register_schemas = false;
  Serializer latest(client, latest_config, Format::kAvro, "", false);
  EXPECT_THROW(latest.serialize("orders", {{"id", 1}}), SerdeError);  // no orders-value yet
  client->register_schema("orders-value", {kOrder, "AVRO", {}});
  const auto bytes = latest.serialize("orders", {{"id", 9}});
  EXPECT_EQ(wire::parse(bytes).schema_id, 1);

  auto lookup_config = config_for(registry);
  lookup_config.auto_register_schemas = false;
  Serializer lookup(client, lookup_config, Format::kAvro,
                    R"({"type":"enum","name":"E","symbols":["A"]})", true);
  EXPECT_THROW(lookup.serialize("orders", "A"), SerdeError);  // never registered

  Deserializer reader(client, config, Format::kAvro, false,
                      R"({"type":"record","name":"Order","namespace":"shop","fields":[
                        {"name":"id","type":"double"},{"name":"extra","type":"int","default":3}]})");
  EXPECT_EQ(reader.deserialize("orders", bytes), Json::parse(R"({"id":9.0,"extra":3})"));
}

TEST(SerdeAvro, BytesSchemaIsRawAndOtherFormatsAreNotSupportedYet) {
  FakeRegistry registry;
  auto client = std::make_shared<SchemaRegistryClient>(config_for(registry).client);
  Serializer serializer(client, config_for(registry), Format::kAvro, R"("bytes")", true);
  const auto bytes = serializer.serialize("t", "ab\xC3\xBF");
  EXPECT_EQ(bytes, wire::header(1) + "ab\xff");
  Deserializer deserializer(client, config_for(registry), Format::kAvro, true);
  EXPECT_EQ(deserializer.deserialize("t", bytes), "ab\xC3\xBF");
  EXPECT_THROW(Serializer(client, config_for(registry), Format::kJson, "{}", false), SerdeError);
  EXPECT_THROW(Deserializer(client, config_for(registry), Format::kProtobuf, false), SerdeError);
  EXPECT_THROW(Serializer(client, config_for(registry), Format::kAvro, "{bad", false), SerdeError);
}

TEST(SerdeStreams, AvroSerdeRoundTripsAndThrowsSerializationException) {
  FakeRegistry registry;
  const std::map<std::string, std::string> config{{"schema.registry.url", registry.url()}};
  auto serde = streams::serdes::Avro(config, kOrder, false);
  ASSERT_TRUE(serde);
  const auto bytes = serde.serialize("orders", {{"id", 3}});
  EXPECT_EQ(streams::serdes::Avro(config, "", false).deserialize("orders", bytes),
            Json::parse(R"({"id":3,"note":null})"));
  EXPECT_THROW(serde.deserialize("orders", "\x05junk"), streams::SerializationException);
  EXPECT_THROW(serde.serialize("orders", {{"id", "x"}}), streams::SerializationException);
  EXPECT_THROW(streams::serdes::Avro(config, "", false).serialize("orders", {{"id", 1}}),
               streams::SerializationException);
  EXPECT_THROW(streams::serdes::Avro({{"auto.register.schemas", "maybe"}}, kOrder, false),
               std::invalid_argument);
}

}  // namespace
}  // namespace oxbow::registry
