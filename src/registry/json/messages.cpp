// The names, the acceptance and the texts of Confluent's JSON Schema differences
// (json-schema-provider's Difference and COMPATIBLE_CHANGES).
#include "registry/json/diff.h"

namespace oxbow::registry::json {

using T = DifferenceType;

const char* type_name(DifferenceType type) {
  switch (type) {
#define OXBOW_JSON_NAME(name, compatible) \
  case T::name:                           \
    return #name;
    OXBOW_JSON_DIFFERENCES(OXBOW_JSON_NAME)
#undef OXBOW_JSON_NAME
  }
  return "";
}

bool is_compatible(DifferenceType type) {
  switch (type) {
#define OXBOW_JSON_COMPATIBLE(name, compatible) \
  case T::name:                                 \
    return compatible;
    OXBOW_JSON_DIFFERENCES(OXBOW_JSON_COMPATIBLE)
#undef OXBOW_JSON_COMPATIBLE
  }
  return false;
}

std::string describe(const Difference& d, const std::string& first, const std::string& second) {
  const std::string p = "'" + d.path + "'";
  std::string text;
  switch (d.type) {
    case T::MAXIMUM_ADDED:
    case T::MINIMUM_ADDED:
    case T::EXCLUSIVE_MAXIMUM_ADDED:
    case T::EXCLUSIVE_MINIMUM_ADDED:
    case T::MULTIPLE_OF_ADDED:
    case T::MAX_LENGTH_ADDED:
    case T::MIN_LENGTH_ADDED:
    case T::PATTERN_ADDED:
    case T::REQUIRED_ATTRIBUTE_ADDED:
    case T::MAX_PROPERTIES_ADDED:
    case T::MIN_PROPERTIES_ADDED:
    case T::DEPENDENCY_ARRAY_ADDED:
    case T::DEPENDENCY_SCHEMA_ADDED:
    case T::MAX_ITEMS_ADDED:
    case T::MIN_ITEMS_ADDED:
    case T::UNIQUE_ITEMS_ADDED:
    case T::ADDITIONAL_ITEMS_REMOVED:
    case T::ADDITIONAL_PROPERTIES_REMOVED:
      text = "The keyword at path " + p + " in the " + first + " schema is not present in the " +
             second + " schema";
      break;
    case T::MIN_LENGTH_INCREASED:
    case T::MINIMUM_INCREASED:
    case T::EXCLUSIVE_MINIMUM_INCREASED:
    case T::MIN_PROPERTIES_INCREASED:
    case T::MULTIPLE_OF_EXPANDED:
    case T::MIN_ITEMS_INCREASED:
      text = "The value at path " + p + " in the " + first +
             " schema is more than its value in the " + second + " schema";
      break;
    case T::MAX_LENGTH_DECREASED:
    case T::MAXIMUM_DECREASED:
    case T::MAX_ITEMS_DECREASED:
    case T::EXCLUSIVE_MAXIMUM_DECREASED:
    case T::MAX_PROPERTIES_DECREASED:
      text = "The value at path " + p + " in the " + first +
             " schema is less than its value in the " + second + " schema";
      break;
    case T::PATTERN_CHANGED:
    case T::MULTIPLE_OF_CHANGED:
    case T::DEPENDENCY_ARRAY_CHANGED:
      text = "The value at path " + p + " is different between the " + first + " and " + second +
             " schema";
      break;
    case T::ADDITIONAL_ITEMS_NARROWED:
    case T::ENUM_ARRAY_NARROWED:
    case T::SUM_TYPE_NARROWED:
    case T::ADDITIONAL_PROPERTIES_NARROWED:
      text = "An array or combined type at path " + p + " has fewer elements in the " + first +
             " schema than the " + second + " schema";
      break;
    case T::DEPENDENCY_ARRAY_EXTENDED:
    case T::PRODUCT_TYPE_EXTENDED:
    case T::SUM_TYPE_EXTENDED:
    case T::NOT_TYPE_EXTENDED:
      text = "An array or combined type at path " + p + " has more elements in the " + first +
             " schema than the " + second + " schema";
      break;
    case T::TYPE_CHANGED:
    case T::TYPE_NARROWED:
    case T::COMBINED_TYPE_CHANGED:
    case T::COMBINED_TYPE_SUBSCHEMAS_CHANGED:
    case T::ENUM_ARRAY_CHANGED:
      text = "A type at path " + p + " is different between the " + first + " schema and the " +
             second + " schema";
      break;
    case T::PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL:
    case T::ITEM_ADDED_TO_OPEN_CONTENT_MODEL:
      text = "The " + first +
             " schema has an open content model and has a property or item at path " + p +
             " which is missing in the " + second + " schema";
      break;
    case T::REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL:
      text = "The " + first +
             " schema has an unopen content model and has a required property at path " + p +
             " which is missing in the " + second + " schema";
      break;
    case T::PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL:
    case T::ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL:
      text = "The " + first +
             " has a closed content model and is missing a property or item present at path " + p +
             " in the " + second + " schema";
      break;
    case T::PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL:
    case T::ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL:
      text = "A property or item is missing in the " + first + " schema but present at path " + p +
             " in the " + second + " schema and is not covered by its partially open content model";
      break;
    case T::PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL:
    case T::ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL:
      text = "The " + first + " schema has a property or item at path " + p +
             " which is missing in the " + second +
             " schema and is not covered by its partially open content model";
      break;
    case T::RESERVED_PROPERTY_REMOVED:
      text = "The " + first + " schema has reserved property " + p +
             " removed from its metadata which is present in the " + second + " schema.";
      break;
    case T::RESERVED_PROPERTY_CONFLICTS_WITH_PROPERTY:
      text = "The " + first + " schema has property at path " + p +
             " that conflicts with the reserved properties which is missing in the " + second +
             " schema.";
      break;
    default:
      break;
  }
  return std::string("{errorType:\"") + type_name(d.type) + "\", description:\"" + text + "'}";
}

std::vector<std::string> incompatibilities(const Schema& original, const Schema& update,
                                           const std::string& first, const std::string& second) {
  std::vector<std::string> out;
  for (const auto& d : compare(original, update))
    if (!is_compatible(d.type)) out.push_back(describe(d, first, second));
  return out;
}

}  // namespace oxbow::registry::json
