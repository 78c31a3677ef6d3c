#include "registry/service.h"

#include "registry/service_errors.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <functional>
#include <map>
#include <set>

namespace oxbow::registry {

using namespace detail;

namespace {

using store::KeyType;
using store::RecordKey;
using store::SchemaValue;

// Confluent's QualifiedSubject.isValidSubject: no control characters (U+0000–U+001F,
// U+007F–U+009F), which in UTF-8 are the bytes below 0x20, 0x7F, and C2 80 to C2 9F.
bool valid_subject(const std::string& s) {
  if (s == "__GLOBAL" || s == "__EMPTY") return false;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) < 0xa0)
      return false;
  }
  return true;
}

// How Confluent's Schema.toString() shows a request in a 42201 message.
std::string request_text(const std::string& subject, const SchemaRequest& r) {
  std::string refs;
  for (const auto& ref : r.references)
    refs += (refs.empty() ? "" : ", ") + std::string("{name='") + ref.name + "', subject='" +
            ref.subject + "', version=" + std::to_string(ref.version) + "}";
  std::string type = r.schema_type.empty() ? "AVRO" : r.schema_type;
  return "{subject=" + subject + ",version=null,id=null,schemaType=" + type + ",references=[" +
         refs + "],metadata=null,ruleSet=null,schema=" + r.schema + ",schemaTags=null}";
}

bool same_schema(const SchemaValue& v, const std::string& text, const std::string& type,
                 const std::vector<store::SchemaReference>& refs) {
  return v.schema == text && v.schema_type == type && v.references == refs;
}

// Normalized references are sorted and each named once.
std::vector<store::SchemaReference> normalized(std::vector<store::SchemaReference> refs) {
  auto key = [](const store::SchemaReference& r) { return std::tie(r.name, r.subject, r.version); };
  std::sort(refs.begin(), refs.end(),
            [&](const auto& a, const auto& b) { return key(a) < key(b); });
  refs.erase(std::unique(refs.begin(), refs.end(),
                         [&](const auto& a, const auto& b) { return key(a) == key(b); }),
             refs.end());
  return refs;
}

}  // namespace

std::optional<int> parse_version(const std::string& text) {
  auto begin = text.find_first_not_of(" \t");
  auto end = text.find_last_not_of(" \t");
  std::string t = begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
  if (upper(t) == "LATEST") return -1;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size() || t.empty()) return std::nullopt;
  if (v == -1) return -1;
  if (v < 1 || v > INT_MAX) return std::nullopt;
  return static_cast<int>(v);
}

Result<std::unique_ptr<ParsedSchema>> RegistryService::parse(const std::string& subject,
                                                             const SchemaRequest& request) const {
  // References resolve to registered versions, parsed first (their own references with them).
  // As in Confluent's registry, a reference name is parsed once however many schemas reach it (a
  // diamond: two references sharing a third), the first it names winning; it must still exist.
  std::vector<std::unique_ptr<ParsedSchema>> owned;
  std::vector<NamedSchema> refs;
  std::set<std::string> resolved;
  std::string error;
  std::function<bool(const std::vector<store::SchemaReference>&, int)> resolve =
      [&](const std::vector<store::SchemaReference>& list, int depth) {
        for (const auto& ref : list) {
          const SchemaValue* v = ref.version == -1 ? state().latest(ref.subject)
                                                   : state().version(ref.subject, ref.version);
          if (!v || depth > 32) {
            error = "Invalid reference " + ref.name + ": subject " + ref.subject + " version " +
                    std::to_string(ref.version) + " not found";
            return false;
          }
          if (!resolved.insert(ref.name).second) continue;
          if (!resolve(v->references, depth + 1)) return false;
          auto parsed = parse_schema(v->schema_type, v->schema, refs, false);
          if (!parsed.schema) {
            error = parsed.error;
            return false;
          }
          refs.push_back({ref.name, parsed.schema.get()});
          owned.push_back(std::move(parsed.schema));
        }
        return true;
      };
  if (resolve(request.references, 0)) {
    auto parsed = parse_schema(request.schema_type, request.schema, refs,
                               config_.validate_defaults || request.normalize);
    if (parsed.schema) {
      parsed.schema->keep(std::move(owned));
      return std::move(parsed.schema);
    }
    error = parsed.error;
  }
  std::string type = request.schema_type.empty() ? "AVRO" : request.schema_type;
  if (error.rfind("Invalid schema type", 0) == 0) return unprocessable(42201, error);
  return unprocessable(42201, "Invalid schema " + request_text(subject, request) +
                                  " with refs [] of type " + type + ", details: " + error);
}

std::string RegistryService::formatted(const SchemaValue& v, const std::string& format) const {
  auto parsed = parse(v.subject, {v.schema, v.schema_type, v.references});
  if (!parsed) return v.schema;
  return (*parsed.value)->formatted(format).value_or(v.schema);
}

CompatibilityLevel RegistryService::level_of(const std::string& subject) const {
  for (const auto& s : {std::optional<std::string>(subject), std::optional<std::string>()})
    if (const auto* c = state().config(s); c && c->compatibility_level)
      if (auto level = compatibility_level(*c->compatibility_level)) return *level;
  return config_.default_level;
}

std::optional<RegistryError> RegistryService::write(const std::vector<LogRecord>& records,
                                                    const char* what) {
  // Confluent's registry learns this from the producer (RecordTooLargeException); checking first
  // gives the same answer without a round trip.
  for (const auto& [key, value] : records)
    if (value && store::encode_value(*value).size() + store::encode_key(key).size() >
                     config_.max_record_bytes)
      return unprocessable(42209, "Register operation failed because schema is too large");
  if (auto failure = log_.append(records)) return store_error(what);
  return std::nullopt;
}

Result<int> RegistryService::register_schema(const std::string& subject,
                                             const SchemaRequest& request) {
  if (!valid_subject(subject))
    return unprocessable(42208, "The specified subject '" + subject + "' is not a valid.");
  std::string mode = mode_of(subject);
  if (mode == "READONLY" || mode == "READONLY_OVERRIDE")
    return unprocessable(42205, "Subject " + subject + " in context  is in read-only mode");
  if (request.id && mode != "IMPORT")
    return unprocessable(42205, "Subject " + subject + " is not in import or forward mode");
  if (!request.id && mode != "READWRITE")
    return unprocessable(42205, "Subject " + subject + " in context  is not in read-write mode");
  SchemaRequest effective = request;
  effective.normalize = normalizing(subject, request);
  if (effective.normalize) effective.references = normalized(request.references);
  auto parsed = parse(subject, effective);
  if (!parsed) return *parsed.error;
  const ParsedSchema& schema = **parsed.value;
  const std::string text = effective.normalize ? schema.normalized() : schema.canonical();
  const auto& refs = effective.references;
  if (request.id) return import_schema(subject, effective, schema, text);
  auto versions = state().versions(subject);
  for (const SchemaValue* v : versions)
    if (!v->deleted && same_schema(*v, text, schema.type(), refs)) return v->id;
  int version = versions.empty() ? 1 : versions.back()->version + 1;
  if (request.version && *request.version != version)
    return unprocessable(42201, "Version is not one more than previous version");

  CompatibilityLevel level = level_of(subject);
  auto live = parsed_versions(subject, checked_versions(level, live_newest_first(subject)));
  auto problems = compatibility_problems(level, schema, live.list);
  if (!problems.empty()) return RegistryError{409, 409, incompatible_message(subject, problems)};

  // The same schema anywhere, soft-deleted versions included, keeps its id.
  int id = state().id_of(schema.type(), refs, text);
  if (id == 0) id = state().max_id() + 1;

  std::vector<LogRecord> records;
  // Confluent tombstones the subject's soft-deleted versions that had this id first.
  for (const SchemaValue* v : versions)
    if (v->deleted && v->id == id)
      records.push_back({RecordKey{KeyType::kSchema, subject, v->version, 1}, std::nullopt});
  SchemaValue value;
  value.subject = subject;
  value.version = version;
  value.id = id;
  value.schema_type = schema.type();
  value.references = refs;
  value.schema = text;
  records.push_back({RecordKey{KeyType::kSchema, subject, version, 1}, store::RecordValue(value)});
  if (auto error = write(records, "Register schema")) return *error;
  return registered(subject, version, id);
}

// A write read back is in the state, unless a record of another writer (a second instance that
// took itself for the primary) took the id first: then the id is not this schema's to answer.
Result<int> RegistryService::registered(const std::string& subject, int version, int id) const {
  const SchemaValue* v = state().version(subject, version);
  if (!v || v->id != id) return store_error("Register schema");
  return id;
}

// IMPORT mode: the schema keeps the id (and version) it had where it came from, unchecked for
// compatibility, as long as the id names no other schema here.
Result<int> RegistryService::import_schema(const std::string& subject, const SchemaRequest& request,
                                           const ParsedSchema& schema, const std::string& text) {
  int id = *request.id;
  if (id < 1) return unprocessable(42201, "Invalid schema id " + std::to_string(id));
  auto versions = state().versions(subject);
  for (const SchemaValue* v : versions)
    if (!v->deleted && same_schema(*v, text, schema.type(), request.references)) {
      if (v->id == id) return id;
      // Confluent's IdDoesNotMatchException (6.x): one schema, one id within a subject.
      return unprocessable(42207, "Schema already registered with id " + std::to_string(v->id) +
                                      " instead of input id " + std::to_string(id));
    }
  if (const SchemaValue* holder = state().by_id(id);
      holder && (holder->schema != text || holder->schema_type != schema.type()))
    return unprocessable(42205, "Overwrite new schema with id " + std::to_string(id) +
                                    " in context  is not permitted.");
  int version = request.version.value_or(versions.empty() ? 1 : versions.back()->version + 1);
  if (version < 1) return invalid_version(std::to_string(version));
  SchemaValue value;
  value.subject = subject;
  value.version = version;
  value.id = id;
  value.schema_type = schema.type();
  value.references = request.references;
  value.schema = text;
  if (auto error =
          write({{RecordKey{KeyType::kSchema, subject, version, 1}, store::RecordValue(value)}},
                "Register schema"))
    return *error;
  return registered(subject, version, id);
}

std::string RegistryService::mode_of(const std::string& subject) const {
  for (const auto& s : {std::optional<std::string>(subject), std::optional<std::string>()})
    if (const auto* mode = state().mode(s)) return mode->mode;
  return "READWRITE";
}

bool RegistryService::normalizing(const std::string& subject, const SchemaRequest& request) const {
  if (request.normalize) return true;
  for (const auto& s : {std::optional<std::string>(subject), std::optional<std::string>()})
    if (const auto* c = state().config(s)) {
      auto it = c->other.find("normalize");
      if (it != c->other.end()) return it->is_boolean() && it->get<bool>();
    }
  return false;
}

Result<std::vector<std::string>> RegistryService::test_compatibility(
    const std::string& subject, const std::optional<std::string>& version,
    const SchemaRequest& request) {
  std::vector<const SchemaValue*> against;
  if (version) {
    auto v = parse_version(*version);
    if (!v) return invalid_version(*version);
    const SchemaValue* found = *v == -1 ? state().latest(subject) : state().version(subject, *v);
    if (found && found->deleted) found = nullptr;
    if (!found && *v != -1) return version_not_found(*v);
    if (found) against.push_back(found);
  } else {
    against = live_newest_first(subject);
  }
  auto parsed = parse(subject, request);
  if (!parsed) return *parsed.error;
  return compatibility_problems(level_of(subject), **parsed.value,
                                parsed_versions(subject, against).list);
}

std::vector<const SchemaValue*> RegistryService::live_newest_first(
    const std::string& subject) const {
  std::vector<const SchemaValue*> out;
  auto all = state().versions(subject);
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (!(*it)->deleted) out.push_back(*it);
  return out;
}

// Only the versions the level checks are parsed: none for NONE, the latest unless transitive.
std::vector<const SchemaValue*> RegistryService::checked_versions(
    CompatibilityLevel level, std::vector<const SchemaValue*> newest_first) {
  if (level == CompatibilityLevel::kNone) return {};
  if (!is_transitive(level) && newest_first.size() > 1) newest_first.resize(1);
  return newest_first;
}

RegistryService::ParsedVersions RegistryService::parsed_versions(
    const std::string& subject, const std::vector<const SchemaValue*>& versions) const {
  ParsedVersions out;
  for (const SchemaValue* v : versions) {
    auto old = parse(subject, {v->schema, v->schema_type, v->references});
    if (!old) continue;
    out.list.push_back({v->version, old.value->get()});
    out.owned.push_back(std::move(*old.value));
  }
  return out;
}

Result<SchemaValue> RegistryService::lookup(const std::string& subject,
                                            const SchemaRequest& request, bool deleted) {
  auto versions = state().versions(subject);
  if (versions.empty()) return subject_not_found(subject);
  SchemaRequest effective = request;
  effective.normalize = normalizing(subject, request);
  if (effective.normalize) effective.references = normalized(request.references);
  auto parsed = parse(subject, effective);
  if (!parsed) return *parsed.error;
  const ParsedSchema& schema = **parsed.value;
  // A schema registered before normalization was asked for is still found by its own text.
  std::vector<std::string> texts{schema.canonical()};
  if (effective.normalize) texts.push_back(schema.normalized());
  for (const SchemaValue* v : versions)
    for (const auto& text : texts)
      if ((deleted || !v->deleted) && same_schema(*v, text, schema.type(), effective.references))
        return *v;
  return not_found(40403, "Schema not found");
}

Result<SchemaValue> RegistryService::version(const std::string& subject, const std::string& raw,
                                             bool deleted) {
  auto v = parse_version(raw);
  if (!v) return invalid_version(raw);
  const SchemaValue* found = nullptr;
  if (*v == -1) {
    found = state().latest(subject);
    if (!found && deleted) {
      auto all = state().versions(subject);
      if (!all.empty()) found = all.back();
    }
  } else {
    found = state().version(subject, *v);
    if (found && found->deleted && !deleted) found = nullptr;
  }
  if (found) return *found;
  auto all = state().versions(subject);
  bool any = std::any_of(all.begin(), all.end(),
                         [&](const SchemaValue* s) { return deleted || !s->deleted; });
  return any ? version_not_found(*v) : subject_not_found(subject);
}

Result<std::vector<int>> RegistryService::versions(const std::string& subject, bool deleted,
                                                   bool deleted_only) {
  std::vector<int> out;
  for (const SchemaValue* v : state().versions(subject))
    if (deleted_only ? v->deleted : (deleted || !v->deleted)) out.push_back(v->version);
  if (out.empty()) return subject_not_found(subject);
  return out;
}

std::vector<std::string> RegistryService::subjects(bool deleted, bool deleted_only) const {
  return state().subjects(deleted, deleted_only);
}

Result<SchemaValue> RegistryService::schema_by_id(int id) const {
  if (const SchemaValue* v = state().by_id(id)) return *v;
  return not_found(40403, "Schema " + std::to_string(id) + " not found");
}

namespace {

// Confluent's SchemaKey.toString(), as its 42206 message shows the referenced version.
std::string schema_key_text(const std::string& subject, int version) {
  return "{magic=1,keytype=SCHEMA,subject=" + subject + ",version=" + std::to_string(version) + "}";
}

}  // namespace

bool RegistryService::referenced(const std::string& subject, int version) const {
  for (const auto& name : state().subjects(true))
    for (const SchemaValue* v : state().versions(name))
      for (const auto& ref : v->references)
        if (ref.subject == subject && ref.version == version) return true;
  return false;
}

Result<int> RegistryService::delete_version(const std::string& subject, const std::string& raw,
                                            bool permanent) {
  auto v = parse_version(raw);
  if (!v) return invalid_version(raw);
  auto all = state().versions(subject);
  if (all.empty()) return subject_not_found(subject);
  const SchemaValue* found = *v == -1 ? state().latest(subject) : state().version(subject, *v);
  if (!found) return version_not_found(*v);
  if (!permanent && found->deleted)
    return not_found(40406, "Subject '" + subject + "' Version " + raw +
                                " was soft deleted.Set permanent=true to delete permanently");
  if (permanent && !found->deleted)
    return not_found(40407, "Subject '" + subject + "' Version " + std::to_string(found->version) +
                                " was not deleted first before being permanently deleted");
  if (referenced(subject, found->version))
    return unprocessable(42206, "One or more references exist to the schema " +
                                    schema_key_text(subject, found->version) + ".");
  RecordKey key{KeyType::kSchema, subject, found->version, 1};
  std::vector<LogRecord> records;
  int version = found->version;
  if (permanent) {
    records.push_back({key, std::nullopt});
    if (all.size() == 1) {  // the subject's last version: its settings go with it
      if (state().config(subject))
        records.push_back({RecordKey{KeyType::kConfig, subject}, std::nullopt});
      if (state().mode(subject))
        records.push_back({RecordKey{KeyType::kMode, subject}, std::nullopt});
    }
  } else {
    SchemaValue value = *found;
    value.deleted = true;
    records.push_back({key, store::RecordValue(value)});
  }
  if (auto error = write(records, "Delete Schema Version")) return *error;
  return version;
}

Result<std::vector<int>> RegistryService::delete_subject(const std::string& subject,
                                                         bool permanent) {
  auto all = state().versions(subject);
  if (all.empty()) return subject_not_found(subject);
  std::vector<int> live, every;
  for (const SchemaValue* v : all) {
    every.push_back(v->version);
    if (!v->deleted) live.push_back(v->version);
    if (referenced(subject, v->version))
      return unprocessable(42206, "One or more references exist to the schema " +
                                      schema_key_text(subject, v->version) + ".");
  }
  std::vector<LogRecord> records;
  if (!permanent) {
    if (live.empty())
      return not_found(40404, "Subject '" + subject +
                                  "' was soft deleted.Set permanent=true to delete permanently");
    records.push_back({RecordKey{KeyType::kDeleteSubject, subject},
                       store::RecordValue(store::DeleteSubjectValue{subject, live.back()})});
    if (auto error = write(records, "Delete subject")) return *error;
    return live;
  }
  if (!live.empty())
    return not_found(
        40405, "Subject '" + subject + "' was not deleted first before being permanently deleted");
  for (int v : every) records.push_back({RecordKey{KeyType::kSchema, subject, v, 1}, std::nullopt});
  if (state().config(subject))
    records.push_back({RecordKey{KeyType::kConfig, subject}, std::nullopt});
  if (state().mode(subject)) records.push_back({RecordKey{KeyType::kMode, subject}, std::nullopt});
  if (auto error = write(records, "Delete subject")) return *error;
  return every;
}

Result<std::vector<std::pair<std::string, int>>> RegistryService::holders(int id,
                                                                          bool deleted) const {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& [subject, version] : state().holders(id))
    if (deleted || !state().version(subject, version)->deleted) out.emplace_back(subject, version);
  if (out.empty()) return not_found(40403, "Schema not found");
  return out;
}

Result<std::vector<int>> RegistryService::referenced_by(const std::string& subject,
                                                        const std::string& raw) {
  auto target = version(subject, raw, true);
  if (!target) return *target.error;
  std::vector<int> ids;
  for (const auto& name : state().subjects(true))
    for (const SchemaValue* v : state().versions(name))
      for (const auto& ref : v->references)
        if (ref.subject == subject && ref.version == target.value->version &&
            std::find(ids.begin(), ids.end(), v->id) == ids.end())
          ids.push_back(v->id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<SchemaValue> RegistryService::schemas(const std::string& prefix, bool deleted,
                                                  bool latest_only) const {
  std::vector<SchemaValue> out;
  for (const auto& name : state().subjects(deleted)) {
    if (name.rfind(prefix, 0) != 0) continue;
    if (latest_only) {
      if (const SchemaValue* v = state().latest(name)) out.push_back(*v);
      continue;
    }
    for (const SchemaValue* v : state().versions(name))
      if (deleted || !v->deleted) out.push_back(*v);
  }
  return out;
}

}  // namespace oxbow::registry
