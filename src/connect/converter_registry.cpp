// The converters by class name, and a worker's way of making one from its properties.
#include <algorithm>

#include "oxbow/connect/converter.h"
#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"
#include "oxbow/connect/registry_converters.h"

namespace oxbow::connect {
namespace {

template <class C>
ConverterFactory factoryOf() {
  return [] { return std::make_unique<C>(); };
}

}  // namespace

ConverterRegistry& ConverterRegistry::instance() {
  static ConverterRegistry registry;
  return registry;
}

ConverterRegistry::ConverterRegistry() {
  add(std::string(StringConverter::CLASS_NAME), factoryOf<StringConverter>());
  add(std::string(ByteArrayConverter::CLASS_NAME), factoryOf<ByteArrayConverter>());
  add(std::string(JsonConverter::CLASS_NAME), factoryOf<JsonConverter>());
  add(std::string(ShortConverter::CLASS_NAME), factoryOf<ShortConverter>());
  add(std::string(IntegerConverter::CLASS_NAME), factoryOf<IntegerConverter>());
  add(std::string(LongConverter::CLASS_NAME), factoryOf<LongConverter>());
  add(std::string(FloatConverter::CLASS_NAME), factoryOf<FloatConverter>());
  add(std::string(DoubleConverter::CLASS_NAME), factoryOf<DoubleConverter>());
  add(std::string(BooleanConverter::CLASS_NAME), factoryOf<BooleanConverter>());
  add(std::string(AvroConverter::CLASS_NAME), factoryOf<AvroConverter>());
  add(std::string(ProtobufConverter::CLASS_NAME), factoryOf<ProtobufConverter>());
  add(std::string(JsonSchemaConverter::CLASS_NAME), factoryOf<JsonSchemaConverter>());
}

void ConverterRegistry::add(const std::string& className, ConverterFactory factory) {
  if (std::find(classNames_.begin(), classNames_.end(), className) == classNames_.end()) {
    classNames_.push_back(className);
    std::sort(classNames_.begin(), classNames_.end());
  }
  std::string simple = className.substr(className.rfind('.') + 1);
  byName_[simple] = factory;
  constexpr std::string_view kSuffix = "Converter";
  if (simple.size() > kSuffix.size() && simple.ends_with(kSuffix))
    byName_[simple.substr(0, simple.size() - kSuffix.size())] = factory;
  byName_[className] = std::move(factory);
}

bool ConverterRegistry::contains(std::string_view className) const {
  return byName_.find(className) != byName_.end();
}

std::unique_ptr<Converter> ConverterRegistry::create(std::string_view className) const {
  auto it = byName_.find(className);
  if (it == byName_.end())
    throw ConnectException("Class " + std::string(className) + " could not be found.");
  return it->second();
}

std::vector<std::string> ConverterRegistry::classNames() const {
  return classNames_;
}

std::unique_ptr<Converter> ConverterRegistry::configured(const ConfigMap& properties,
                                                         std::string_view classProperty,
                                                         bool isKey) const {
  auto it = properties.find(classProperty);
  if (it == properties.end())
    throw ConnectException("Missing required configuration \"" + std::string(classProperty) +
                           "\" which has no default value.");
  std::unique_ptr<Converter> converter;
  try {
    converter = create(it->second);
  } catch (const ConnectException& e) {
    throw ConnectException("Invalid value " + it->second + " for configuration " +
                           std::string(classProperty) + ": " + e.what());
  }
  std::string prefix = std::string(classProperty) + ".";
  ConfigMap configs;
  for (auto p = properties.lower_bound(prefix);
       p != properties.end() && p->first.starts_with(prefix); ++p)
    configs.emplace(p->first.substr(prefix.size()), p->second);
  converter->configure(configs, isKey);
  return converter;
}

}  // namespace oxbow::connect
