// HeaderFrom: fields of a key or a value moved or copied into the record's headers, with Kafka's
// configs and messages.
#include <algorithm>

#include "connect/transforms/registry.h"
#include "connect/transforms/transform_util.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::transforms {

namespace {

class HeaderFrom : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    ConfigDef definition;
    definition
        .define("fields", ConfigType::LIST, DefaultValue(), NonEmptyListValidator::create(),
                Importance::HIGH, "Fields whose values become headers.")
        .define("headers", ConfigType::LIST, DefaultValue(), NonEmptyListValidator::create(),
                Importance::HIGH, "The headers' names, one per field, in the fields' order.")
        .define("operation", ConfigType::STRING, DefaultValue(), ValidString::in({"move", "copy"}),
                Importance::HIGH,
                "move takes the fields out of the key or value, copy leaves them there.");
    return defineReplaceNullWithDefault(definition);
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    fields_ = config.getList("fields");
    headers_ = config.getList("headers");
    const std::string& operation = config.getString("operation");
    if (headers_.size() != fields_.size()) {
      throw ConfigException(
          "'fields' config must have the same number of elements as 'headers' "
          "config.");
    }
    move_ = operation == "move";
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
    cache_.clear();
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const std::string purpose = move_ ? "header move" : "header copy";
    Headers headers = record.headers();
    const SchemaPtr& schema = schemaOf(record);
    const Value& value = valueOf(record);
    if (!schema) {
      ValueMap updated = requireMap(value, purpose);
      for (size_t i = 0; i < fields_.size(); ++i) {
        const Value* fieldValue = value.mapGet(Value(fields_[i]));
        headers.add(headers_[i], nullptr, fieldValue ? *fieldValue : Value());
        if (move_) {
          std::erase_if(updated, [&](const auto& entry) {
            return entry.first.kind() == Value::Kind::String &&
                   entry.first.asString() == fields_[i];
          });
        }
      }
      return rebuildWith(record, nullptr, std::move(updated), std::move(headers));
    }
    const Struct& input = requireStruct(value, purpose);
    for (size_t i = 0; i < fields_.size(); ++i) {
      const Field* field = schema->field(fields_[i]);
      if (!field) throw DataException("Field does not exist: " + fields_[i]);
      headers.add(headers_[i], field->schema(), fieldValue(input, fields_[i]));
    }
    if (!move_) return rebuildWith(record, schema, value, std::move(headers));
    SchemaPtr moved = cache_.get(schema, [&] {
      SchemaBuilder builder = copyStructBasics(*schema);
      for (const Field& field : schema->fields()) {
        if (std::find(fields_.begin(), fields_.end(), field.name()) == fields_.end()) {
          builder.field(field.name(), field.schema());
        }
      }
      return builder.build();
    });
    Struct updated(moved);
    for (const Field& field : moved->fields()) updated.put(field, fieldValue(input, field.name()));
    return rebuildWith(record, moved, std::move(updated), std::move(headers));
  }

  void close() override { cache_.clear(); }

 private:
  const Value& fieldValue(const Struct& value, const std::string& name) const {
    return replaceNullWithDefault_ ? value.get(name) : value.getWithoutDefault(name);
  }

  ConnectRecord rebuildWith(const ConnectRecord& record, SchemaPtr schema, Value value,
                            Headers headers) const {
    ConnectRecord updated = replaced(record, std::move(schema), std::move(value));
    updated.headers() = std::move(headers);
    return updated;
  }

  std::vector<std::string> fields_, headers_;
  bool move_ = false;
  bool replaceNullWithDefault_ = true;
  SchemaCache cache_;
};

}  // namespace

void registerHeaderFrom(TransformationTable& table) {
  registerKeyAndValue<HeaderFrom>(table, "HeaderFrom");
}

}  // namespace oxbow::connect::transforms
