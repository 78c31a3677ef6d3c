// Avro writer schemas to Connect schemas, and the Avro values the registry's deserializer gives
// to Connect values, as Confluent's AvroData.toConnectSchema and toConnectData convert them.
#include <map>

#include "connect/schema_registry/avro_names.h"
#include "connect/schema_registry/format_data.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect::registry_detail {
namespace {

constexpr int kMaxDepth = 64;

// How one Avro schema's values are read.
struct Node {
  enum class Kind {
    Int8,
    Int16,
    Int32,
    Date,
    Time,
    Int64,
    Timestamp,
    Float,
    Double,
    Boolean,
    String,
    Bytes,
    Decimal,
    Array,
    Map,
    MapEntries,
    Record,
    Optional,
    Union
  };
  Kind kind = Kind::Int32;
  SchemaPtr schema;
  // Array: the items; Map: the values; MapEntries: key and value; Record: the fields; Optional:
  // the type; Union: the branches (names: the field names, and for a union the branch names).
  std::vector<std::shared_ptr<const Node>> children;
  std::vector<std::string> names;
};
using NodePtr = std::shared_ptr<const Node>;

Value read(const Node& node, const Json& json, bool unionsWrapped);

Value readStruct(const Node& node, const Json& json, bool wrapped) {
  auto out = std::make_shared<Struct>(node.schema);
  for (size_t i = 0; i < node.children.size(); ++i) {
    auto it = json.find(node.names[i]);
    if (it != json.end()) out->put(node.names[i], read(*node.children[i], *it, wrapped));
  }
  return Value(out);
}

Value readUnion(const Node& node, const Json& json, bool wrapped) {
  auto out = std::make_shared<Struct>(node.schema);
  if (json.is_null()) return Value();
  if (!wrapped) {  // a default: the first branch's value
    out->put(node.schema->fields()[0].name(), read(*node.children[0], json, false));
    return Value(out);
  }
  const auto& [branch, value] = *json.items().begin();
  for (size_t i = 0; i < node.children.size(); ++i) {
    const std::string& name = node.names[i];
    if (branch == name || branch.ends_with("." + name)) {
      out->put(node.schema->fields()[i].name(), read(*node.children[i], value, wrapped));
      return Value(out);
    }
  }
  throw DataException("No union branch " + branch);
}

Value read(const Node& node, const Json& json, bool wrapped) {
  using K = Node::Kind;
  if (json.is_null()) return Value();
  switch (node.kind) {
    case K::Int8:
      return static_cast<int8_t>(json.get<int32_t>());
    case K::Int16:
      return static_cast<int16_t>(json.get<int32_t>());
    case K::Int32:
      return json.get<int32_t>();
    case K::Date:
      return Date::toLogical(node.schema, json.get<int32_t>());
    case K::Time:
      return Time::toLogical(node.schema, json.get<int32_t>());
    case K::Int64:
      return json.get<int64_t>();
    case K::Timestamp:
      return Timestamp::toLogical(node.schema, json.get<int64_t>());
    case K::Float:
      return json.get<float>();
    case K::Double:
      return json.get<double>();
    case K::Boolean:
      return json.get<bool>();
    case K::String:
      return json.get<std::string>();
    case K::Bytes:
      return Bytes{utf8ToLatin1(json.get<std::string>())};
    case K::Decimal:
      return Decimal::toLogical(node.schema, utf8ToLatin1(json.get<std::string>()));
    case K::Array: {
      ValueList out;
      for (const Json& e : json) out.push_back(read(*node.children[0], e, wrapped));
      return out;
    }
    case K::Map: {
      ValueMap out;
      for (const auto& [k, v] : json.items())
        out.emplace_back(Value(k), read(*node.children[0], v, wrapped));
      return out;
    }
    case K::MapEntries: {
      ValueMap out;
      for (const Json& e : json)
        out.emplace_back(read(*node.children[0], e.at("key"), wrapped),
                         read(*node.children[1], e.at("value"), wrapped));
      return out;
    }
    case K::Record:
      return readStruct(node, json, wrapped);
    case K::Optional:
      if (wrapped && json.is_object() && json.size() == 1)
        return read(*node.children[0], json.begin().value(), wrapped);
      return read(*node.children[0], json, wrapped);
    case K::Union:
      return readUnion(node, json, wrapped);
  }
  return Value();
}

std::string stringProp(const Json& avro, const char* name) {
  if (!avro.is_object()) return {};
  auto it = avro.find(name);
  return it != avro.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The Avro schema's type name: "int", "record", ... (a union is "union").
std::string typeOf(const Json& avro) {
  if (avro.is_string()) return avro.get<std::string>();
  if (avro.is_array()) return "union";
  return stringProp(avro, "type");
}

class NodeMaker {
 public:
  struct Options {
    bool forceOptional = false;
    const Json* fieldDefault = nullptr;
    std::optional<int> version;
  };
  NodePtr make(const Json& avro, const std::string& space, const Options& options, int depth);

 private:
  const Json& resolve(const Json& avro, std::string& space);
  std::shared_ptr<Node> base(const Json& avro, const std::string& space, SchemaBuilder& builder,
                             int depth);
  std::shared_ptr<Node> record(const Json& avro, const std::string& space, SchemaBuilder& builder,
                               int depth);
  void metadata(const Json& avro, const std::string& space, const Options& options,
                SchemaBuilder& builder, Node& node);

  std::map<std::string, std::pair<const Json*, std::string>>
      named_;  // full name: definition, space
};

AvroName nameOf(const Json& avro, const std::string& space) {
  AvroName name = AvroName::split(stringProp(avro, "name"));
  if (name.space.empty()) {
    auto ns = avro.find("namespace");
    name.space = ns != avro.end() && ns->is_string() ? ns->get<std::string>() : space;
  }
  return name;
}

const Json& NodeMaker::resolve(const Json& avro, std::string& space) {
  if (!avro.is_string() || isAvroPrimitive(avro.get<std::string>())) return avro;
  std::string name = avro.get<std::string>();
  auto it = named_.find(name);
  if (it == named_.end() && name.find('.') == std::string::npos && !space.empty())
    it = named_.find(space + "." + name);
  if (it == named_.end()) throw DataException("Undefined Avro type " + name);
  space = it->second.second;
  return *it->second.first;
}

NodePtr NodeMaker::make(const Json& given, const std::string& givenSpace, const Options& options,
                        int depth) {
  if (depth > kMaxDepth) throw DataException("Avro schema nested too deeply (or recursive)");
  std::string space = givenSpace;
  const Json& avro = resolve(given, space);
  if (avro.is_array()) {
    if (avro.size() == 2 && (avro[0] == "null" || avro[1] == "null")) {
      const Json& other = avro[0] == "null" ? avro[1] : avro[0];
      NodePtr inner = make(other, space, {true, nullptr, std::nullopt}, depth + 1);
      auto node = std::make_shared<Node>();
      node->kind = Node::Kind::Optional;
      node->schema = inner->schema;
      node->children.push_back(inner);
      return node;
    }
  }
  std::string type = typeOf(avro);
  SchemaBuilder builder = SchemaBuilder::int32();
  std::shared_ptr<Node> node = base(avro, space, builder, depth);
  metadata(avro, type == "record" ? nameOf(avro, space).space : space, options, builder, *node);
  if (options.forceOptional) builder.optional();
  node->schema = builder.build();
  return node;
}

std::shared_ptr<Node> NodeMaker::base(const Json& avro, const std::string& space,
                                      SchemaBuilder& builder, int depth) {
  using K = Node::Kind;
  auto node = std::make_shared<Node>();
  const std::string type = typeOf(avro);
  const std::string connectType = stringProp(avro, "connect.type");
  const std::string logical = stringProp(avro, "logicalType");
  auto set = [&](K kind, SchemaBuilder b) {
    node->kind = kind;
    builder = std::move(b);
  };
  if (type == "boolean") {
    set(K::Boolean, SchemaBuilder::bool_());
  } else if (type == "bytes" || type == "fixed") {
    if (logical == "decimal") {
      auto scale = avro.find("scale");
      set(K::Decimal,
          Decimal::builder(scale != avro.end() && scale->is_number_integer() ? scale->get<int32_t>()
                                                                             : 0));
      auto precision = avro.find("precision");
      if (precision != avro.end()) {
        if (!precision->is_number_integer())
          throw DataException("precision property must be a JSON Integer.");
        if (precision->get<int>() != 64)
          builder.parameter(std::string(kDecimalPrecisionParameter),
                            std::to_string(precision->get<int>()));
      }
    } else {
      set(K::Bytes, SchemaBuilder::bytes());
    }
    if (type == "fixed") {
      const AvroName name = nameOf(avro, space);
      named_[name.full()] = {&avro, name.space};
      builder.parameter(std::string(kFixedSizeParameter),
                        std::to_string(avro.at("size").get<int>()));
    }
  } else if (type == "double") {
    set(K::Double, SchemaBuilder::float64());
  } else if (type == "float") {
    set(K::Float, SchemaBuilder::float32());
  } else if (type == "int") {
    if (logical == "date") {
      set(K::Date, Date::builder());
    } else if (logical == "time-millis") {
      set(K::Time, Time::builder());
    } else if (logical.empty() && connectType == "int8") {
      set(K::Int8, SchemaBuilder::int8());
    } else if (logical.empty() && connectType == "int16") {
      set(K::Int16, SchemaBuilder::int16());
    } else {
      set(K::Int32, SchemaBuilder::int32());
    }
  } else if (type == "long") {
    if (logical == "timestamp-millis")
      set(K::Timestamp, Timestamp::builder());
    else
      set(K::Int64, SchemaBuilder::int64());
  } else if (type == "string") {
    set(K::String, SchemaBuilder::string());
  } else if (type == "enum") {
    const AvroName name = nameOf(avro, space);
    named_[name.full()] = {&avro, name.space};
    set(K::String, SchemaBuilder::string());
    if (auto doc = avro.find("doc"); doc != avro.end())
      builder.parameter(std::string(kEnumDocPrefix) + name.name, doc->get<std::string>());
    if (auto d = avro.find("default"); d != avro.end())
      builder.parameter("io.confluent.connect.avro.enum.default." + name.name,
                        d->get<std::string>());
    builder.parameter(std::string(kAvroEnumParameter), name.full());
    for (const Json& symbol : avro.at("symbols"))
      builder.parameter(std::string(kAvroEnumParameter) + "." + symbol.get<std::string>(),
                        symbol.get<std::string>());
  } else if (type == "array") {
    std::string itemSpace = space;
    const Json& items = resolve(avro.at("items"), itemSpace);
    const bool mapEntry =
        typeOf(items) == "record" &&
        (nameOf(items, itemSpace).full() == std::string(kAvroNamespace) + ".MapEntry" ||
         stringProp(items, "connect.internal.type") == "MapEntry");
    if (mapEntry) {
      if (typeOf(items) == "record") named_[nameOf(items, itemSpace).full()] = {&items, itemSpace};
      NodePtr key, value;
      for (const Json& f : items.at("fields")) {
        if (f.at("name") == "key")
          key = make(f.at("type"), nameOf(items, itemSpace).space, {}, depth + 1);
        if (f.at("name") == "value")
          value = make(f.at("type"), nameOf(items, itemSpace).space, {}, depth + 1);
      }
      if (!key || !value || items.at("fields").size() != 2)
        throw DataException(
            "Found map encoded as array of key-value pairs, but array elements do not match the "
            "expected format.");
      set(K::MapEntries, SchemaBuilder::map(key->schema, value->schema));
      node->children = {key, value};
    } else {
      NodePtr element = make(avro.at("items"), space, {}, depth + 1);
      set(K::Array, SchemaBuilder::array(element->schema));
      node->children = {element};
    }
  } else if (type == "map") {
    NodePtr values = make(avro.at("values"), space, {}, depth + 1);
    set(K::Map, SchemaBuilder::map(Schema::STRING_SCHEMA, values->schema));
    node->children = {values};
  } else if (type == "record") {
    return record(avro, space, builder, depth);
  } else if (type == "union") {
    node->kind = K::Union;
    builder = SchemaBuilder::struct_();
    builder.name(std::string(kAvroUnionName));
    for (const Json& member : avro) {
      if (member == "null") {
        builder.optional();
        continue;
      }
      std::string memberSpace = space;
      const Json& resolved = resolve(member, memberSpace);
      const std::string memberType = typeOf(resolved);
      const bool named = memberType == "record" || memberType == "enum" || memberType == "fixed";
      const std::string fieldName = named ? nameOf(resolved, memberSpace).name : memberType;
      NodePtr child = make(member, space, {true, nullptr, std::nullopt}, depth + 1);
      builder.field(fieldName, child->schema);
      node->children.push_back(child);
      node->names.push_back(named ? nameOf(resolved, memberSpace).full() : memberType);
    }
  } else if (type == "null") {
    throw DataException("Standalone null schemas are not supported by this converter");
  } else {
    throw DataException("Couldn't translate unsupported schema type " + type + ".");
  }
  return node;
}

std::shared_ptr<Node> NodeMaker::record(const Json& avro, const std::string& space,
                                        SchemaBuilder& builder, int depth) {
  auto node = std::make_shared<Node>();
  node->kind = Node::Kind::Record;
  const AvroName name = nameOf(avro, space);
  named_[name.full()] = {&avro, name.space};
  builder = SchemaBuilder::struct_();
  if (auto doc = avro.find("doc"); doc != avro.end() && doc->is_string())
    builder.parameter(std::string(kRecordDocParameter), doc->get<std::string>());
  for (const Json& field : avro.at("fields")) {
    const std::string fieldName = field.at("name").get<std::string>();
    if (auto doc = field.find("doc"); doc != field.end() && doc->is_string())
      builder.parameter(std::string(kFieldDocPrefix) + fieldName, doc->get<std::string>());
    auto d = field.find("default");
    NodePtr child = make(field.at("type"), name.space,
                         {false, d != field.end() ? &*d : nullptr, std::nullopt}, depth + 1);
    builder.field(fieldName, child->schema);
    node->children.push_back(child);
    node->names.push_back(fieldName);
  }
  return node;
}

void NodeMaker::metadata(const Json& avro, const std::string& space, const Options& options,
                         SchemaBuilder& builder, Node& node) {
  (void)space;
  if (!avro.is_object()) {
    if (options.version) builder.version(*options.version);
    if (options.fieldDefault) {
      builder.parameter(std::string(kFieldDefaultFlag), "true");
      try {
        SchemaPtr partial = builder.build();
        node.schema = partial;
        builder.defaultValue(read(node, *options.fieldDefault, false));
      } catch (const DataException&) {
        // Confluent ignores a default that does not fit
      }
    }
    return;
  }
  if (auto doc = avro.find("connect.doc"); doc != avro.end() && doc->is_string())
    builder.doc(doc->get<std::string>());
  if (auto v = avro.find("connect.version"); v != avro.end()) {
    if (!v->is_number_integer()) throw DataException("Invalid Connect version found: " + v->dump());
    builder.version(v->get<int32_t>());
  } else if (options.version) {
    builder.version(*options.version);
  }
  if (auto params = avro.find("connect.parameters"); params != avro.end()) {
    if (!params->is_object())
      throw DataException("Expected JSON object for schema parameters but found: " +
                          params->dump());
    for (const auto& [k, v] : params->items()) {
      if (!v.is_string())
        throw DataException("Expected schema parameter values to be strings but found: " +
                            v.dump());
      builder.parameter(k, v.get<std::string>());
    }
  }
  for (const auto& [k, v] : avro.items())
    if (k.starts_with("avro"))
      builder.parameter(k, v.is_string() ? v.get<std::string>() : v.dump());
  const Json* fieldDefault = options.fieldDefault;
  auto connectDefault = avro.find("connect.default");
  if (!fieldDefault && connectDefault != avro.end())
    fieldDefault = &*connectDefault;
  else if (fieldDefault && connectDefault == avro.end())
    builder.parameter(std::string(kFieldDefaultFlag), "true");
  if (fieldDefault) {
    try {
      node.schema = builder.build();
      builder.defaultValue(read(node, *fieldDefault, false));
    } catch (const DataException&) {
      // Confluent ignores a default that does not fit
    } catch (const Json::exception&) {
    }
  }
  std::string name = stringProp(avro, "connect.name");
  const std::string type = typeOf(avro);
  if (name.empty() && (type == "record" || type == "enum" || (type == "fixed" && !builder.name())))
    name = nameOf(avro, space).full();
  if (!name.empty() && !name.starts_with(kDefaultSchemaFullName) && !builder.name())
    builder.name(name);
}

class AvroReader : public Reader {
 public:
  AvroReader(NodePtr node) : node_(std::move(node)) { schema = node_->schema; }
  Value read(const Json& value) const override {
    return registry_detail::read(*node_, value, true);
  }

 private:
  NodePtr node_;
};

class AvroData : public FormatData {
 public:
  std::unique_ptr<Writer> writer(const SchemaPtr& schema) const override {
    return avroWriter(schema);
  }
  std::unique_ptr<Reader> reader(const registry::SchemaInfo& writer, const std::vector<int>&,
                                 std::optional<int> version) const override {
    const Json avro = Json::parse(writer.schema);
    NodeMaker maker;
    auto node = maker.make(avro, "", {false, nullptr, version}, 0);
    // The node tree points into `avro` only while it is made; values are read from the nodes.
    return std::make_unique<AvroReader>(std::move(node));
  }
  std::string recordName(const registry::SchemaInfo& writer,
                         const std::vector<int>&) const override {
    const Json avro = Json::parse(writer.schema);
    return typeOf(avro) == "record" ? nameOf(avro, "").full() : std::string();
  }
};

}  // namespace

std::unique_ptr<FormatData> avroData() {
  return std::make_unique<AvroData>();
}

}  // namespace oxbow::connect::registry_detail
