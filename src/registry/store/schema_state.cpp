#include "registry/store/schema_state.h"

#include <algorithm>

namespace oxbow::registry::store {

namespace {

// One string per schema identity: its type, its references and its text.
std::string schema_key(const std::string& type, const std::vector<SchemaReference>& references,
                       const std::string& text) {
  std::string key = type;
  for (const auto& r : references)
    key += '\0' + r.name + '\0' + r.subject + '\0' + std::to_string(r.version);
  key += '\1';
  key += text;
  return key;
}

}  // namespace

int SchemaState::id_of(const std::string& type, const std::vector<SchemaReference>& references,
                       const std::string& text) const {
  auto it = id_by_schema_.find(schema_key(type, references, text));
  return it == id_by_schema_.end() ? 0 : it->second;
}

std::string SchemaState::apply(const RecordKey& key, const std::optional<RecordValue>& value) {
  switch (key.type) {
    case KeyType::kSchema:
      return apply_schema(key, value);
    case KeyType::kConfig:
      if (value)
        configs_[key.subject] = std::get<ConfigValue>(*value);
      else
        configs_.erase(key.subject);
      return "";
    case KeyType::kMode:
      if (value)
        modes_[key.subject] = std::get<ModeValue>(*value);
      else
        modes_.erase(key.subject);
      return "";
    case KeyType::kDeleteSubject:
      if (value) {
        const auto& d = std::get<DeleteSubjectValue>(*value);
        if (auto it = subjects_.find(d.subject); it != subjects_.end())
          for (auto& [version, schema] : it->second)
            if (version <= d.version) schema.deleted = true;
      }
      return "";
    case KeyType::kClearSubject:
      if (value) clear_deleted(std::get<ClearSubjectValue>(*value).subject);
      return "";
    case KeyType::kNoop:
      return "";
  }
  return "";
}

std::string SchemaState::apply_schema(const RecordKey& key,
                                      const std::optional<RecordValue>& value) {
  if (!value) {
    remove_version(*key.subject, key.version);
    return "";
  }
  const auto& v = std::get<SchemaValue>(*value);
  if (const SchemaValue* holder = by_id(v.id);
      holder && (holder->schema != v.schema || holder->schema_type != v.schema_type) &&
      !(holder->subject == v.subject && holder->version == v.version))
    return "Found a schema with duplicate ID " + std::to_string(v.id);
  remove_version(v.subject, v.version);
  subjects_[v.subject][v.version] = v;
  ids_[v.id].insert({v.subject, v.version});
  id_by_schema_[schema_key(v.schema_type, v.references, v.schema)] = v.id;
  max_id_ = std::max(max_id_, v.id);
  return "";
}

void SchemaState::remove_version(const std::string& subject, int version) {
  auto it = subjects_.find(subject);
  if (it == subjects_.end()) return;
  auto v = it->second.find(version);
  if (v == it->second.end()) return;
  if (auto id = ids_.find(v->second.id); id != ids_.end()) {
    id->second.erase({subject, version});
    if (id->second.empty()) {
      ids_.erase(id);
      const SchemaValue& gone = v->second;
      auto indexed = id_by_schema_.find(schema_key(gone.schema_type, gone.references, gone.schema));
      if (indexed != id_by_schema_.end() && indexed->second == gone.id)
        id_by_schema_.erase(indexed);
    }
  }
  it->second.erase(v);
  if (it->second.empty()) subjects_.erase(it);
}

void SchemaState::clear_deleted(const std::optional<std::string>& subject) {
  std::vector<std::pair<std::string, int>> gone;
  for (const auto& [name, versions] : subjects_)
    if (!subject || *subject == name)
      for (const auto& [version, schema] : versions)
        if (schema.deleted) gone.emplace_back(name, version);
  for (const auto& [name, version] : gone) remove_version(name, version);
}

std::vector<std::string> SchemaState::subjects(bool deleted, bool deleted_only) const {
  std::vector<std::string> out;
  for (const auto& [name, versions] : subjects_) {
    bool live = std::any_of(versions.begin(), versions.end(),
                            [](const auto& v) { return !v.second.deleted; });
    if (deleted_only ? !live : (live || deleted)) out.push_back(name);
  }
  return out;
}

std::vector<const SchemaValue*> SchemaState::versions(const std::string& subject) const {
  std::vector<const SchemaValue*> out;
  if (auto it = subjects_.find(subject); it != subjects_.end())
    for (const auto& [version, schema] : it->second) out.push_back(&schema);
  return out;
}

const SchemaValue* SchemaState::version(const std::string& subject, int version) const {
  auto it = subjects_.find(subject);
  if (it == subjects_.end()) return nullptr;
  auto v = it->second.find(version);
  return v == it->second.end() ? nullptr : &v->second;
}

const SchemaValue* SchemaState::latest(const std::string& subject) const {
  auto it = subjects_.find(subject);
  if (it == subjects_.end()) return nullptr;
  for (auto v = it->second.rbegin(); v != it->second.rend(); ++v)
    if (!v->second.deleted) return &v->second;
  return nullptr;
}

const SchemaValue* SchemaState::by_id(int id) const {
  auto it = ids_.find(id);
  if (it == ids_.end() || it->second.empty()) return nullptr;
  const auto& [subject, v] = *it->second.begin();
  return version(subject, v);
}

std::vector<std::pair<std::string, int>> SchemaState::holders(int id) const {
  auto it = ids_.find(id);
  if (it == ids_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

const ConfigValue* SchemaState::config(const std::optional<std::string>& subject) const {
  auto it = configs_.find(subject);
  return it == configs_.end() ? nullptr : &it->second;
}

const ModeValue* SchemaState::mode(const std::optional<std::string>& subject) const {
  auto it = modes_.find(subject);
  return it == modes_.end() ? nullptr : &it->second;
}

}  // namespace oxbow::registry::store
