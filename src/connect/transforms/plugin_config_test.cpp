// The transforms' and predicates' config() declarations: Kafka's config names, types, defaults
// and validators, which Connect's REST API lists and validates against.
#include <gtest/gtest.h>

#include "connect/config_infos.h"
#include "oxbow/connect/transformation.h"

namespace oxbow::connect {
namespace {

std::vector<std::string> namesOf(const ConfigDef& definition) {
  return definition.names();
}

TEST(PluginConfigTest, EveryTransformDeclaresKafkasConfigs) {
  const std::map<std::string, std::vector<std::string>> expected = {
      {"Cast$Value", {"spec", "replace.null.with.default"}},
      {"DropHeaders", {"headers"}},
      {"ExtractField$Key", {"field", "replace.null.with.default", "field.syntax.version"}},
      {"Filter", {}},
      {"Flatten$Value", {"delimiter"}},
      {"HeaderFrom$Value", {"fields", "headers", "operation", "replace.null.with.default"}},
      {"HoistField$Value", {"field"}},
      {"InsertField$Value",
       {"topic.field", "partition.field", "offset.field", "timestamp.field", "static.field",
        "static.value", "replace.null.with.default"}},
      {"InsertHeader", {"header", "value.literal"}},
      {"MaskField$Value", {"fields", "replacement", "replace.null.with.default"}},
      {"RegexRouter", {"regex", "replacement"}},
      {"ReplaceField$Value", {"exclude", "include", "renames", "replace.null.with.default"}},
      {"SetSchemaMetadata$Value", {"schema.name", "schema.version", "replace.null.with.default"}},
      {"TimestampConverter$Value",
       {"field", "target.type", "format", "unix.precision", "replace.null.with.default"}},
      {"TimestampRouter", {"topic.format", "timestamp.format"}},
      {"ValueToKey", {"fields", "replace.null.with.default"}},
  };
  for (const auto& [className, names] : expected) {
    EXPECT_EQ(namesOf(createTransformation(className)->config()), names) << className;
  }
  EXPECT_EQ(namesOf(createPredicate("TopicNameMatches")->config()),
            std::vector<std::string>{"pattern"});
  EXPECT_EQ(namesOf(createPredicate("HasHeaderKey")->config()), std::vector<std::string>{"name"});
  EXPECT_TRUE(namesOf(createPredicate("RecordIsTombstone")->config()).empty());
}

TEST(PluginConfigTest, CastsSpecIsShownAsKafkaShowsIt) {
  nlohmann::ordered_json spec =
      configKeyInfo(createTransformation("Cast$Value")->config().configKeys().front());
  spec.erase("documentation");
  EXPECT_EQ(spec.dump(), R"({"name":"spec","type":"LIST","required":true,"default_value":null,)"
                         R"("importance":"HIGH","group":null,"width":"NONE","display_name":"spec",)"
                         R"("dependents":[],"order":-1})");
  nlohmann::ordered_json precision = configKeyInfo(
      *createTransformation("TimestampConverter$Value")->config().find("unix.precision"));
  EXPECT_EQ(precision["default_value"], "milliseconds");
  EXPECT_EQ(precision["importance"], "LOW");
}

TEST(PluginConfigTest, ValidateReportsWhatConfigureWouldRefuse) {
  auto errorsOf = [](const ConfigDef& definition, const TransformConfig& config,
                     const std::string& name) {
    for (const ConfigValue& value : definition.validate(config)) {
      if (value.name == name) return value.errorMessages;
    }
    return std::vector<std::string>{"no such config"};
  };
  ConfigDef cast = createTransformation("Cast$Value")->config();
  EXPECT_EQ(errorsOf(cast, {{"spec", "a:uuid"}}, "spec"),
            std::vector<std::string>{"Invalid type found in casting spec: uuid"});
  EXPECT_EQ(errorsOf(cast, {{"spec", ""}}, "spec"),
            std::vector<std::string>{"Must specify at least one field to cast."});
  ConfigDef converter = createTransformation("TimestampConverter$Value")->config();
  EXPECT_EQ(errorsOf(converter, {{"target.type", "date"}}, "target.type"),
            std::vector<std::string>{"Invalid value date for configuration target.type: String "
                                     "must be one of: string, unix, Date, Time, Timestamp"});
  ConfigDef hasHeader = createPredicate("HasHeaderKey")->config();
  EXPECT_EQ(errorsOf(hasHeader, {{"name", " "}}, "name"),
            std::vector<std::string>{"Invalid value  for configuration name: String must be "
                                     "non-empty"});
}

}  // namespace
}  // namespace oxbow::connect
