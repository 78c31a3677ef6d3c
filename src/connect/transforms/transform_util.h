#pragma once
// What the transforms share: reading their configs as Kafka's ConfigDef does, Kafka's
// Requirements checks with their messages, and a record rebuilt with a new key or value.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oxbow/connect/record.h"
#include "oxbow/connect/schema.h"
#include "oxbow/connect/struct.h"
#include "oxbow/connect/transformation.h"

namespace oxbow::connect::transforms {

// Whether a $Key/$Value transform works on the record's key or its value.
enum class Operand { Key, Value };

// A required STRING config: ConfigException "Missing required configuration \"NAME\" which has
// no default value." when absent.
std::string requiredString(const TransformConfig& config, const std::string& name);
std::optional<std::string> optionalString(const TransformConfig& config, const std::string& name);
// A BOOLEAN config ("true"/"false", any case, surrounding blanks ignored).
bool booleanConfig(const TransformConfig& config, const std::string& name, bool defaultValue);
// A LIST config: comma-separated, each item trimmed; an empty string is the empty list.
std::vector<std::string> listConfig(const TransformConfig& config, const std::string& name,
                                    std::vector<std::string> defaultValue = {});

using ConfigType = ConfigDef::Type;
using Importance = ConfigDef::Importance;

// Declares replace.null.with.default (BOOLEAN, true), which most transforms take.
ConfigDef& defineReplaceNullWithDefault(ConfigDef& definition);

// Requirements.requireMap / requireStruct / requireSchema with Kafka's messages.
const ValueMap& requireMap(const Value& value, std::string_view purpose);
const Struct& requireStruct(const Value& value, std::string_view purpose);
void requireSchema(const SchemaPtr& schema, std::string_view purpose);

// The builder given the source's name, version, doc and parameters (SchemaUtil.copySchemaBasics).
SchemaBuilder copySchemaBasics(const Schema& source, SchemaBuilder builder);
// A STRUCT builder with the source's name, version, doc and parameters.
inline SchemaBuilder copyStructBasics(const Schema& source) {
  return copySchemaBasics(source, SchemaBuilder::struct_());
}

// Sets a schemaless map's entry of that string key, replacing an existing one.
void mapPut(ValueMap& map, std::string_view key, Value value);

const SchemaPtr& operatingSchema(const ConnectRecord& record, Operand operand);
const Value& operatingValue(const ConnectRecord& record, Operand operand);
// The record with its key (or value) and that schema replaced, everything else kept.
ConnectRecord withOperand(const ConnectRecord& record, Operand operand, SchemaPtr schema,
                          Value value);
// The record with other topic, key, value or headers.
ConnectRecord rebuild(const ConnectRecord& record, std::string topic, SchemaPtr keySchema,
                      Value key, SchemaPtr valueSchema, Value value, Headers headers);

// The base of a transform with $Key and $Value variants: which part of the record it reads and
// replaces.
class OperandTransformation : public Transformation {
 public:
  explicit OperandTransformation(Operand operand) : operand_(operand) {}

 protected:
  const SchemaPtr& schemaOf(const ConnectRecord& record) const {
    return operatingSchema(record, operand_);
  }
  const Value& valueOf(const ConnectRecord& record) const {
    return operatingValue(record, operand_);
  }
  ConnectRecord replaced(const ConnectRecord& record, SchemaPtr schema, Value value) const {
    return withOperand(record, operand_, std::move(schema), std::move(value));
  }

 private:
  Operand operand_;
};

// A schema per input schema, as Kafka's LRU caches of 16: an input schema equal to one seen
// before (the same object, or an equal one as a converter makes per record) yields the same output
// schema object. The most recently used entry is first.
class SchemaCache {
 public:
  template <class Make>
  SchemaPtr get(const SchemaPtr& input, Make make) {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].first == input || *entries_[i].first == *input) {
        std::rotate(entries_.begin(), entries_.begin() + i, entries_.begin() + i + 1);
        return entries_.front().second;
      }
    }
    SchemaPtr made = make();
    if (entries_.size() >= kCapacity) entries_.pop_back();
    entries_.insert(entries_.begin(), {input, made});
    return made;
  }
  void clear() { entries_.clear(); }

 private:
  static constexpr size_t kCapacity = 16;
  std::vector<std::pair<SchemaPtr, SchemaPtr>> entries_;
};

// Registers T's NAME$Key and NAME$Value variants in a table of factories.
template <class T, class Table>
void registerKeyAndValue(Table& table, const std::string& name) {
  table.emplace(name + "$Key", [] { return std::make_unique<T>(Operand::Key); });
  table.emplace(name + "$Value", [] { return std::make_unique<T>(Operand::Value); });
}

}  // namespace oxbow::connect::transforms
