// ConfigDef: parsing by type with Kafka's rules and messages, the validators' messages,
// validate() collecting errors, embedding under a prefix, and Connect's ConfigInfos JSON.
#include "oxbow/connect/config_def.h"

#include <gtest/gtest.h>

#include "connect/config_infos.h"

namespace oxbow::connect {
namespace {

using Type = ConfigDef::Type;
using Importance = ConfigDef::Importance;
using Props = std::map<std::string, std::string>;

template <class Body>
std::string messageOf(Body body) {
  try {
    body();
  } catch (const ConfigException& error) {
    return error.what();
  }
  return "no exception";
}

// The message parsing `text` as a config of that type and validator throws.
std::string parseError(Type type, const std::string& text, ValidatorPtr validator = nullptr) {
  ConfigDef def;
  def.define("c", type, DefaultValue(), std::move(validator), Importance::HIGH, "");
  return messageOf([&] { def.parse(Props{{"c", text}}); });
}

ParsedValue parsed(Type type, const std::string& text) {
  return ConfigDef::parseType("c", text, type);
}

TEST(ConfigDefTest, ParsesBooleansInAnyCaseAndBlanks) {
  EXPECT_EQ(parsed(Type::BOOLEAN, " TRUE "), ParsedValue(true));
  EXPECT_EQ(parsed(Type::BOOLEAN, "False"), ParsedValue(false));
  // The message shows the text as given, blanks and all, as Kafka's does.
  EXPECT_EQ(parseError(Type::BOOLEAN, " yes"),
            "Invalid value  yes for configuration c: Expected value to be either true or false");
  EXPECT_EQ(parseError(Type::BOOLEAN, ""),
            "Invalid value  for configuration c: Expected value to be either true or false");
}

TEST(ConfigDefTest, ParsesIntegersInTheirTypesRanges) {
  EXPECT_EQ(parsed(Type::INT, " 42 "), ParsedValue(int32_t{42}));
  EXPECT_EQ(parsed(Type::INT, "+7"), ParsedValue(int32_t{7}));
  EXPECT_EQ(parsed(Type::INT, "-2147483648"), ParsedValue(int32_t{-2147483648LL}));
  EXPECT_EQ(parseError(Type::INT, "2147483648"),
            "Invalid value 2147483648 for configuration c: Not a number of type INT");
  EXPECT_EQ(parseError(Type::INT, "1.5"),
            "Invalid value 1.5 for configuration c: Not a number of type INT");
  EXPECT_EQ(parseError(Type::INT, "+-1"),
            "Invalid value +-1 for configuration c: Not a number of type INT");
  EXPECT_EQ(parseError(Type::INT, ""),
            "Invalid value  for configuration c: Not a number of type INT");
  EXPECT_EQ(parsed(Type::SHORT, "-32768"), ParsedValue(int16_t{-32768}));
  EXPECT_EQ(parseError(Type::SHORT, "32768"),
            "Invalid value 32768 for configuration c: Not a number of type SHORT");
  EXPECT_EQ(parsed(Type::LONG, "9223372036854775807"), ParsedValue(int64_t{9223372036854775807}));
  EXPECT_EQ(parsed(Type::LONG, "-9223372036854775808"),
            ParsedValue(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(parseError(Type::LONG, "9223372036854775808"),
            "Invalid value 9223372036854775808 for configuration c: Not a number of type LONG");
  EXPECT_EQ(parseError(Type::LONG, "12abc"),
            "Invalid value 12abc for configuration c: Not a number of type LONG");
}

TEST(ConfigDefTest, ParsesDoublesAsJava) {
  EXPECT_EQ(parsed(Type::DOUBLE, "1.5"), ParsedValue(1.5));
  EXPECT_EQ(parsed(Type::DOUBLE, "1e3"), ParsedValue(1000.0));
  EXPECT_EQ(parsed(Type::DOUBLE, ".5"), ParsedValue(0.5));
  EXPECT_EQ(parsed(Type::DOUBLE, "-5."), ParsedValue(-5.0));
  EXPECT_EQ(parsed(Type::DOUBLE, "2d"), ParsedValue(2.0));
  EXPECT_TRUE(std::isinf(std::get<double>(parsed(Type::DOUBLE, "-Infinity"))));
  EXPECT_EQ(parseError(Type::DOUBLE, "abc"),
            "Invalid value abc for configuration c: Not a number of type DOUBLE");
  EXPECT_EQ(parseError(Type::DOUBLE, "1e"),
            "Invalid value 1e for configuration c: Not a number of type DOUBLE");
  EXPECT_EQ(parseError(Type::DOUBLE, "."),
            "Invalid value . for configuration c: Not a number of type DOUBLE");
}

TEST(ConfigDefTest, PrintsDoublesAsJavasDoubleToString) {
  EXPECT_EQ(toJavaString(100.0), "100.0");
  EXPECT_EQ(toJavaString(0.001), "0.001");
  EXPECT_EQ(toJavaString(123456.789), "123456.789");
  EXPECT_EQ(toJavaString(9999999.0), "9999999.0");
  EXPECT_EQ(toJavaString(1e7), "1.0E7");
  EXPECT_EQ(toJavaString(-1.25e10), "-1.25E10");
  EXPECT_EQ(toJavaString(1e-4), "1.0E-4");
  EXPECT_EQ(toJavaString(0.00012345), "1.2345E-4");
  EXPECT_EQ(toJavaString(-0.0), "-0.0");
  EXPECT_EQ(toJavaString(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(convertToString(std::vector<std::string>{"a", "b"}), "a,b");
  EXPECT_EQ(convertToString(ParsedValue()), std::nullopt);
}

TEST(ConfigDefTest, SplitsListsAtCommasAndTrimsTheItems) {
  using List = std::vector<std::string>;
  EXPECT_EQ(parsed(Type::LIST, " a , b,,c "), ParsedValue(List{"a", "b", "", "c"}));
  EXPECT_EQ(parsed(Type::LIST, "a,"), ParsedValue(List{"a", ""}));
  EXPECT_EQ(parsed(Type::LIST, "   "), ParsedValue(List{}));
  EXPECT_EQ(parsed(Type::STRING, "  text \t"), ParsedValue(std::string("text")));
  EXPECT_EQ(parsed(Type::CLASS, " com.example.Foo "), ParsedValue(std::string("com.example.Foo")));
}

TEST(ConfigDefTest, HidesPasswordsWhenPrinted) {
  ConfigDef def;
  def.define("password", Type::PASSWORD, Importance::HIGH, "")
      .define("ratio", Type::DOUBLE, 1e10, Importance::LOW, "")
      .define("names", Type::LIST, "a, b", Importance::LOW, "");
  AbstractConfig config(def, Props{{"password", " secret "}});
  EXPECT_EQ(config.getPassword("password").value(), "secret");
  EXPECT_EQ(config.toString(), "\tnames = [a, b]\n\tpassword = [hidden]\n\tratio = 1.0E10\n");
  EXPECT_EQ(toJavaString(ParsedValue(Password("x"))), "[hidden]");
}

TEST(ConfigDefTest, RequiresConfigsWithoutDefaultsAndFillsInDefaults) {
  ConfigDef def;
  def.define("required", Type::STRING, Importance::HIGH, "")
      .define("count", Type::INT, 5, Importance::LOW, "")
      .define("optional", Type::STRING, nullptr, Importance::LOW, "")
      .define("flag", Type::BOOLEAN, "true", Importance::LOW, "");
  EXPECT_EQ(messageOf([&] { def.parse(Props{}); }),
            "Missing required configuration \"required\" which has no default value.");
  std::map<std::string, std::string, std::less<>> props{{"required", "r"}};
  AbstractConfig config(def, props);
  EXPECT_EQ(config.getString("required"), "r");
  EXPECT_EQ(config.getInt("count"), 5);
  EXPECT_TRUE(config.getBoolean("flag"));
  EXPECT_TRUE(config.isNull("optional"));
  EXPECT_EQ(config.getOptionalString("optional"), std::nullopt);
  EXPECT_EQ(messageOf([&] { config.getString("optional"); }),
            "Configuration 'optional' has no value");
  EXPECT_EQ(messageOf([&] { config.getLong("count"); }),
            "Configuration 'count' is not of type LONG");
  EXPECT_EQ(messageOf([&] { config.get("nope"); }), "Unknown configuration 'nope'");
}

TEST(ConfigDefTest, RefusesBadDefinitions) {
  ConfigDef def;
  def.define("a", Type::INT, 1, Importance::LOW, "");
  EXPECT_EQ(messageOf([&] { def.define("a", Type::INT, 1, Importance::LOW, ""); }),
            "Configuration a is defined twice.");
  EXPECT_EQ(messageOf([&] { def.define("b", Type::INT, "x", Importance::LOW, ""); }),
            "Invalid value x for configuration b: Not a number of type INT");
  EXPECT_EQ(
      messageOf([&] { def.define("c", Type::INT, 10, Range::atLeast(20), Importance::LOW, ""); }),
      "Invalid value 10 for configuration c: Value must be at least 20");
  EXPECT_EQ(messageOf([&] {
              def.define("d", Type::STRING, nullptr, NonNullValidator::create(), Importance::LOW,
                         "");
            }),
            "Invalid value null for configuration d: entry must be non null");
  EXPECT_EQ(messageOf([&] { def.define("e", Type::INT, true, Importance::LOW, ""); }),
            "Invalid value true for configuration e: Expected value to be a 32-bit integer, but it "
            "was a java.lang.Boolean");
}

TEST(ConfigDefTest, RangesSayTheirBoundsAsJavaPrintsThem) {
  EXPECT_EQ(parseError(Type::INT, "0", Range::atLeast(1)),
            "Invalid value 0 for configuration c: Value must be at least 1");
  EXPECT_EQ(parseError(Type::LONG, "11", Range::between(1, 10)),
            "Invalid value 11 for configuration c: Value must be no more than 10");
  EXPECT_EQ(parseError(Type::DOUBLE, "0.25", Range::atLeast(0.5)),
            "Invalid value 0.25 for configuration c: Value must be at least 0.5");
  EXPECT_EQ(parseError(Type::DOUBLE, "0", Range::atLeast(1.0)),
            "Invalid value 0.0 for configuration c: Value must be at least 1.0");
  EXPECT_EQ(parseError(Type::INT, "10", Range::between(1, 10)), "no exception");
  EXPECT_EQ(Range::atLeast(1)->toString(), "[1,...]");
  EXPECT_EQ(Range::between(1, 10)->toString(), "[1,...,10]");
}

TEST(ConfigDefTest, StringValidatorsListTheirValues) {
  EXPECT_EQ(parseError(Type::STRING, "c", ValidString::in({"a", "b"})),
            "Invalid value c for configuration c: String must be one of: a, b");
  EXPECT_EQ(parseError(Type::STRING, "B", ValidString::in({"a", "b"})),
            "Invalid value B for configuration c: String must be one of: a, b");
  EXPECT_EQ(ValidString::in({"a", "b"})->toString(), "[a, b]");
  // Kafka keeps these in a HashSet: the message lists them in its order, not as declared.
  auto caseInsensitive = CaseInsensitiveValidString::in({"base64", "numeric"});
  EXPECT_EQ(parseError(Type::STRING, "Numeric", caseInsensitive), "no exception");
  EXPECT_EQ(parseError(Type::STRING, "text", caseInsensitive),
            "Invalid value text for configuration c: String must be one of (case insensitive): "
            "NUMERIC, BASE64");
  EXPECT_EQ(caseInsensitive->toString(), "(case insensitive) [NUMERIC, BASE64]");
  EXPECT_EQ(parseError(Type::STRING, "", NonEmptyString::create()),
            "Invalid value  for configuration c: String must be non-empty");
  EXPECT_EQ(NonEmptyString::create()->toString(), "non-empty string");
}

TEST(ConfigDefTest, ListValidatorsCheckEachItem) {
  EXPECT_EQ(parseError(Type::LIST, "a, c", ValidList::in({"a", "b"})),
            "Invalid value c for configuration c: String must be one of: a, b");
  EXPECT_EQ(parseError(Type::LIST, "a,a", ValidList::in({"a", "b"})),
            "Configuration 'c' values must not be duplicated.");
  EXPECT_EQ(parseError(Type::LIST, "a,,b", ValidList::in({"a", "b"})),
            "Configuration 'c' values must not be empty.");
  EXPECT_EQ(parseError(Type::LIST, "", ValidList::in({"a", "b"})), "no exception");
  EXPECT_EQ(parseError(Type::LIST, "", ValidList::in(false, {"a", "b"})),
            "Configuration 'c' must not be empty. Valid values include: [a, b]");
  EXPECT_EQ(parseError(Type::LIST, "", ValidList::anyNonDuplicateValues(false, false)),
            "Configuration 'c' must not be empty. Valid values include: any non-empty value");
  EXPECT_EQ(parseError(Type::LIST, " ", NonEmptyListValidator::create()),
            "Invalid value [] for configuration c: Empty list");
}

TEST(ConfigDefTest, CustomValidatorsThrowTheirOwnMessages) {
  auto even = LambdaValidator::with(
      [](const std::string& name, const ParsedValue& value) {
        if (std::get<int32_t>(value) % 2 != 0) {
          throw ConfigException(name, toJavaString(value), "Must be even");
        }
      },
      [] { return std::string("even numbers"); });
  EXPECT_EQ(parseError(Type::INT, "3", even), "Invalid value 3 for configuration c: Must be even");
  EXPECT_EQ(even->toString(), "even numbers");
  auto both = CompositeValidator::of({Range::atLeast(0), even});
  EXPECT_EQ(parseError(Type::INT, "-2", both),
            "Invalid value -2 for configuration c: Value must be at least 0");
  EXPECT_EQ(both->toString(), "[0,...], even numbers");
  auto known = ValidClass::of([](const std::string& name) { return name == "com.example.Known"; });
  EXPECT_EQ(parseError(Type::CLASS, "com.example.Known", known), "no exception");
  EXPECT_EQ(parseError(Type::CLASS, "com.example.Gone", known),
            "Invalid value com.example.Gone for configuration c: Class com.example.Gone could not "
            "be found.");
}

TEST(ConfigDefTest, ValidateCollectsEveryErrorWithoutThrowing) {
  ConfigDef def;
  def.define("port", Type::INT, DefaultValue(), Range::atLeast(1), Importance::HIGH, "")
      .define("flag", Type::BOOLEAN, false, Importance::LOW, "")
      .define("mode", Type::STRING, "a", ValidString::in({"a", "b"}), Importance::LOW, "")
      .define("name", Type::STRING, "x", Importance::LOW, "");
  std::vector<ConfigValue> values = def.validate(Props{{"flag", "maybe"}, {"mode", "c"}});
  ASSERT_EQ(values.size(), 4u);
  // A missing required config with a validator gets the validator's error on null too, as Kafka.
  EXPECT_EQ(values[0].errorMessages,
            (std::vector<std::string>{
                "Missing required configuration \"port\" which has no default value.",
                "Invalid value null for configuration port: Value must be non-null"}));
  EXPECT_EQ(values[1].errorMessages,
            (std::vector<std::string>{
                "Invalid value maybe for configuration flag: Expected value to be either true or "
                "false"}));
  EXPECT_EQ(values[1].value, ParsedValue());
  EXPECT_EQ(values[2].errorMessages,
            (std::vector<std::string>{
                "Invalid value c for configuration mode: String must be one of: a, b"}));
  EXPECT_EQ(values[2].value, ParsedValue(std::string("c")));
  EXPECT_TRUE(values[3].errorMessages.empty());
  EXPECT_EQ(values[3].value, ParsedValue(std::string("x")));
}

class ModeRecommender : public Recommender {
 public:
  std::vector<ParsedValue> validValues(const std::string&,
                                       const std::map<std::string, ParsedValue>&) const override {
    return {std::string("a"), std::string("b")};
  }
  bool visible(const std::string&,
               const std::map<std::string, ParsedValue>& parsed) const override {
    return parsed.at("enabled") == ParsedValue(true);
  }
};

TEST(ConfigDefTest, ValidateAsksRecommendersAndReportsUndefinedDependents) {
  ConfigDef def;
  def.define("enabled", Type::BOOLEAN, false, nullptr, Importance::HIGH, "", "G", 1,
             ConfigDef::Width::SHORT, "Enabled", {"mode", "missing"})
      .define("mode", Type::STRING, "a", nullptr, Importance::LOW, "", "G", 2,
              ConfigDef::Width::SHORT, "Mode", {}, std::make_shared<ModeRecommender>());
  std::vector<ConfigValue> values = def.validate(Props{});
  ASSERT_EQ(values.size(), 3u);
  EXPECT_FALSE(values[1].visible);
  EXPECT_EQ(values[1].recommendedValues,
            (std::vector<ParsedValue>{std::string("a"), std::string("b")}));
  EXPECT_TRUE(def.validate(Props{{"enabled", "true"}})[1].visible);
  EXPECT_EQ(values[2].name, "missing");
  EXPECT_EQ(values[2].errorMessages,
            std::vector<std::string>{"missing is referred in the dependents, but not defined."});
  EXPECT_EQ(messageOf([&] { def.parse(Props{}); }),
            "Some configurations in are referred in the dependents, but not defined: missing");
}

TEST(ConfigDefTest, EmbedsAnotherDefinitionUnderAPrefix) {
  ConfigDef child;
  child
      .define("field", Type::STRING, DefaultValue(), NonEmptyString::create(), Importance::HIGH,
              "The field.")
      .define(ConfigDef::ConfigKey{.name = "extra",
                                   .type = Type::INT,
                                   .defaultValue = 1,
                                   .importance = Importance::LOW,
                                   .group = "Inner",
                                   .orderInGroup = 1});
  ConfigDef def;
  def.define("transforms", Type::LIST, "", Importance::LOW, "");
  def.embed("transforms.a.", "Transforms: a", 5, child);
  EXPECT_EQ(def.names(),
            (std::vector<std::string>{"transforms", "transforms.a.field", "transforms.a.extra"}));
  const ConfigDef::ConfigKey* field = def.find("transforms.a.field");
  ASSERT_NE(field, nullptr);
  EXPECT_EQ(field->group, "Transforms: a");
  EXPECT_EQ(field->orderInGroup, 5);
  EXPECT_EQ(def.find("transforms.a.extra")->group, "Transforms: a: Inner");
  EXPECT_EQ(def.find("transforms.a.extra")->orderInGroup, 6);
  EXPECT_EQ(def.groups(), (std::vector<std::string>{"Transforms: a", "Transforms: a: Inner"}));
  // The child's validator names the config without the prefix, as Kafka's embedded one does.
  EXPECT_EQ(messageOf([&] {
              def.parse(Props{{"transforms.a.field", " "}});
            }),
            "Invalid value  for configuration field: String must be non-empty");
  EXPECT_EQ(messageOf([&] { def.parse(Props{}); }),
            "Missing required configuration \"transforms.a.field\" which has no default value.");
}

TEST(ConfigDefTest, SortsConfigsByGroupOrderRequirednessImportanceAndName) {
  ConfigDef def;
  def.define("z", Type::INT, 1, Importance::LOW, "")
      .define("y", Type::INT, 1, Importance::HIGH, "")
      .define("x", Type::INT, Importance::LOW, "")
      .define(
          ConfigDef::ConfigKey{.name = "g", .type = Type::INT, .group = "G", .orderInGroup = 0});
  std::vector<std::string> order;
  for (const auto* key : def.sortedConfigs()) order.push_back(key->name);
  EXPECT_EQ(order, (std::vector<std::string>{"x", "y", "z", "g"}));
}

TEST(ConfigInfosTest, WritesConnectsValidationJson) {
  ConfigDef def;
  def.define("topic", Type::STRING, DefaultValue(), NonEmptyString::create(), Importance::HIGH,
             "The topic.", "Common", 1, ConfigDef::Width::LONG, "Topic")
      .define("secret", Type::PASSWORD, "", Importance::LOW, "A secret.")
      .define("names", Type::LIST, "a,b", Importance::MEDIUM, "Names.");
  std::vector<ConfigValue> values = def.validate(Props{{"secret", "pw"}});
  values.push_back(ConfigValue{.name = "unknown", .errorMessages = {"Unknown config"}});
  nlohmann::ordered_json expected = nlohmann::ordered_json::parse(R"({
    "name": "Example", "error_count": 2, "groups": ["Common"],
    "configs": [
      {"definition": null,
       "value": {"name": "unknown", "value": null, "recommended_values": [],
                 "errors": ["Unknown config"], "visible": true}},
      {"definition": {"name": "topic", "type": "STRING", "required": true, "default_value": null,
                      "importance": "HIGH", "documentation": "The topic.", "group": "Common",
                      "width": "LONG", "display_name": "Topic", "dependents": [], "order": 1},
       "value": {"name": "topic", "value": null, "recommended_values": [],
                 "errors": ["Missing required configuration \"topic\" which has no default value."],
                 "visible": true}},
      {"definition": {"name": "secret", "type": "PASSWORD", "required": false,
                      "default_value": "[hidden]", "importance": "LOW",
                      "documentation": "A secret.", "group": null, "width": "NONE",
                      "display_name": "secret", "dependents": [], "order": -1},
       "value": {"name": "secret", "value": "[hidden]", "recommended_values": [], "errors": [],
                 "visible": true}},
      {"definition": {"name": "names", "type": "LIST", "required": false, "default_value": "a,b",
                      "importance": "MEDIUM", "documentation": "Names.", "group": null,
                      "width": "NONE", "display_name": "names", "dependents": [], "order": -1},
       "value": {"name": "names", "value": "a,b", "recommended_values": [], "errors": [],
                 "visible": true}}
    ]})");
  // Compared as text so that the fields' order counts too.
  EXPECT_EQ(configInfos("Example", def, values).dump(2), expected.dump(2));
}

}  // namespace
}  // namespace oxbow::connect
