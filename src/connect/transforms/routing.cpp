// The transforms that route, drop or re-head whole records (Filter, RegexRouter, InsertHeader,
// DropHeaders) and the predicates (TopicNameMatches, HasHeaderKey, RecordIsTombstone).
#include <charconv>
#include <limits>
#include <regex>
#include <set>

#include "connect/transforms/date_format.h"
#include "connect/transforms/registry.h"
#include "connect/transforms/transform_util.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::transforms {

namespace {

// A regex config compiled as ECMAScript (Kafka compiles Java's syntax); ConfigException as
// Kafka's RegexValidator reports a bad one.
std::regex compileRegex(const std::string& name, const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    throw ConfigException(name, pattern, std::string("Invalid regex: ") + error.what());
  }
}

// Drops every record; meant to be used with a predicate.
class Filter : public Transformation {
 public:
  void configure(const TransformConfig&) override {}
  std::optional<ConnectRecord> apply(const ConnectRecord&) override { return std::nullopt; }
};

class RegexRouter : public Transformation {
 public:
  void configure(const TransformConfig& config) override {
    regex_ = compileRegex("regex", requiredString(config, "regex"));
    replacement_ = requiredString(config, "replacement");
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    if (!std::regex_match(record.topic(), regex_)) return record;
    std::string topic = std::regex_replace(record.topic(), regex_, replacement_,
                                           std::regex_constants::format_first_only);
    return rebuild(record, std::move(topic), record.keySchema(), record.key(), record.valueSchema(),
                   record.value(), record.headers());
  }

 private:
  std::regex regex_;
  std::string replacement_;
};

// Replaces every occurrence of `from` in `text`.
void replaceAll(std::string& text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

class TimestampRouter : public Transformation {
 public:
  void configure(const TransformConfig& config) override {
    topicFormat_ = optionalString(config, "topic.format").value_or("${topic}-${timestamp}");
    std::string pattern = optionalString(config, "timestamp.format").value_or("yyyyMMdd");
    try {
      timestampFormat_.emplace(pattern);
    } catch (const std::invalid_argument& error) {
      throw ConfigException("timestamp.format", pattern, error.what());
    }
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    if (!record.timestamp()) {
      throw DataException("Timestamp missing on record: " + record.toString());
    }
    std::string topic = topicFormat_;
    replaceAll(topic, "${topic}", record.topic());
    replaceAll(topic, "${timestamp}", timestampFormat_->format(*record.timestamp()));
    return rebuild(record, std::move(topic), record.keySchema(), record.key(), record.valueSchema(),
                   record.value(), record.headers());
  }

 private:
  std::string topicFormat_;
  std::optional<UtcDateFormat> timestampFormat_;
};

// The part of Connect's Values.parseString InsertHeader needs: booleans, integers in the
// smallest type that holds them, anything else a string.
SchemaAndValue parseLiteral(const std::string& text) {
  if (text == "true" || text == "false") return {Schema::BOOLEAN_SCHEMA, Value(text == "true")};
  int64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size()) {
    if (number >= std::numeric_limits<int8_t>::min() &&
        number <= std::numeric_limits<int8_t>::max()) {
      return {Schema::INT8_SCHEMA, Value(static_cast<int8_t>(number))};
    }
    if (number >= std::numeric_limits<int16_t>::min() &&
        number <= std::numeric_limits<int16_t>::max()) {
      return {Schema::INT16_SCHEMA, Value(static_cast<int16_t>(number))};
    }
    if (number >= std::numeric_limits<int32_t>::min() &&
        number <= std::numeric_limits<int32_t>::max()) {
      return {Schema::INT32_SCHEMA, Value(static_cast<int32_t>(number))};
    }
    return {Schema::INT64_SCHEMA, Value(number)};
  }
  return {Schema::STRING_SCHEMA, Value(text)};
}

class InsertHeader : public Transformation {
 public:
  void configure(const TransformConfig& config) override {
    header_ = requiredString(config, "header");
    literal_ = parseLiteral(requiredString(config, "value.literal"));
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    Headers headers = record.headers();
    headers.add(header_, literal_);
    return rebuild(record, record.topic(), record.keySchema(), record.key(), record.valueSchema(),
                   record.value(), std::move(headers));
  }

 private:
  std::string header_;
  SchemaAndValue literal_;
};

class DropHeaders : public Transformation {
 public:
  void configure(const TransformConfig& config) override {
    std::vector<std::string> names = requiredNonEmptyList(config, "headers");
    names_ = std::set<std::string, std::less<>>(names.begin(), names.end());
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    Headers headers;
    for (const Header& header : record.headers()) {
      if (!names_.contains(header.key)) headers.add(header.key, header.schema, header.value);
    }
    return rebuild(record, record.topic(), record.keySchema(), record.key(), record.valueSchema(),
                   record.value(), std::move(headers));
  }

 private:
  std::set<std::string, std::less<>> names_;
};

// A required string that must not be empty (ConfigDef.NonEmptyString).
std::string requiredNonEmptyString(const TransformConfig& config, const std::string& name) {
  std::string value = requiredString(config, name);
  if (value.empty()) throw ConfigException(name, value, "String must be non-empty");
  return value;
}

class TopicNameMatches : public Predicate {
 public:
  void configure(const TransformConfig& config) override {
    pattern_ = compileRegex("pattern", requiredNonEmptyString(config, "pattern"));
  }
  bool test(const ConnectRecord& record) const override {
    return std::regex_match(record.topic(), pattern_);
  }

 private:
  std::regex pattern_;
};

class HasHeaderKey : public Predicate {
 public:
  void configure(const TransformConfig& config) override {
    name_ = requiredNonEmptyString(config, "name");
  }
  bool test(const ConnectRecord& record) const override {
    return record.headers().lastWithName(name_) != nullptr;
  }

 private:
  std::string name_;
};

class RecordIsTombstone : public Predicate {
 public:
  void configure(const TransformConfig&) override {}
  bool test(const ConnectRecord& record) const override { return record.value().isNull(); }
};

template <class T>
std::unique_ptr<Transformation> makeTransformation() {
  return std::make_unique<T>();
}

template <class T>
std::unique_ptr<Predicate> makePredicate() {
  return std::make_unique<T>();
}

}  // namespace

void registerRecordTransforms(TransformationTable& table) {
  table.emplace("Filter", makeTransformation<Filter>);
  table.emplace("RegexRouter", makeTransformation<RegexRouter>);
  table.emplace("TimestampRouter", makeTransformation<TimestampRouter>);
  table.emplace("InsertHeader", makeTransformation<InsertHeader>);
  table.emplace("DropHeaders", makeTransformation<DropHeaders>);
}

void registerPredicates(PredicateTable& table) {
  table.emplace("TopicNameMatches", makePredicate<TopicNameMatches>);
  table.emplace("HasHeaderKey", makePredicate<HasHeaderKey>);
  table.emplace("RecordIsTombstone", makePredicate<RecordIsTombstone>);
}

}  // namespace oxbow::connect::transforms
