// ConfigDef: declaring configs, parsing and validating a config by them, embedding another
// definition under a prefix; AbstractConfig's typed access to the parsed values.
#include "oxbow/connect/config_def.h"

#include <algorithm>
#include <limits>
#include <set>

namespace oxbow::connect {

namespace {

std::string_view javaClassOf(const ParsedValue& value) {
  switch (value.index()) {
    case 1:
      return "java.lang.Boolean";
    case 2:
      return "java.lang.Short";
    case 3:
      return "java.lang.Integer";
    case 4:
      return "java.lang.Long";
    case 5:
      return "java.lang.Double";
    case 6:
      return "java.lang.String";
    case 7:
      return "java.util.List";
    default:
      return "org.apache.kafka.common.config.types.Password";
  }
}

// What Kafka's parseType says of a default that is not of the config's type.
std::string wrongTypeMessage(ConfigDef::Type type, const ParsedValue& value) {
  std::string found(javaClassOf(value));
  switch (type) {
    case ConfigDef::Type::BOOLEAN:
      return "Expected value to be either true or false";
    case ConfigDef::Type::STRING:
    case ConfigDef::Type::PASSWORD:
      return "Expected value to be a string, but it was a " + found;
    case ConfigDef::Type::INT:
      return "Expected value to be a 32-bit integer, but it was a " + found;
    case ConfigDef::Type::SHORT:
      return "Expected value to be a 16-bit integer (short), but it was a " + found;
    case ConfigDef::Type::LONG:
      return "Expected value to be a 64-bit integer (long), but it was a " + found;
    case ConfigDef::Type::DOUBLE:
      return "Expected value to be a double, but it was a " + found;
    case ConfigDef::Type::LIST:
      return "Expected a comma separated list.";
    case ConfigDef::Type::CLASS:
      return "Expected a Class instance or class name.";
  }
  return "";
}

template <class T>
std::optional<ParsedValue> narrowed(int64_t value) {
  if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) {
    return std::nullopt;
  }
  return static_cast<T>(value);
}

// A typed default as the config's type, when it is one (an integer fits an INT, SHORT, LONG or
// DOUBLE config).
std::optional<ParsedValue> asType(const ParsedValue& value, ConfigDef::Type type) {
  using Type = ConfigDef::Type;
  const auto* integer = std::get_if<int64_t>(&value);
  switch (type) {
    case Type::BOOLEAN:
      if (std::holds_alternative<bool>(value)) return value;
      break;
    case Type::INT:
      if (std::holds_alternative<int32_t>(value)) return value;
      if (integer) return narrowed<int32_t>(*integer);
      break;
    case Type::SHORT:
      if (std::holds_alternative<int16_t>(value)) return value;
      if (integer) return narrowed<int16_t>(*integer);
      break;
    case Type::LONG:
      if (integer) return value;
      break;
    case Type::DOUBLE:
      if (std::holds_alternative<double>(value)) return value;
      if (integer) return static_cast<double>(*integer);
      break;
    case Type::LIST:
      if (std::holds_alternative<std::vector<std::string>>(value)) return value;
      break;
    case Type::PASSWORD:
      if (std::holds_alternative<Password>(value)) return value;
      break;
    case Type::STRING:
    case Type::CLASS:
      break;
  }
  return std::nullopt;
}

ParsedValue parsedDefault(const std::string& name, const ParsedValue& value, ConfigDef::Type type) {
  if (std::holds_alternative<std::monostate>(value)) return value;
  if (const auto* text = std::get_if<std::string>(&value)) {
    return ConfigDef::parseType(name, *text, type);
  }
  if (std::optional<ParsedValue> typed = asType(value, type)) return *typed;
  throw ConfigException(name, toJavaString(value), wrongTypeMessage(type, value));
}

// The base validator seeing the name without the embedding's prefix.
class EmbeddedValidator : public Validator {
 public:
  EmbeddedValidator(std::string prefix, ValidatorPtr base)
      : prefix_(std::move(prefix)), base_(std::move(base)) {}
  void ensureValid(const std::string& name, const ParsedValue& value) const override {
    base_->ensureValid(name.substr(prefix_.size()), value);
  }
  std::string toString() const override { return base_->toString(); }

 private:
  std::string prefix_;
  ValidatorPtr base_;
};

// The base recommender seeing names and parsed values without the embedding's prefix.
class EmbeddedRecommender : public Recommender {
 public:
  EmbeddedRecommender(std::string prefix, RecommenderPtr base)
      : prefix_(std::move(prefix)), base_(std::move(base)) {}
  std::vector<ParsedValue> validValues(
      const std::string& name, const std::map<std::string, ParsedValue>& parsed) const override {
    return base_->validValues(name.substr(prefix_.size()), unprefixed(parsed));
  }
  bool visible(const std::string& name,
               const std::map<std::string, ParsedValue>& parsed) const override {
    return base_->visible(name.substr(prefix_.size()), unprefixed(parsed));
  }

 private:
  std::map<std::string, ParsedValue> unprefixed(
      const std::map<std::string, ParsedValue>& parsed) const {
    std::map<std::string, ParsedValue> found;
    for (const auto& [name, value] : parsed) {
      if (name.starts_with(prefix_)) found.emplace(name.substr(prefix_.size()), value);
    }
    return found;
  }
  std::string prefix_;
  RecommenderPtr base_;
};

std::string missingMessage(const std::string& name) {
  return "Missing required configuration \"" + name + "\" which has no default value.";
}

}  // namespace

const std::string* ConfigProps::find(const std::string& name) const {
  if (plain_) {
    auto found = plain_->find(name);
    return found == plain_->end() ? nullptr : &found->second;
  }
  auto found = transparent_->find(name);
  return found == transparent_->end() ? nullptr : &found->second;
}

std::map<std::string, std::string> ConfigProps::copy() const {
  if (plain_) return *plain_;
  return {transparent_->begin(), transparent_->end()};
}

ConfigDef& ConfigDef::define(ConfigKey key) {
  if (index_.contains(key.name)) {
    throw ConfigException("Configuration " + key.name + " is defined twice.");
  }
  if (key.displayName.empty()) key.displayName = key.name;
  if (key.hasDefault()) {
    key.defaultValue.value_ = parsedDefault(key.name, key.defaultValue.value_, key.type);
    if (key.validator) key.validator->ensureValid(key.name, key.defaultValue.value_);
  }
  if (key.group && std::find(groups_.begin(), groups_.end(), *key.group) == groups_.end()) {
    groups_.push_back(*key.group);
  }
  index_.emplace(key.name, keys_.size());
  keys_.push_back(std::move(key));
  return *this;
}

ConfigDef& ConfigDef::define(std::string name, Type type, DefaultValue defaultValue,
                             ValidatorPtr validator, Importance importance,
                             std::string documentation, std::optional<std::string> group,
                             int orderInGroup, Width width, std::string displayName,
                             std::vector<std::string> dependents, RecommenderPtr recommender) {
  return define(ConfigKey{std::move(name), type, std::move(defaultValue), std::move(validator),
                          importance, std::move(documentation), std::move(group), orderInGroup,
                          width, std::move(displayName), std::move(dependents),
                          std::move(recommender)});
}

ConfigDef& ConfigDef::define(std::string name, Type type, DefaultValue defaultValue,
                             ValidatorPtr validator, Importance importance,
                             std::string documentation) {
  return define(ConfigKey{.name = std::move(name),
                          .type = type,
                          .defaultValue = std::move(defaultValue),
                          .validator = std::move(validator),
                          .importance = importance,
                          .documentation = std::move(documentation)});
}

ConfigDef& ConfigDef::define(std::string name, Type type, DefaultValue defaultValue,
                             Importance importance, std::string documentation) {
  return define(std::move(name), type, std::move(defaultValue), nullptr, importance,
                std::move(documentation));
}

ConfigDef& ConfigDef::define(std::string name, Type type, Importance importance,
                             std::string documentation) {
  return define(std::move(name), type, DefaultValue(), nullptr, importance,
                std::move(documentation));
}

ConfigDef& ConfigDef::embed(const std::string& keyPrefix, const std::string& groupPrefix,
                            int startingOrd, const ConfigDef& child) {
  int order = startingOrd;
  for (const ConfigKey* key : child.sortedConfigs()) {
    ConfigKey embedded = *key;
    embedded.name = keyPrefix + key->name;
    if (key->validator) {
      embedded.validator = std::make_shared<EmbeddedValidator>(keyPrefix, key->validator);
    }
    if (key->recommender) {
      embedded.recommender = std::make_shared<EmbeddedRecommender>(keyPrefix, key->recommender);
    }
    embedded.group = groupPrefix + (key->group ? ": " + *key->group : "");
    embedded.orderInGroup = order++;
    for (std::string& dependent : embedded.dependents) dependent = keyPrefix + dependent;
    define(std::move(embedded));
  }
  return *this;
}

const ConfigDef::ConfigKey* ConfigDef::find(std::string_view name) const {
  auto found = index_.find(name);
  return found == index_.end() ? nullptr : &keys_[found->second];
}

std::vector<std::string> ConfigDef::names() const {
  std::vector<std::string> names;
  for (const ConfigKey& key : keys_) names.push_back(key.name);
  return names;
}

std::vector<const ConfigDef::ConfigKey*> ConfigDef::sortedConfigs() const {
  auto groupOrder = [this](const ConfigKey& key) {
    return std::find(groups_.begin(), groups_.end(), *key.group) - groups_.begin();
  };
  auto before = [&](const ConfigKey* a, const ConfigKey* b) {
    if (a->group.has_value() != b->group.has_value()) return !a->group.has_value();
    if (a->group && groupOrder(*a) != groupOrder(*b)) return groupOrder(*a) < groupOrder(*b);
    if (a->orderInGroup != b->orderInGroup) return a->orderInGroup < b->orderInGroup;
    if (a->hasDefault() != b->hasDefault()) return !a->hasDefault();
    if (a->importance != b->importance) return a->importance < b->importance;
    return a->name < b->name;
  };
  std::vector<const ConfigKey*> sorted;
  for (const ConfigKey& key : keys_) sorted.push_back(&key);
  std::stable_sort(sorted.begin(), sorted.end(), before);
  return sorted;
}

std::vector<std::string> ConfigDef::undefinedDependents() const {
  std::set<std::string> undefined;
  for (const ConfigKey& key : keys_) {
    for (const std::string& dependent : key.dependents) {
      if (!index_.contains(dependent)) undefined.insert(dependent);
    }
  }
  return {undefined.begin(), undefined.end()};
}

std::map<std::string, ParsedValue> ConfigDef::parse(ConfigProps props) const {
  std::vector<std::string> undefined = undefinedDependents();
  if (!undefined.empty()) {
    std::string joined;
    for (const std::string& name : undefined) joined += (joined.empty() ? "" : ",") + name;
    // Kafka's message, its missing word included.
    throw ConfigException(
        "Some configurations in are referred in the dependents, but not defined: " + joined);
  }
  std::map<std::string, ParsedValue> values;
  for (const ConfigKey& key : keys_) {
    ParsedValue value;
    if (const std::string* text = props.find(key.name)) {
      value = parseType(key.name, *text, key.type);
    } else if (!key.hasDefault()) {
      throw ConfigException(missingMessage(key.name));
    } else {
      value = key.defaultValue.value();
    }
    if (key.validator) key.validator->ensureValid(key.name, value);
    values.emplace(key.name, std::move(value));
  }
  return values;
}

std::vector<ConfigValue> ConfigDef::validate(ConfigProps props) const {
  std::vector<ConfigValue> results;
  std::map<std::string, ParsedValue> parsed;
  for (const ConfigKey& key : keys_) {
    ConfigValue result{.name = key.name};
    if (const std::string* text = props.find(key.name)) {
      try {
        result.value = parseType(key.name, *text, key.type);
      } catch (const ConfigException& error) {
        result.errorMessages.push_back(error.what());
      }
    } else if (!key.hasDefault()) {
      result.errorMessages.push_back(missingMessage(key.name));
    } else {
      result.value = key.defaultValue.value();
    }
    // As Kafka, the validator also sees the null a missing or unparsable value leaves.
    if (key.validator) {
      try {
        key.validator->ensureValid(key.name, result.value);
      } catch (const ConfigException& error) {
        result.errorMessages.push_back(error.what());
      }
    }
    parsed.emplace(key.name, result.value);
    results.push_back(std::move(result));
  }
  for (size_t i = 0; i < keys_.size(); ++i) {
    const ConfigKey& key = keys_[i];
    if (!key.recommender) continue;
    try {
      results[i].recommendedValues = key.recommender->validValues(key.name, parsed);
      results[i].visible = key.recommender->visible(key.name, parsed);
    } catch (const ConfigException& error) {
      results[i].errorMessages.push_back(error.what());
    }
  }
  for (const std::string& name : undefinedDependents()) {
    results.push_back(ConfigValue{.name = name,
                                  .errorMessages = {name + " is referred in the dependents, but "
                                                           "not defined."},
                                  .visible = false});
  }
  return results;
}

AbstractConfig::AbstractConfig(const ConfigDef& definition, ConfigProps originals)
    : originals_(originals.copy()), values_(definition.parse(originals)) {}

const ParsedValue& AbstractConfig::get(const std::string& name) const {
  auto found = values_.find(name);
  if (found == values_.end()) throw ConfigException("Unknown configuration '" + name + "'");
  return found->second;
}

template <class T>
const T& AbstractConfig::typed(const std::string& name, std::string_view typeName) const {
  const ParsedValue& value = get(name);
  if (const T* typedValue = std::get_if<T>(&value)) return *typedValue;
  if (std::holds_alternative<std::monostate>(value)) {
    throw ConfigException("Configuration '" + name + "' has no value");
  }
  throw ConfigException("Configuration '" + name + "' is not of type " + std::string(typeName));
}

bool AbstractConfig::getBoolean(const std::string& name) const {
  return typed<bool>(name, "BOOLEAN");
}
int16_t AbstractConfig::getShort(const std::string& name) const {
  return typed<int16_t>(name, "SHORT");
}
int32_t AbstractConfig::getInt(const std::string& name) const {
  return typed<int32_t>(name, "INT");
}
int64_t AbstractConfig::getLong(const std::string& name) const {
  return typed<int64_t>(name, "LONG");
}
double AbstractConfig::getDouble(const std::string& name) const {
  return typed<double>(name, "DOUBLE");
}
const std::string& AbstractConfig::getString(const std::string& name) const {
  return typed<std::string>(name, "STRING");
}
const std::string& AbstractConfig::getClass(const std::string& name) const {
  return typed<std::string>(name, "CLASS");
}
const std::vector<std::string>& AbstractConfig::getList(const std::string& name) const {
  return typed<std::vector<std::string>>(name, "LIST");
}
const Password& AbstractConfig::getPassword(const std::string& name) const {
  return typed<Password>(name, "PASSWORD");
}

std::optional<std::string> AbstractConfig::getOptionalString(const std::string& name) const {
  if (isNull(name)) return std::nullopt;
  return getString(name);
}

bool AbstractConfig::isNull(const std::string& name) const {
  return std::holds_alternative<std::monostate>(get(name));
}

std::map<std::string, std::string> AbstractConfig::originalsWithPrefix(const std::string& prefix,
                                                                       bool strip) const {
  std::map<std::string, std::string> found;
  for (auto it = originals_.lower_bound(prefix);
       it != originals_.end() && it->first.starts_with(prefix); ++it) {
    found.emplace(strip ? it->first.substr(prefix.size()) : it->first, it->second);
  }
  return found;
}

std::string AbstractConfig::toString() const {
  std::string text;
  for (const auto& [name, value] : values_)
    text += "\t" + name + " = " + toJavaString(value) + "\n";
  return text;
}

}  // namespace oxbow::connect
