#pragma once
// Connect's logical types: a primitive schema with a well-known name (and for Decimal a `scale`
// parameter) whose values are richer objects. Decimal is BYTES holding the unscaled integer,
// its values DecimalValue; Date is INT32 days since the epoch, Time INT32 milliseconds since
// midnight and Timestamp INT64 milliseconds since the epoch, their values DateTime.
#include <cstdint>
#include <string>
#include <string_view>

#include "oxbow/connect/schema.h"
#include "oxbow/connect/value.h"

namespace oxbow::connect {

class Decimal {
 public:
  static constexpr std::string_view LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal";
  static constexpr std::string_view SCALE_FIELD = "scale";
  static SchemaBuilder builder(int32_t scale);
  static SchemaPtr schema(int32_t scale);
  // The unscaled bytes; DataException when the value's scale is not the schema's.
  static Bytes fromLogical(const SchemaPtr& schema, const DecimalValue& value);
  static DecimalValue toLogical(const SchemaPtr& schema, std::string_view bytes);
  // The schema's scale; DataException when the parameter is missing or no integer.
  static int32_t scale(const Schema& schema);
};

class Date {
 public:
  static constexpr std::string_view LOGICAL_NAME = "org.apache.kafka.connect.data.Date";
  static SchemaBuilder builder();
  static const SchemaPtr SCHEMA;
  // Days since the epoch; DataException for a time that is not midnight UTC.
  static int32_t fromLogical(const SchemaPtr& schema, DateTime value);
  static DateTime toLogical(const SchemaPtr& schema, int32_t days);
};

class Time {
 public:
  static constexpr std::string_view LOGICAL_NAME = "org.apache.kafka.connect.data.Time";
  static SchemaBuilder builder();
  static const SchemaPtr SCHEMA;
  // Milliseconds since midnight; DataException for a time outside the epoch's first day.
  static int32_t fromLogical(const SchemaPtr& schema, DateTime value);
  static DateTime toLogical(const SchemaPtr& schema, int32_t millis);
};

class Timestamp {
 public:
  static constexpr std::string_view LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp";
  static SchemaBuilder builder();
  static const SchemaPtr SCHEMA;
  static int64_t fromLogical(const SchemaPtr& schema, DateTime value);
  static DateTime toLogical(const SchemaPtr& schema, int64_t millis);
};

}  // namespace oxbow::connect
