#pragma once
// Kafka's default header converter, org.apache.kafka.connect.storage.SimpleHeaderConverter: a
// header's bytes are UTF-8 text whose schema is inferred as Connect's Values.parseString infers it
// (booleans, the smallest integer type, floats, dates and times, [lists] and {maps}, else a
// string); values are written in that same text form. Text that does not parse is kept as BYTES.
// It is only a header converter: the worker's `header.converter` (its default), never a key's or
// value's.
#include <string_view>

#include "oxbow/connect/converter.h"

namespace oxbow::connect {

class SimpleHeaderConverter : public Converter {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.storage.SimpleHeaderConverter";
  void configure(const ConfigMap&, bool) override {}

 protected:
  bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
             std::string& out) override;
  SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) override;
};

}  // namespace oxbow::connect
