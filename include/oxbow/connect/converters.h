#pragma once
// Connect's simple converters, with their class names and configs:
// org.apache.kafka.connect.storage.StringConverter (`converter.encoding`),
// org.apache.kafka.connect.converters.ByteArrayConverter, and the number converters
// (Short/Integer/Long/Float/Double/BooleanConverter) writing Kafka's big-endian serializations.
#include <string>
#include <string_view>

#include "oxbow/connect/converter.h"

namespace oxbow::connect {

class StringConverter : public Converter {
 public:
  static constexpr std::string_view CLASS_NAME = "org.apache.kafka.connect.storage.StringConverter";
  static constexpr std::string_view ENCODING_CONFIG = "converter.encoding";
  // Only UTF-8 (and its aliases) and ISO-8859-1 are supported: others are refused at configure.
  void configure(const ConfigMap& configs, bool isKey) override;

 protected:
  bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
             std::string& out) override;
  SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) override;

 private:
  bool latin1_ = false;
};

class ByteArrayConverter : public Converter {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.converters.ByteArrayConverter";
  void configure(const ConfigMap&, bool) override {}

 protected:
  bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
             std::string& out) override;
  SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) override;
};

// The fixed-width converters: one schema type each, Kafka's serializer's bytes.
class NumberConverter : public Converter {
 public:
  void configure(const ConfigMap&, bool) override {}

 protected:
  NumberConverter(Type type, std::string_view typeName) : type_(type), typeName_(typeName) {}
  bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
             std::string& out) override;
  SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) override;

 private:
  Type type_;
  std::string_view typeName_;
};

class ShortConverter : public NumberConverter {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.converters.ShortConverter";
  ShortConverter() : NumberConverter(Type::INT16, "short") {}
};
class IntegerConverter : public NumberConverter {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.converters.IntegerConverter";
  IntegerConverter() : NumberConverter(Type::INT32, "integer") {}
};
class LongConverter : public NumberConverter {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.converters.LongConverter";
  LongConverter() : NumberConverter(Type::INT64, "long") {}
};
class FloatConverter : public NumberConverter {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.converters.FloatConverter";
  FloatConverter() : NumberConverter(Type::FLOAT32, "float") {}
};
class DoubleConverter : public NumberConverter {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.converters.DoubleConverter";
  DoubleConverter() : NumberConverter(Type::FLOAT64, "double") {}
};
class BooleanConverter : public NumberConverter {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.converters.BooleanConverter";
  BooleanConverter() : NumberConverter(Type::BOOLEAN, "boolean") {}
};

}  // namespace oxbow::connect
