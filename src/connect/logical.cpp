// The logical types' schemas and their conversions between values and their primitives.
#include "oxbow/connect/logical.h"

#include <charconv>

#include "oxbow/connect/errors.h"

namespace oxbow::connect {
namespace {

constexpr int64_t kMillisPerDay = 24 * 60 * 60 * 1000;

void requireName(const SchemaPtr& schema, std::string_view logicalName, std::string_view what) {
  if (!schema || !schema->name() || *schema->name() != logicalName)
    throw DataException("Requested conversion of " + std::string(what) +
                        " object but the schema does not match.");
}

}  // namespace

SchemaBuilder Decimal::builder(int32_t scale) {
  SchemaBuilder builder = SchemaBuilder::bytes();
  builder.name(std::string(LOGICAL_NAME))
      .parameter(std::string(SCALE_FIELD), std::to_string(scale))
      .version(1);
  return builder;
}

SchemaPtr Decimal::schema(int32_t scale) {
  return builder(scale).build();
}

int32_t Decimal::scale(const Schema& schema) {
  const std::string* text = schema.parameter(SCALE_FIELD);
  if (!text) throw DataException("Invalid Decimal schema: scale parameter not found.");
  int32_t scale = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), scale);
  if (error != std::errc() || end != text->data() + text->size())
    throw DataException("Invalid scale parameter found in Decimal schema: " + *text);
  return scale;
}

Bytes Decimal::fromLogical(const SchemaPtr& schema, const DecimalValue& value) {
  int32_t schemaScale = scale(*schema);
  if (value.scale() != schemaScale)
    throw DataException(
        "Decimal value has mismatching scale for given Decimal schema. Schema has scale " +
        std::to_string(schemaScale) + ", value has scale " + std::to_string(value.scale()) + ".");
  return Bytes{value.unscaledBytes()};
}

DecimalValue Decimal::toLogical(const SchemaPtr& schema, std::string_view bytes) {
  return DecimalValue::fromUnscaledBytes(bytes, scale(*schema));
}

SchemaBuilder Date::builder() {
  SchemaBuilder builder = SchemaBuilder::int32();
  builder.name(std::string(LOGICAL_NAME)).version(1);
  return builder;
}

const SchemaPtr Date::SCHEMA = Date::builder().build();

int32_t Date::fromLogical(const SchemaPtr& schema, DateTime value) {
  requireName(schema, LOGICAL_NAME, "Date");
  if (value.epochMillis % kMillisPerDay != 0)
    throw DataException(
        "Kafka Connect Date type should not have any time fields set to non-zero values.");
  return static_cast<int32_t>(value.epochMillis / kMillisPerDay);
}

DateTime Date::toLogical(const SchemaPtr& schema, int32_t days) {
  requireName(schema, LOGICAL_NAME, "Date");
  return DateTime{days * kMillisPerDay};
}

SchemaBuilder Time::builder() {
  SchemaBuilder builder = SchemaBuilder::int32();
  builder.name(std::string(LOGICAL_NAME)).version(1);
  return builder;
}

const SchemaPtr Time::SCHEMA = Time::builder().build();

int32_t Time::fromLogical(const SchemaPtr& schema, DateTime value) {
  requireName(schema, LOGICAL_NAME, "Time");
  if (value.epochMillis < 0 || value.epochMillis > kMillisPerDay)
    throw DataException(
        "Kafka Connect Time type should not have any date fields set to non-zero values.");
  return static_cast<int32_t>(value.epochMillis);
}

DateTime Time::toLogical(const SchemaPtr& schema, int32_t millis) {
  requireName(schema, LOGICAL_NAME, "Date");
  if (millis < 0 || millis > kMillisPerDay)
    throw DataException(
        "Time values must use number of milliseconds greater than 0 and less than 86400000");
  return DateTime{millis};
}

SchemaBuilder Timestamp::builder() {
  SchemaBuilder builder = SchemaBuilder::int64();
  builder.name(std::string(LOGICAL_NAME)).version(1);
  return builder;
}

const SchemaPtr Timestamp::SCHEMA = Timestamp::builder().build();

int64_t Timestamp::fromLogical(const SchemaPtr& schema, DateTime value) {
  requireName(schema, LOGICAL_NAME, "Timestamp");
  return value.epochMillis;
}

DateTime Timestamp::toLogical(const SchemaPtr& schema, int64_t millis) {
  requireName(schema, LOGICAL_NAME, "Timestamp");
  return DateTime{millis};
}

}  // namespace oxbow::connect
