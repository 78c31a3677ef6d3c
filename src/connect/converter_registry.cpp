// The converters by class name, and a worker's way of making one from its properties.
#include <algorithm>

#include "oxbow/connect/converter.h"
#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/header_converters.h"
#include "oxbow/connect/json_converter.h"
#include "oxbow/connect/registry_converters.h"

namespace oxbow::connect {
namespace {

template <class C>
ConverterFactory factoryOf() {
  return [] { return std::make_unique<C>(); };
}

void addSorted(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    names.push_back(name);
    std::sort(names.begin(), names.end());
  }
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
  // Kafka's own converters are HeaderConverters as well; Confluent's registry converters are not.
  headerClassNames_ = classNames_;
  addHeaderConverter(std::string(SimpleHeaderConverter::CLASS_NAME),
                     factoryOf<SimpleHeaderConverter>());
  add(std::string(AvroConverter::CLASS_NAME), factoryOf<AvroConverter>());
  add(std::string(ProtobufConverter::CLASS_NAME), factoryOf<ProtobufConverter>());
  add(std::string(JsonSchemaConverter::CLASS_NAME), factoryOf<JsonSchemaConverter>());
}

void ConverterRegistry::add(const std::string& className, ConverterFactory factory) {
  addSorted(classNames_, className);
  addAliases(className, factory);
}

void ConverterRegistry::addHeaderConverter(const std::string& className, ConverterFactory factory) {
  addSorted(headerClassNames_, className);
  addSorted(headerOnly_, className);
  addAliases(className, factory);
}

void ConverterRegistry::addAliases(const std::string& className, const ConverterFactory& factory) {
  std::string simple = className.substr(className.rfind('.') + 1);
  constexpr std::string_view kSuffix = "Converter";
  std::vector<std::string> names = {className, simple};
  if (simple.size() > kSuffix.size() && simple.ends_with(kSuffix))
    names.push_back(simple.substr(0, simple.size() - kSuffix.size()));
  for (const std::string& name : names) {
    byName_[name] = factory;
    fullNames_[name] = className;
  }
}

std::vector<std::string> ConverterRegistry::headerConverterClassNames() const {
  return headerClassNames_;
}

std::string ConverterRegistry::fullClassName(std::string_view name) const {
  auto it = fullNames_.find(name);
  return it == fullNames_.end() ? std::string(name) : it->second;
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
  const std::string className = fullClassName(it->second);
  if (classProperty != "header.converter" &&
      std::find(headerOnly_.begin(), headerOnly_.end(), className) != headerOnly_.end())
    throw ConnectException("Invalid value " + it->second + " for configuration " +
                           std::string(classProperty) + ": Class " + className +
                           " is only a header converter.");
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
