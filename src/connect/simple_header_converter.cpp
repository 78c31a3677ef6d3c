// SimpleHeaderConverter over Values' text form (values.h).
#include "oxbow/connect/header_converters.h"

#include "connect/values.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect {

bool SimpleHeaderConverter::write(std::string_view, const SchemaPtr& schema, const Value& value,
                                  std::string& out) {
  if (value.isNull()) return false;
  out = values::convertToString(schema, value);
  return true;
}

SchemaAndValue SimpleHeaderConverter::read(std::string_view,
                                           std::optional<std::string_view> value) {
  if (!value) return {};
  try {
    return values::parseString(*value);
  } catch (const std::exception&) {
    // As Kafka's: a value that does not parse is kept as it came.
    return {Schema::BYTES_SCHEMA, Bytes{std::string(*value)}};
  }
}

}  // namespace oxbow::connect
