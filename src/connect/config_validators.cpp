// ConfigDef's validators with Kafka's messages and descriptions.
#include <algorithm>
#include <set>

#include "oxbow/connect/config_def.h"

namespace oxbow::connect {

namespace {

// The number in a numeric config's value, as Java's Number.doubleValue().
std::optional<double> doubleOf(const ParsedValue& value) {
  if (const auto* v = std::get_if<int16_t>(&value)) return *v;
  if (const auto* v = std::get_if<int32_t>(&value)) return *v;
  if (const auto* v = std::get_if<int64_t>(&value)) return static_cast<double>(*v);
  if (const auto* v = std::get_if<double>(&value)) return *v;
  return std::nullopt;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) text += separator;
    text += items[i];
  }
  return text;
}

const std::string* stringOf(const ParsedValue& value) {
  return std::get_if<std::string>(&value);
}

class RangeValidator : public Validator {
 public:
  RangeValidator(std::optional<Number> min, std::optional<Number> max) : min_(min), max_(max) {}
  void ensureValid(const std::string& name, const ParsedValue& value) const override {
    std::optional<double> number = doubleOf(value);
    if (!number) throw ConfigException(name, toJavaString(value), "Value must be non-null");
    if (min_ && *number < min_->doubleValue()) {
      throw ConfigException(name, toJavaString(value),
                            "Value must be at least " + min_->toString());
    }
    if (max_ && *number > max_->doubleValue()) {
      throw ConfigException(name, toJavaString(value),
                            "Value must be no more than " + max_->toString());
    }
  }
  std::string toString() const override {
    if (!max_) return "[" + min_->toString() + ",...]";
    return "[" + min_->toString() + ",...," + max_->toString() + "]";
  }

 private:
  std::optional<Number> min_;
  std::optional<Number> max_;
};

class ValidStringValidator : public Validator {
 public:
  explicit ValidStringValidator(std::vector<std::string> valid) : valid_(std::move(valid)) {}
  void ensureValid(const std::string& name, const ParsedValue& value) const override {
    const std::string* text = stringOf(value);
    if (!text || std::find(valid_.begin(), valid_.end(), *text) == valid_.end()) {
      throw ConfigException(name, toJavaString(value),
                            "String must be one of: " + join(valid_, ", "));
    }
  }
  std::string toString() const override { return "[" + join(valid_, ", ") + "]"; }
  bool empty() const { return valid_.empty(); }

 private:
  std::vector<std::string> valid_;
};

std::string upper(std::string text) {
  for (char& c : text) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return text;
}

// The strings in the order a java.util.HashSet built from them iterates: Kafka's message lists
// CaseInsensitiveValidString's values that way. Buckets by String.hashCode spread as HashMap
// spreads it, in a table of the capacity the set grows to; a bucket keeps insertion order.
std::vector<std::string> javaHashSetOrder(const std::vector<std::string>& items) {
  std::vector<std::string> distinct;
  for (const std::string& item : items) {
    if (std::find(distinct.begin(), distinct.end(), item) == distinct.end()) {
      distinct.push_back(item);
    }
  }
  uint32_t capacity = 16;
  while (distinct.size() > capacity * 3 / 4) capacity *= 2;
  auto bucket = [capacity](const std::string& text) {
    uint32_t hash = 0;
    for (unsigned char c : text) hash = hash * 31 + c;
    return (hash ^ (hash >> 16)) & (capacity - 1);
  };
  std::stable_sort(
      distinct.begin(), distinct.end(),
      [&](const std::string& a, const std::string& b) { return bucket(a) < bucket(b); });
  return distinct;
}

class CaseInsensitiveValidator : public Validator {
 public:
  explicit CaseInsensitiveValidator(const std::vector<std::string>& valid) {
    std::vector<std::string> uppered;
    for (const std::string& text : valid) uppered.push_back(upper(text));
    valid_ = javaHashSetOrder(uppered);
  }
  void ensureValid(const std::string& name, const ParsedValue& value) const override {
    const std::string* text = stringOf(value);
    if (!text || std::find(valid_.begin(), valid_.end(), upper(*text)) == valid_.end()) {
      throw ConfigException(name, toJavaString(value),
                            "String must be one of (case insensitive): " + join(valid_, ", "));
    }
  }
  std::string toString() const override {
    return "(case insensitive) [" + join(valid_, ", ") + "]";
  }

 private:
  std::vector<std::string> valid_;
};

class ValidListValidator : public Validator {
 public:
  ValidListValidator(std::vector<std::string> valid, bool emptyAllowed, bool nullAllowed)
      : valid_(std::move(valid)), emptyAllowed_(emptyAllowed), nullAllowed_(nullAllowed) {}
  void ensureValid(const std::string& name, const ParsedValue& value) const override {
    const auto* list = std::get_if<std::vector<std::string>>(&value);
    if (!list) {
      if (nullAllowed_) return;
      throw ConfigException("Configuration '" + name + "' values must not be null.");
    }
    if (!emptyAllowed_ && list->empty()) {
      throw ConfigException("Configuration '" + name +
                            "' must not be empty. Valid values include: " +
                            (valid_.empty() ? "any non-empty value" : valid_.toString()));
    }
    if (std::set<std::string>(list->begin(), list->end()).size() != list->size()) {
      throw ConfigException("Configuration '" + name + "' values must not be duplicated.");
    }
    for (const std::string& item : *list) {
      if (item.empty())
        throw ConfigException("Configuration '" + name + "' values must not be empty.");
      if (!valid_.empty()) valid_.ensureValid(name, item);
    }
  }
  std::string toString() const override { return valid_.empty() ? "" : valid_.toString(); }

 private:
  ValidStringValidator valid_;
  bool emptyAllowed_;
  bool nullAllowed_;
};

// A validator made of a check and a description.
class FunctionValidator : public Validator {
 public:
  FunctionValidator(std::function<void(const std::string&, const ParsedValue&)> check,
                    std::function<std::string()> describe)
      : check_(std::move(check)), describe_(std::move(describe)) {}
  void ensureValid(const std::string& name, const ParsedValue& value) const override {
    check_(name, value);
  }
  std::string toString() const override { return describe_ ? describe_() : ""; }

 private:
  std::function<void(const std::string&, const ParsedValue&)> check_;
  std::function<std::string()> describe_;
};

}  // namespace

ValidatorPtr Range::atLeast(Number min) {
  return std::make_shared<RangeValidator>(min, std::nullopt);
}

ValidatorPtr Range::between(Number min, Number max) {
  return std::make_shared<RangeValidator>(min, max);
}

ValidatorPtr ValidString::in(std::vector<std::string> validStrings) {
  return std::make_shared<ValidStringValidator>(std::move(validStrings));
}

ValidatorPtr CaseInsensitiveValidString::in(std::vector<std::string> validStrings) {
  return std::make_shared<CaseInsensitiveValidator>(validStrings);
}

ValidatorPtr ValidList::in(std::vector<std::string> validStrings) {
  return std::make_shared<ValidListValidator>(std::move(validStrings), true, false);
}

ValidatorPtr ValidList::in(bool isEmptyAllowed, std::vector<std::string> validStrings) {
  if (!isEmptyAllowed && validStrings.empty()) {
    throw std::invalid_argument(
        "At least one valid string must be provided when empty values are not allowed");
  }
  return std::make_shared<ValidListValidator>(std::move(validStrings), isEmptyAllowed, false);
}

ValidatorPtr ValidList::anyNonDuplicateValues(bool isEmptyAllowed, bool isNullAllowed) {
  return std::make_shared<ValidListValidator>(std::vector<std::string>{}, isEmptyAllowed,
                                              isNullAllowed);
}

ValidatorPtr NonEmptyString::create() {
  return LambdaValidator::with(
      [](const std::string& name, const ParsedValue& value) {
        const std::string* text = stringOf(value);
        if (text && text->empty()) throw ConfigException(name, "", "String must be non-empty");
      },
      [] { return std::string("non-empty string"); });
}

ValidatorPtr NonNullValidator::create() {
  return LambdaValidator::with(
      [](const std::string& name, const ParsedValue& value) {
        if (std::holds_alternative<std::monostate>(value)) {
          throw ConfigException(name, "null", "entry must be non null");
        }
      },
      [] { return std::string("non-null string"); });
}

ValidatorPtr NonEmptyListValidator::create() {
  return LambdaValidator::with(
      [](const std::string& name, const ParsedValue& value) {
        const auto* list = std::get_if<std::vector<std::string>>(&value);
        if (!list || list->empty()) throw ConfigException(name, toJavaString(value), "Empty list");
      },
      [] { return std::string("non-empty list"); });
}

ValidatorPtr CompositeValidator::of(std::vector<ValidatorPtr> validators) {
  return LambdaValidator::with(
      [validators](const std::string& name, const ParsedValue& value) {
        for (const ValidatorPtr& validator : validators) validator->ensureValid(name, value);
      },
      [validators] {
        std::string text;
        for (const ValidatorPtr& validator : validators) {
          if (!text.empty()) text += ", ";
          text += validator->toString();
        }
        return text;
      });
}

ValidatorPtr LambdaValidator::with(
    std::function<void(const std::string&, const ParsedValue&)> ensureValid,
    std::function<std::string()> toString) {
  return std::make_shared<FunctionValidator>(std::move(ensureValid), std::move(toString));
}

ValidatorPtr ValidClass::of(std::function<bool(const std::string&)> known) {
  return LambdaValidator::with(
      [known = std::move(known)](const std::string& name, const ParsedValue& value) {
        const std::string* className = stringOf(value);
        if (className && !known(*className)) {
          throw ConfigException(name, *className, "Class " + *className + " could not be found.");
        }
      },
      nullptr);
}

}  // namespace oxbow::connect
