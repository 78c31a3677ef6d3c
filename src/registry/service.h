#pragma once
// The registry's operations as Confluent's registry performs them, over the `_schemas` state:
// registering (the same schema in a subject is its existing version; the same schema anywhere
// keeps its id; compatibility checked at the subject's level), looking up, reading versions and
// subjects, soft and hard deletes, and compatibility settings. Every refusal carries Confluent's
// HTTP status, error_code and message (docs/registry/confluent.md, section 1). The REST layer maps
// requests to these calls; the store behind SchemaLog makes every write durable before it is
// answered.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "registry/compatibility.h"
#include "registry/store/schema_state.h"

namespace oxbow::registry {

struct RegistryError {
  int http_status = 500;
  int error_code = 500;
  std::string message;
};

template <class T>
struct Result {
  std::optional<T> value;
  std::optional<RegistryError> error;
  Result(T v) : value(std::move(v)) {}              // NOLINT: a result is its value
  Result(RegistryError e) : error(std::move(e)) {}  // NOLINT: or its error
  explicit operator bool() const { return value.has_value(); }
};

using LogRecord = std::pair<store::RecordKey, std::optional<store::RecordValue>>;

// Where the registry's writes go: the `_schemas` topic in the server, memory in tests. append()
// returns once the records are applied to state(), or says why they could not be written.
class SchemaLog {
 public:
  virtual ~SchemaLog() = default;
  virtual std::optional<std::string> append(const std::vector<LogRecord>& records) = 0;
  virtual const store::SchemaState& state() const = 0;
  // Applies what has been read of the log since; called before each request is answered, on the
  // thread that answers it.
  virtual void sync() {}
  // The id of the Kafka cluster holding the log; empty for none.
  virtual std::string cluster_id() const { return ""; }
};

struct ServiceConfig {
  CompatibilityLevel default_level = CompatibilityLevel::kBackward;  // schema.compatibility.level
  bool validate_defaults = true;  // schema.providers.avro.validate.defaults (see avro/schema.h)
  // The largest `_schemas` record: librdkafka's message.max.bytes default, below the brokers'.
  size_t max_record_bytes = 1000000;
};

struct SchemaRequest {
  std::string schema;
  std::string schema_type;  // empty: AVRO
  std::vector<store::SchemaReference> references;
  std::optional<int> id = std::nullopt;  // an imported schema's id (IMPORT mode)
  std::optional<int> version =
      std::nullopt;        // an imported schema's version; otherwise the next one, if given
  bool normalize = false;  // ?normalize=true
};

class RegistryService {
 public:
  RegistryService(SchemaLog& log, ServiceConfig config) : log_(log), config_(config) {}

  // POST /subjects/{s}/versions: the schema's id.
  Result<int> register_schema(const std::string& subject, const SchemaRequest& request);
  // POST /subjects/{s}: the version holding this schema.
  Result<store::SchemaValue> lookup(const std::string& subject, const SchemaRequest& request,
                                    bool deleted);
  // GET /subjects/{s}/versions/{v}; `version` as the path gives it ("latest", "3", ...).
  Result<store::SchemaValue> version(const std::string& subject, const std::string& version,
                                     bool deleted);
  Result<std::vector<int>> versions(const std::string& subject, bool deleted, bool deleted_only);
  std::vector<std::string> subjects(bool deleted, bool deleted_only) const;
  // GET /schemas/ids/{id}
  Result<store::SchemaValue> schema_by_id(int id) const;
  // A stored schema in another of its type's formats (?format=resolved, serialized); its stored
  // text for a format the type does not have.
  std::string formatted(const store::SchemaValue& v, const std::string& format) const;
  // DELETE /subjects/{s}/versions/{v}: the version deleted.
  Result<int> delete_version(const std::string& subject, const std::string& version,
                             bool permanent);
  // DELETE /subjects/{s}: the versions deleted.
  Result<std::vector<int>> delete_subject(const std::string& subject, bool permanent);
  // GET /config[/{s}]: the level in force (a subject's, with `default_to_global` falling back).
  Result<std::string> compatibility(const std::optional<std::string>& subject,
                                    bool default_to_global) const;
  // PUT /config[/{s}]
  Result<std::string> set_compatibility(const std::optional<std::string>& subject,
                                        const std::optional<std::string>& level,
                                        std::optional<bool> normalize = std::nullopt);
  // The config's "normalize", when set (the subject's, else with `default_to_global` the global).
  std::optional<bool> normalize_setting(const std::optional<std::string>& subject,
                                        bool default_to_global) const;
  // DELETE /config[/{s}]: the level that was set (the default, globally, when none was).
  Result<std::string> delete_compatibility(const std::optional<std::string>& subject);

  // GET /mode[/{s}], PUT, DELETE (READWRITE, READONLY, READONLY_OVERRIDE, IMPORT).
  Result<std::string> mode(const std::optional<std::string>& subject, bool default_to_global) const;
  Result<std::string> set_mode(const std::optional<std::string>& subject, const std::string& mode,
                               bool force);
  Result<std::string> delete_mode(const std::optional<std::string>& subject);

  // GET /schemas/ids/{id}/subjects and /versions: who holds the id.
  Result<std::vector<std::pair<std::string, int>>> holders(int id, bool deleted) const;
  // GET /subjects/{s}/versions/{v}/referencedby: ids of the schemas referencing that version.
  Result<std::vector<int>> referenced_by(const std::string& subject, const std::string& version);
  // GET /schemas: versions by subject then version (the latest live one of each with
  // `latest_only`), subjects starting with `prefix`.
  std::vector<store::SchemaValue> schemas(const std::string& prefix, bool deleted,
                                          bool latest_only) const;

  // POST /compatibility/subjects/{s}/versions[/{v}]: the problems against that version (`version`
  // set) or against the live versions the subject's level checks; empty when compatible.
  Result<std::vector<std::string>> test_compatibility(const std::string& subject,
                                                      const std::optional<std::string>& version,
                                                      const SchemaRequest& request);

  CompatibilityLevel level_of(const std::string& subject) const;
  // Whether schemas registered or looked up under `subject` are normalized: asked for, or set in
  // the subject's or the global config ("normalize": true).
  bool normalizing(const std::string& subject, const SchemaRequest& request) const;
  // Whether a registered schema references that version (which may then not be deleted).
  bool referenced(const std::string& subject, int version) const;
  // The Kafka cluster the registry keeps its state in (GET /v1/metadata/id).
  std::string kafka_cluster_id() const { return log_.cluster_id(); }

 private:
  const store::SchemaState& state() const { return log_.state(); }
  // The mode in force for a subject (its own, else the global one, else READWRITE).
  std::string mode_of(const std::string& subject) const;
  Result<int> registered(const std::string& subject, int version, int id) const;
  Result<int> import_schema(const std::string& subject, const SchemaRequest& request,
                            const ParsedSchema& schema, const std::string& text);
  std::vector<const store::SchemaValue*> live_newest_first(const std::string& subject) const;
  // Registered versions parsed to be checked against, in the order given (any that no longer
  // parses left out); `owned` keeps the schemas `list` points to.
  static std::vector<const store::SchemaValue*> checked_versions(
      CompatibilityLevel level, std::vector<const store::SchemaValue*> newest_first);
  struct ParsedVersions {
    std::vector<std::unique_ptr<ParsedSchema>> owned;
    std::vector<RegisteredVersion> list;
  };
  ParsedVersions parsed_versions(const std::string& subject,
                                 const std::vector<const store::SchemaValue*>& versions) const;
  Result<std::unique_ptr<ParsedSchema>> parse(const std::string& subject,
                                              const SchemaRequest& request) const;
  std::optional<RegistryError> write(const std::vector<LogRecord>& records, const char* what);

  SchemaLog& log_;
  ServiceConfig config_;
};

// Confluent's version path segment: "latest" (any case) and -1 mean the latest, else 1..2^31-1.
// nullopt for anything else (42202).
std::optional<int> parse_version(const std::string& text);

}  // namespace oxbow::registry
