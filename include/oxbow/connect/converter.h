#pragma once
// Connect's Converter (org.apache.kafka.connect.storage.Converter): the bytes of a record's key
// or value to Connect's data and back, configured by its properties; and the registry that makes
// converters by class name, as a worker does for `key.converter` and `value.converter`.
//
// A converter instance is used by one thread at a time (the runtime gives each task its own).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/connect/schema.h"
#include "oxbow/connect/value.h"

namespace oxbow::connect {

// A plugin's configuration: property names to their text, as a worker passes them.
using ConfigMap = std::map<std::string, std::string, std::less<>>;

// ConverterType: what a converter is configured for (`converter.type`).
enum class ConverterType { KEY, VALUE, HEADER };

class Converter {
 public:
  virtual ~Converter() = default;

  // configure(configs, isKey): ConfigException-like failures are thrown as ConnectException.
  virtual void configure(const ConfigMap& configs, bool isKey) = 0;

  // Connect data to bytes: written into `out` (replacing what it held) and true, or false when
  // the result is null (a tombstone). DataException when the value does not fit.
  bool fromConnectData(std::string_view topic, const SchemaPtr& schema, const Value& value,
                       std::string& out) {
    out.clear();
    return write(topic, schema, value, out);
  }
  std::optional<std::string> fromConnectData(std::string_view topic, const SchemaPtr& schema,
                                             const Value& value) {
    std::string out;
    if (!write(topic, schema, value, out)) return std::nullopt;
    return out;
  }
  // Bytes (nullopt for a null record) to Connect data; DataException on bytes it cannot read.
  SchemaAndValue toConnectData(std::string_view topic, std::optional<std::string_view> value) {
    return read(topic, value);
  }

  // As HeaderConverter, which Connect's converters also are: a header's value as data.
  bool fromConnectHeader(std::string_view topic, std::string_view /*headerKey*/,
                         const SchemaPtr& schema, const Value& value, std::string& out) {
    return fromConnectData(topic, schema, value, out);
  }
  SchemaAndValue toConnectHeader(std::string_view topic, std::string_view /*headerKey*/,
                                 std::optional<std::string_view> value) {
    return read(topic, value);
  }

 protected:
  // `out` is empty on entry; return false for a null result.
  virtual bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
                     std::string& out) = 0;
  virtual SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) = 0;
};

using ConverterFactory = std::function<std::unique_ptr<Converter>()>;

// The converters by class name. The built-in ones are registered from the start, under their
// full class names, their simple names and their aliases without the "Converter" suffix
// ("org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "Json"), as Connect's plugin
// aliases. Making converters is safe from any thread; add converters before that starts.
class ConverterRegistry {
 public:
  // The process's registry.
  static ConverterRegistry& instance();

  // Registers (or replaces) a converter under its class name and that name's aliases.
  void add(const std::string& className, ConverterFactory factory);
  // Registers a class that is only a header converter (Kafka's SimpleHeaderConverter): create()
  // makes it, classNames() does not list it and configured() refuses it for a key or value.
  void addHeaderConverter(const std::string& className, ConverterFactory factory);
  // A new, unconfigured converter; ConnectException "Class NAME could not be found." otherwise.
  std::unique_ptr<Converter> create(std::string_view className) const;
  bool contains(std::string_view className) const;
  // The full class names, sorted.
  std::vector<std::string> classNames() const;
  // The classes a worker takes as `header.converter`: Kafka's converters that are also header
  // converters (String, ByteArray, Json and the number converters) and the header-only ones,
  // sorted. Confluent's registry converters are not header converters.
  std::vector<std::string> headerConverterClassNames() const;
  // The full class name a name or alias stands for ("Json" for JsonConverter's); the name itself
  // when it names no converter.
  std::string fullClassName(std::string_view name) const;

  // The converter a worker or connector configures: the class named by `classProperty`
  // ("key.converter") in `properties`, configured with the properties under that prefix
  // ("key.converter.schemas.enable" as "schemas.enable"). ConnectException when the property is
  // missing or names no converter.
  std::unique_ptr<Converter> configured(const ConfigMap& properties, std::string_view classProperty,
                                        bool isKey) const;

 private:
  ConverterRegistry();
  void addAliases(const std::string& className, const ConverterFactory& factory);
  std::map<std::string, ConverterFactory, std::less<>> byName_;
  std::map<std::string, std::string, std::less<>> fullNames_;  // name or alias: class name
  std::vector<std::string> classNames_;
  std::vector<std::string> headerClassNames_;
  std::vector<std::string> headerOnly_;
};

}  // namespace oxbow::connect
