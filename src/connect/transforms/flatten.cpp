// Flatten: nested structs (or maps, schemaless) become one level of fields whose names join the
// path with a delimiter, with Kafka's configs and messages.
#include "connect/transforms/registry.h"
#include "connect/transforms/transform_util.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::transforms {

namespace {

class Flatten : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    return ConfigDef().define("delimiter", ConfigType::STRING, ".", Importance::MEDIUM,
                              "Text put between the names of nested fields in the output's field "
                              "names.");
  }

  void configure(const TransformConfig& config) override {
    // Read untrimmed, unlike Kafka (a STRING config is trimmed): a delimiter may be a blank.
    auto found = config.find("delimiter");
    delimiter_ = found == config.end() ? "." : found->second;
    cache_.clear();
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const Value& value = valueOf(record);
    if (value.isNull()) return record;
    const SchemaPtr& schema = schemaOf(record);
    if (!schema) {
      ValueMap flattened;
      flattenMap(requireMap(value, kPurpose), "", flattened);
      return replaced(record, nullptr, std::move(flattened));
    }
    const Struct& input = requireStruct(value, kPurpose);
    SchemaPtr updated = cache_.get(schema, [&] {
      SchemaBuilder builder = copyStructBasics(*schema);
      const Value& defaultValue = schema->defaultValue();
      flattenSchema(
          *schema, "", builder, schema->isOptional(),
          defaultValue.kind() == Value::Kind::Struct ? &defaultValue.asStruct() : nullptr);
      return builder.build();
    });
    Struct flattened(updated);
    flattenStruct(input, "", flattened);
    return replaced(record, updated, std::move(flattened));
  }

  void close() override { cache_.clear(); }

 private:
  std::string fieldName(const std::string& prefix, const std::string& name) const {
    return prefix.empty() ? name : prefix + delimiter_ + name;
  }

  static bool keptWhole(Type type) { return isPrimitive(type) || type == Type::ARRAY; }

  [[noreturn]] static void unsupportedWithSchema(Type type, const std::string& name) {
    throw DataException("Flatten transformation does not support " + std::string(typeName(type)) +
                        " for record with schemas (for field " + name + ").");
  }

  void flattenMap(const ValueMap& map, const std::string& prefix, ValueMap& out) const {
    for (const auto& [key, entry] : map) {
      std::string name =
          fieldName(prefix, key.kind() == Value::Kind::String ? key.asString() : key.toString());
      switch (entry.kind()) {
        case Value::Kind::Map:
          flattenMap(entry.asMap(), name, out);
          break;
        case Value::Kind::Decimal:
        case Value::Kind::DateTime:
          throw DataException("Flatten transformation was passed a value of type " +
                              std::string(entry.javaClass()) +
                              " which is not supported by Connect's data API");
        case Value::Kind::Struct:
          throw DataException(
              "Flatten transformation does not support class org.apache.kafka.connect.data.Struct "
              "for record without schemas (for field " +
              name + ").");
        default:
          mapPut(out, name, entry);
      }
    }
  }

  void flattenSchema(const Schema& schema, const std::string& prefix, SchemaBuilder& out,
                     bool optional, const Struct* parentDefault) const {
    for (const Field& field : schema.fields()) {
      std::string name = fieldName(prefix, field.name());
      const Schema& fieldSchema = *field.schema();
      bool fieldOptional = optional || fieldSchema.isOptional();
      Value fieldDefault = !fieldSchema.defaultValue().isNull() ? fieldSchema.defaultValue()
                           : parentDefault                      ? parentDefault->get(field)
                                                                : Value();
      if (keptWhole(fieldSchema.type())) {
        out.field(name, copyFieldSchema(fieldSchema, fieldOptional, fieldDefault));
      } else if (fieldSchema.type() == Type::STRUCT) {
        flattenSchema(fieldSchema, name, out, fieldOptional,
                      fieldDefault.isNull() ? nullptr : &fieldDefault.asStruct());
      } else {
        unsupportedWithSchema(fieldSchema.type(), name);
      }
    }
  }

  // The field's schema made optional and given its parent's default when it has none.
  static SchemaPtr copyFieldSchema(const Schema& schema, bool optional, const Value& defaultValue) {
    SchemaBuilder builder = copySchemaBasics(
        schema, schema.type() == Type::ARRAY ? SchemaBuilder::array(schema.valueSchema())
                                             : SchemaBuilder(schema.type()));
    if (optional) builder.optional();
    if (!defaultValue.isNull()) builder.defaultValue(defaultValue);
    return builder.build();
  }

  void flattenStruct(const Struct& input, const std::string& prefix, Struct& out) const {
    for (const Field& field : input.schema()->fields()) {
      std::string name = fieldName(prefix, field.name());
      Type type = field.schema()->type();
      if (keptWhole(type)) {
        out.put(name, input.get(field));
      } else if (type == Type::STRUCT) {
        if (auto nested = input.getStruct(field.name())) flattenStruct(*nested, name, out);
      } else {
        unsupportedWithSchema(type, name);
      }
    }
  }

  static constexpr std::string_view kPurpose = "flattening";
  std::string delimiter_ = ".";
  SchemaCache cache_;
};

}  // namespace

void registerFlatten(TransformationTable& table) {
  registerKeyAndValue<Flatten>(table, "Flatten");
}

}  // namespace oxbow::connect::transforms
