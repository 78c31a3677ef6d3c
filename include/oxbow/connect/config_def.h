#pragma once
// Kafka's ConfigDef (org.apache.kafka.common.config): how a connector, task, converter or
// transform declares its configs (type, default, validator, importance, documentation, group,
// order, width, display name, dependents), parses a config's text into typed values with Kafka's
// rules and messages, and validates it config by config for Connect's REST API.
#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace oxbow::connect {

// A config that is missing or has a bad value (Kafka's common.config.ConfigException): not a
// ConnectException, as in Kafka.
class ConfigException : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // "Invalid value VALUE for configuration NAME: MESSAGE", as ConfigException(name, value, msg);
  // an empty message leaves out ": MESSAGE".
  ConfigException(std::string_view name, std::string_view value, std::string_view message);
};

// A PASSWORD config's value: printed as "[hidden]" everywhere but value().
class Password {
 public:
  static constexpr std::string_view HIDDEN = "[hidden]";
  explicit Password(std::string value) : value_(std::move(value)) {}
  const std::string& value() const { return value_; }
  std::string toString() const { return std::string(HIDDEN); }
  bool operator==(const Password&) const = default;

 private:
  std::string value_;
};

// A parsed config value: null (monostate), BOOLEAN, SHORT, INT, LONG, DOUBLE, STRING or CLASS
// (the class name), LIST, PASSWORD.
using ParsedValue = std::variant<std::monostate, bool, int16_t, int32_t, int64_t, double,
                                 std::string, std::vector<std::string>, Password>;

// The value as Java's toString prints it in Kafka's messages: "null", "true", "1.0E10",
// "[a, b]" for a list, "[hidden]" for a password.
std::string toJavaString(const ParsedValue& value);

// The value as text with Kafka's ConfigDef.convertToString (a list joined by ","), nullopt for
// null; what Connect's REST API shows.
std::optional<std::string> convertToString(const ParsedValue& value);

class Validator {
 public:
  virtual ~Validator() = default;
  // ConfigException when the value (null when unset and without default) is not valid.
  virtual void ensureValid(const std::string& name, const ParsedValue& value) const = 0;
  // The valid values as Kafka describes them ("[1,...]", "[a, b]", "non-empty string").
  virtual std::string toString() const { return ""; }
};
using ValidatorPtr = std::shared_ptr<const Validator>;

// A bound of Range: an integer or a double, printed as Java prints that Number.
class Number {
 public:
  template <std::integral T>
  Number(T value) : integral_(true), long_(static_cast<int64_t>(value)) {}  // NOLINT
  Number(double value) : integral_(false), double_(value) {}                // NOLINT
  bool integral() const { return integral_; }
  int64_t longValue() const { return integral_ ? long_ : static_cast<int64_t>(double_); }
  double doubleValue() const { return integral_ ? static_cast<double>(long_) : double_; }
  std::string toString() const;

 private:
  bool integral_;
  int64_t long_ = 0;
  double double_ = 0;
};

// The validators of Kafka's ConfigDef, by their Kafka names, with their messages.
struct Range {
  static ValidatorPtr atLeast(Number min);              // "Value must be at least MIN"
  static ValidatorPtr between(Number min, Number max);  // "... no more than MAX"
};
struct ValidString {
  static ValidatorPtr in(std::vector<std::string> validStrings);  // "String must be one of: a, b"
};
struct CaseInsensitiveValidString {
  static ValidatorPtr in(std::vector<std::string> validStrings);
};
struct ValidList {
  // Each item one of validStrings, no item empty, none twice; null refused.
  static ValidatorPtr in(std::vector<std::string> validStrings);
  static ValidatorPtr in(bool isEmptyAllowed, std::vector<std::string> validStrings);
  static ValidatorPtr anyNonDuplicateValues(bool isEmptyAllowed, bool isNullAllowed);
};
struct NonEmptyString {
  static ValidatorPtr create();  // "String must be non-empty" (null passes)
};
struct NonNullValidator {
  static ValidatorPtr create();  // "entry must be non null"
};
// Connect's transforms' NonEmptyListValidator: "Empty list".
struct NonEmptyListValidator {
  static ValidatorPtr create();
};
struct CompositeValidator {
  static ValidatorPtr of(std::vector<ValidatorPtr> validators);
};
struct LambdaValidator {
  static ValidatorPtr with(std::function<void(const std::string&, const ParsedValue&)> ensureValid,
                           std::function<std::string()> toString);
};
// For a CLASS config: "Class NAME could not be found." unless `known` knows the name, the check
// Kafka's parseType makes by loading the class.
struct ValidClass {
  static ValidatorPtr of(std::function<bool(const std::string&)> known);
};

// Valid values and visibility of a config given the others' parsed values (validate() only).
class Recommender {
 public:
  virtual ~Recommender() = default;
  virtual std::vector<ParsedValue> validValues(
      const std::string& name, const std::map<std::string, ParsedValue>& parsed) const = 0;
  virtual bool visible(const std::string& name,
                       const std::map<std::string, ParsedValue>& parsed) const = 0;
};
using RecommenderPtr = std::shared_ptr<const Recommender>;

// A config's default: none (the config is required), null, or a value. A text default is parsed
// by the config's type, as Kafka parses a String default.
class DefaultValue {
 public:
  DefaultValue() = default;
  DefaultValue(std::nullptr_t) : required_(false) {}             // NOLINT
  DefaultValue(bool value) : required_(false), value_(value) {}  // NOLINT
  template <std::integral T>
  DefaultValue(T value) : required_(false), value_(static_cast<int64_t>(value)) {}   // NOLINT
  DefaultValue(double value) : required_(false), value_(value) {}                    // NOLINT
  DefaultValue(const char* value) : required_(false), value_(std::string(value)) {}  // NOLINT
  DefaultValue(std::string value) : required_(false), value_(std::move(value)) {}    // NOLINT
  DefaultValue(std::vector<std::string> value)                                       // NOLINT
      : required_(false), value_(std::move(value)) {}
  DefaultValue(Password value) : required_(false), value_(std::move(value)) {}  // NOLINT

  bool required() const { return required_; }
  const ParsedValue& value() const { return value_; }

 private:
  friend class ConfigDef;
  bool required_ = true;
  ParsedValue value_;
};

// A view of a config's properties, as the runtime passes them (either map type).
class ConfigProps {
 public:
  ConfigProps(const std::map<std::string, std::string>& props) : plain_(&props) {}  // NOLINT
  ConfigProps(const std::map<std::string, std::string, std::less<>>& props)         // NOLINT
      : transparent_(&props) {}
  const std::string* find(const std::string& name) const;
  std::map<std::string, std::string> copy() const;

 private:
  const std::map<std::string, std::string>* plain_ = nullptr;
  const std::map<std::string, std::string, std::less<>>* transparent_ = nullptr;
};

// Kafka's ConfigValue: one config's validation result.
struct ConfigValue {
  std::string name{};
  ParsedValue value{};
  std::vector<ParsedValue> recommendedValues{};
  std::vector<std::string> errorMessages{};
  bool visible = true;
};

class ConfigDef {
 public:
  enum class Type { BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD };
  enum class Importance { HIGH, MEDIUM, LOW };
  enum class Width { NONE, SHORT, MEDIUM, LONG };

  // One config's declaration; members in Kafka's define() order, for designated initializers.
  struct ConfigKey {
    std::string name{};
    Type type = Type::STRING;
    DefaultValue defaultValue{};  // none: required
    ValidatorPtr validator{};
    Importance importance = Importance::MEDIUM;
    std::string documentation{};
    std::optional<std::string> group{};
    int orderInGroup = -1;
    Width width = Width::NONE;
    std::string displayName{};  // empty: the name
    std::vector<std::string> dependents{};
    RecommenderPtr recommender{};
    bool internalConfig = false;

    bool hasDefault() const { return !defaultValue.required(); }
  };

  // Declares a config. Its default is parsed by its type and checked by its validator;
  // ConfigException for a bad default or a name defined twice.
  ConfigDef& define(ConfigKey key);
  ConfigDef& define(std::string name, Type type, DefaultValue defaultValue, ValidatorPtr validator,
                    Importance importance, std::string documentation,
                    std::optional<std::string> group, int orderInGroup, Width width,
                    std::string displayName, std::vector<std::string> dependents = {},
                    RecommenderPtr recommender = nullptr);
  ConfigDef& define(std::string name, Type type, DefaultValue defaultValue, ValidatorPtr validator,
                    Importance importance, std::string documentation);
  ConfigDef& define(std::string name, Type type, DefaultValue defaultValue, Importance importance,
                    std::string documentation);
  ConfigDef& define(std::string name, Type type, Importance importance, std::string documentation);

  // The child's configs under keyPrefix, in groupPrefix (": GROUP" appended for a grouped one),
  // ordered from startingOrd, validators and recommenders seeing the unprefixed names; as
  // Connect embeds a transform's configs under "transforms.ALIAS.".
  ConfigDef& embed(const std::string& keyPrefix, const std::string& groupPrefix, int startingOrd,
                   const ConfigDef& child);

  // The configs in definition order; one by name (null when undefined).
  const std::vector<ConfigKey>& configKeys() const { return keys_; }
  const ConfigKey* find(std::string_view name) const;
  std::vector<std::string> names() const;
  // The groups in the order they were first used.
  const std::vector<std::string>& groups() const { return groups_; }

  // Every config's value: the property parsed by type, else the default; ConfigException, with
  // Kafka's message, for the first config missing or invalid.
  std::map<std::string, ParsedValue> parse(ConfigProps props) const;

  // One ConfigValue per config (and per undefined dependent), every error collected, nothing
  // thrown: what Connect's validate endpoint reports.
  std::vector<ConfigValue> validate(ConfigProps props) const;

  // The text of one property parsed as that type (trimmed; ConfigException with Kafka's message).
  static ParsedValue parseType(const std::string& name, const std::string& text, Type type);
  // "BOOLEAN", "INT"...: Kafka's enum names.
  static std::string_view typeName(Type type);
  static std::string_view importanceName(Importance importance);
  static std::string_view widthName(Width width);

  // The configs ordered as Kafka sorts them for docs and embedding: by group (ungrouped first),
  // order in group, required first, importance, name.
  std::vector<const ConfigKey*> sortedConfigs() const;

 private:
  std::vector<std::string> undefinedDependents() const;
  std::vector<ConfigKey> keys_;
  std::map<std::string, size_t, std::less<>> index_;
  std::vector<std::string> groups_;
};

// A config parsed by its ConfigDef (Kafka's AbstractConfig): typed getters by name. A getter of
// an undefined name, of another type or of a null value throws ConfigException.
class AbstractConfig {
 public:
  AbstractConfig(const ConfigDef& definition, ConfigProps originals);

  bool getBoolean(const std::string& name) const;
  int16_t getShort(const std::string& name) const;
  int32_t getInt(const std::string& name) const;
  int64_t getLong(const std::string& name) const;
  double getDouble(const std::string& name) const;
  const std::string& getString(const std::string& name) const;
  // A STRING (or CLASS) config that may be null.
  std::optional<std::string> getOptionalString(const std::string& name) const;
  const std::vector<std::string>& getList(const std::string& name) const;
  const Password& getPassword(const std::string& name) const;
  const std::string& getClass(const std::string& name) const;
  bool isNull(const std::string& name) const;
  const ParsedValue& get(const std::string& name) const;

  const std::map<std::string, ParsedValue>& values() const { return values_; }
  const std::map<std::string, std::string>& originals() const { return originals_; }
  // The originals under a prefix, the prefix removed unless strip is false.
  std::map<std::string, std::string> originalsWithPrefix(const std::string& prefix,
                                                         bool strip = true) const;
  // One "\tNAME = VALUE\n" line per config by name, passwords "[hidden]" (Kafka's logAll).
  std::string toString() const;

 private:
  template <class T>
  const T& typed(const std::string& name, std::string_view typeName) const;
  std::map<std::string, std::string> originals_;
  std::map<std::string, ParsedValue> values_;
};

}  // namespace oxbow::connect
