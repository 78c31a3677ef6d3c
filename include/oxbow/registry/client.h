#pragma once
// A client of a schema registry that speaks Confluent's REST API (Oxbow's own, or Confluent's),
// as Confluent's serializers use it: register a schema under a subject, look one up, fetch one by
// id or a subject's latest version. Answers that do not change (an id's schema, a schema's id
// under a subject) are cached; the client is safe to share between threads.
//
// HTTP/1.1 over plain TCP with keep-alive (https is not supported yet). A request that fails on
// the connection is retried once on a new connection, then on the next URL of the list.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace oxbow::registry {

// An answer that is an error. http_status is 0 when no answer came (connection refused, timeout);
// error_code and message are then 0 and the cause. Otherwise they are Confluent's "error_code"
// (e.g. 40403 for an unknown schema id) and "message".
class RegistryClientError : public std::runtime_error {
 public:
  RegistryClientError(int http_status, int error_code, std::string message);
  int http_status() const { return http_status_; }
  int error_code() const { return error_code_; }
  const std::string& message() const { return message_; }

 private:
  int http_status_, error_code_;
  std::string message_;
};

struct SchemaReference {
  std::string name;  // how the referring schema names it (Avro: unused; Protobuf: its import)
  std::string subject;
  int version = 0;
  bool operator==(const SchemaReference&) const = default;
};

// A schema as the registry holds it: its text, "AVRO", "JSON" or "PROTOBUF", and references.
struct SchemaInfo {
  std::string schema;
  std::string type = "AVRO";
  std::vector<SchemaReference> references;
  bool operator==(const SchemaInfo&) const = default;
};

struct RegisteredSchema {
  std::string subject;
  int id = 0;
  int version = 0;
  SchemaInfo info;
};

struct ClientConfig {
  std::vector<std::string> urls{"http://localhost:8081"};
  std::string basic_auth_user_info;  // "user:password"; empty: no Authorization header
  std::chrono::milliseconds timeout{30000};

  // From Confluent's property names: schema.registry.url (comma-separated), basic.auth.user.info
  // (used when basic.auth.credentials.source is USER_INFO, its default here),
  // schema.registry.request.timeout.ms. Other names are ignored.
  static ClientConfig from_properties(const std::map<std::string, std::string>& properties);
};

class SchemaRegistryClient {
 public:
  explicit SchemaRegistryClient(ClientConfig config);
  ~SchemaRegistryClient();
  SchemaRegistryClient(const SchemaRegistryClient&) = delete;
  SchemaRegistryClient& operator=(const SchemaRegistryClient&) = delete;

  // POST /subjects/{subject}/versions: the schema's id, registered if new.
  int register_schema(const std::string& subject, const SchemaInfo& schema, bool normalize = false);
  // GET /schemas/ids/{id}.
  SchemaInfo schema_by_id(int id);
  // POST /subjects/{subject}: the version of the subject that holds this schema.
  RegisteredSchema lookup(const std::string& subject, const SchemaInfo& schema,
                          bool normalize = false);
  // GET /subjects/{subject}/versions/latest (never cached: it changes).
  RegisteredSchema latest(const std::string& subject);
  // GET /subjects/{subject}/versions/{version}, as references are resolved.
  RegisteredSchema version(const std::string& subject, int version);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::registry
