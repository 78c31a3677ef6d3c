#include "registry/store/records.h"

#include <tuple>

namespace oxbow::registry::store {

namespace {

using Json = nlohmann::ordered_json;

struct TypeName {
  KeyType type;
  const char* name;
};
constexpr TypeName kTypes[] = {
    {KeyType::kSchema, "SCHEMA"},
    {KeyType::kConfig, "CONFIG"},
    {KeyType::kMode, "MODE"},
    {KeyType::kDeleteSubject, "DELETE_SUBJECT"},
    {KeyType::kClearSubject, "CLEAR_SUBJECT"},
    {KeyType::kNoop, "NOOP"},
};

std::optional<std::string> optional_string(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<std::string>();
}

Json schema_json(const SchemaValue& v) {
  Json j;
  j["subject"] = v.subject;
  j["version"] = v.version;
  j["id"] = v.id;
  if (v.schema_type != "AVRO") j["schemaType"] = v.schema_type;
  if (!v.references.empty()) {
    Json refs = Json::array();
    for (const auto& r : v.references)
      refs.push_back(Json{{"name", r.name}, {"subject", r.subject}, {"version", r.version}});
    j["references"] = refs;
  }
  j["schema"] = v.schema;
  j["deleted"] = v.deleted;
  return j;
}

SchemaValue schema_value(const Json& j) {
  SchemaValue v;
  v.subject = j.at("subject").get<std::string>();
  v.version = j.at("version").get<int>();
  v.id = j.at("id").get<int>();
  if (auto t = optional_string(j, "schemaType")) v.schema_type = *t;
  if (auto refs = j.find("references"); refs != j.end() && refs->is_array())
    for (const auto& r : *refs)
      v.references.push_back({r.at("name").get<std::string>(), r.at("subject").get<std::string>(),
                              r.at("version").get<int>()});
  v.schema = j.at("schema").get<std::string>();
  if (auto d = j.find("deleted"); d != j.end() && d->is_boolean()) v.deleted = d->get<bool>();
  return v;
}

Json config_json(const ConfigValue& v) {
  Json j;
  if (v.subject) j["subject"] = *v.subject;
  if (v.compatibility_level) j["compatibilityLevel"] = *v.compatibility_level;
  for (auto it = v.other.begin(); it != v.other.end(); ++it) j[it.key()] = it.value();
  return j;
}

ConfigValue config_value(const Json& j) {
  ConfigValue v;
  v.subject = optional_string(j, "subject");
  v.compatibility_level = optional_string(j, "compatibilityLevel");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "subject" && it.key() != "compatibilityLevel" && !it.value().is_null())
      v.other[it.key()] = it.value();
  return v;
}

}  // namespace

const char* key_type_name(KeyType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t.name;
  return "NOOP";
}

bool RecordKey::operator<(const RecordKey& o) const {
  return std::tie(type, subject, version) < std::tie(o.type, o.subject, o.version);
}

bool RecordKey::operator==(const RecordKey& o) const {
  return std::tie(type, subject, version) == std::tie(o.type, o.subject, o.version);
}

std::string encode_key(const RecordKey& key) {
  Json j;
  j["keytype"] = key_type_name(key.type);
  if (key.subject) j["subject"] = *key.subject;
  if (key.type == KeyType::kSchema) j["version"] = key.version;
  j["magic"] = key.magic;
  return j.dump();
}

std::string encode_value(const RecordValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        Json j;
        if constexpr (std::is_same_v<T, SchemaValue>) {
          j = schema_json(v);
        } else if constexpr (std::is_same_v<T, ConfigValue>) {
          j = config_json(v);
        } else if constexpr (std::is_same_v<T, ModeValue>) {
          if (v.subject) j["subject"] = *v.subject;
          j["mode"] = v.mode;
        } else if constexpr (std::is_same_v<T, DeleteSubjectValue>) {
          j["subject"] = v.subject;
          j["version"] = v.version;
        } else {
          j = Json::object();
          if (v.subject) j["subject"] = *v.subject;
        }
        return j.dump();
      },
      value);
}

Decoded<RecordKey> decode_key(std::string_view bytes) {
  Decoded<RecordKey> out;
  Json j = Json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.error = "A key is not a JSON object";
    return out;
  }
  try {
    std::string type = j.at("keytype").get<std::string>();
    RecordKey key;
    bool known = false;
    for (const auto& t : kTypes)
      if (type == t.name) key.type = t.type, known = true;
    if (!known) {
      out.error = "Unknown schema registry key type : " + type;
      return out;
    }
    key.subject = optional_string(j, "subject");
    if (auto m = j.find("magic"); m != j.end() && m->is_number_integer()) key.magic = m->get<int>();
    if (key.type == KeyType::kSchema) {
      if (key.magic != 0 && key.magic != 1) {
        out.error = "Can't deserialize schema for the magic byte " + std::to_string(key.magic);
        return out;
      }
      key.version = j.at("version").get<int>();
      if (!key.subject) throw std::runtime_error("a SCHEMA key without a subject");
    }
    out.value = key;
  } catch (const std::exception& e) {
    out.error = std::string("A malformed key: ") + e.what();
  }
  return out;
}

Decoded<RecordValue> decode_value(const RecordKey& key, std::string_view bytes) {
  Decoded<RecordValue> out;
  Json j = Json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.error = "A value is not a JSON object";
    return out;
  }
  try {
    switch (key.type) {
      case KeyType::kSchema:
        out.value = schema_value(j);
        break;
      case KeyType::kConfig: {
        ConfigValue v = config_value(j);
        if (!v.subject) v.subject = key.subject;  // values before 6.2 have none inside
        out.value = v;
        break;
      }
      case KeyType::kMode:
        out.value =
            ModeValue{optional_string(j, "subject") ? optional_string(j, "subject") : key.subject,
                      j.at("mode").get<std::string>()};
        break;
      case KeyType::kDeleteSubject:
        out.value =
            DeleteSubjectValue{j.at("subject").get<std::string>(), j.at("version").get<int>()};
        break;
      case KeyType::kClearSubject:
        out.value = ClearSubjectValue{optional_string(j, "subject")};
        break;
      case KeyType::kNoop:
        break;
    }
  } catch (const std::exception& e) {
    out.error = std::string("A malformed ") + key_type_name(key.type) + " value: " + e.what();
  }
  return out;
}

}  // namespace oxbow::registry::store
