#pragma once
// What the `_schemas` records add up to, as every registry instance keeps it in memory by reading
// the topic from its start (records.h has their formats):
// - a SCHEMA record puts a subject's version (its id, type, references and text; soft-deleted or
//   not), its tombstone removes it;
// - DELETE_SUBJECT soft-deletes a subject's versions up to the one it names, without rewriting
//   their records; CLEAR_SUBJECT forgets the soft-deleted versions of a subject (of all, for the
//   global key);
// - CONFIG and MODE records set a subject's or the global setting, their tombstones remove it.
// Ids are global; the largest ever read (deleted versions included) is kept, so that an id is never
// issued twice. A SCHEMA record giving an id another schema text already has is refused, as
// Confluent's reader refuses it.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "registry/store/records.h"

namespace oxbow::registry::store {

class SchemaState {
 public:
  // Applies one record; `value` nullopt is a tombstone. Returns why a record was refused, or "".
  std::string apply(const RecordKey& key, const std::optional<RecordValue>& value);

  // Subjects in ascending order: with a live version; with `deleted`, also those with only
  // soft-deleted ones; with `deleted_only`, only those.
  std::vector<std::string> subjects(bool deleted, bool deleted_only = false) const;
  // A subject's versions, ascending (soft-deleted ones marked); empty for an unknown subject.
  std::vector<const SchemaValue*> versions(const std::string& subject) const;
  const SchemaValue* version(const std::string& subject, int version) const;
  // The live version with the highest number, nullptr when none.
  const SchemaValue* latest(const std::string& subject) const;
  // A version holding this id (the schema is the same for all of them), nullptr when none.
  const SchemaValue* by_id(int id) const;
  // Every (subject, version) holding this id, ascending.
  std::vector<std::pair<std::string, int>> holders(int id) const;
  int max_id() const { return max_id_; }
  // The id a schema (its type, references and text) has anywhere, soft-deleted versions
  // included; 0 when none.
  int id_of(const std::string& type, const std::vector<SchemaReference>& references,
            const std::string& text) const;

  // nullopt subject: the global setting.
  const ConfigValue* config(const std::optional<std::string>& subject) const;
  const ModeValue* mode(const std::optional<std::string>& subject) const;

 private:
  std::string apply_schema(const RecordKey& key, const std::optional<RecordValue>& value);
  void remove_version(const std::string& subject, int version);
  void clear_deleted(const std::optional<std::string>& subject);

  std::map<std::string, std::map<int, SchemaValue>> subjects_;
  std::map<int, std::set<std::pair<std::string, int>>> ids_;
  // The index id_of answers from, kept as long as some version holds the id.
  std::unordered_map<std::string, int> id_by_schema_;
  std::map<std::optional<std::string>, ConfigValue> configs_;
  std::map<std::optional<std::string>, ModeValue> modes_;
  int max_id_ = 0;
};

}  // namespace oxbow::registry::store
