// The transforms that route, drop or re-head whole records (Filter, RegexRouter, InsertHeader,
// DropHeaders) and the predicates (TopicNameMatches, HasHeaderKey, RecordIsTombstone).
#include <charconv>
#include <limits>
#include <memory>
#include <set>

#include <re2/re2.h>

#include "connect/transforms/date_format.h"
#include "connect/transforms/registry.h"
#include "connect/transforms/transform_util.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::transforms {

namespace {

// A regex config compiled by RE2, which reads Java's syntax but for back-references and
// look-around (refused as invalid); ConfigException as Kafka's RegexValidator reports a bad one.
// RE2 runs in linear time, so no topic name makes a match slow or deep.
std::shared_ptr<const RE2> compileRegex(const std::string& name, const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  auto regex = std::make_shared<const RE2>(pattern, options);
  if (!regex->ok()) throw ConfigException(name, pattern, "Invalid regex: " + regex->error());
  return regex;
}

// Java's Matcher replacement text (`$1` a group, `\$` a dollar, `\\` a backslash) as RE2's
// rewrite string (`\1` a group, `\\` a backslash).
std::string re2Rewrite(const std::string& java) {
  std::string out;
  for (size_t i = 0; i < java.size(); ++i) {
    char c = java[i];
    if (c == '\\' && i + 1 < java.size()) {
      char next = java[++i];
      if (next == '\\')
        out += "\\\\";
      else
        out += next;
    } else if (c == '$' && i + 1 < java.size() && java[i + 1] >= '0' && java[i + 1] <= '9') {
      out += '\\';
      out += java[++i];
    } else {
      out += c;
    }
  }
  return out;
}

// Drops every record; meant to be used with a predicate.
class Filter : public Transformation {
 public:
  void configure(const TransformConfig&) override {}
  std::optional<ConnectRecord> apply(const ConnectRecord&) override { return std::nullopt; }
};

class RegexRouter : public Transformation {
 public:
  ConfigDef config() const override {
    return ConfigDef()
        .define("regex", ConfigType::STRING, Importance::HIGH,
                "Regular expression the whole topic must match.")
        .define("replacement", ConfigType::STRING, Importance::HIGH,
                "The new topic; $1, $2... stand for the regex's groups.");
  }

  void configure(const TransformConfig& config) override {
    AbstractConfig values(this->config(), config);
    regex_ = compileRegex("regex", values.getString("regex"));
    const std::string& replacement = values.getString("replacement");
    replacement_ = re2Rewrite(replacement);
    // Kafka finds a group the regex lacks only when a record matches; said here once instead.
    std::string error;
    if (!regex_->CheckRewriteString(replacement_, &error))
      throw ConfigException("replacement", replacement, "Invalid replacement: " + error);
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    // As Kafka's: the whole topic must match, and is then replaced once.
    if (!RE2::FullMatch(record.topic(), *regex_)) return record;
    std::string topic = record.topic();
    RE2::Replace(&topic, *regex_, replacement_);
    return rebuild(record, std::move(topic), record.keySchema(), record.key(), record.valueSchema(),
                   record.value(), record.headers());
  }

 private:
  std::shared_ptr<const RE2> regex_;
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
  ConfigDef config() const override {
    return ConfigDef()
        .define("topic.format", ConfigType::STRING, "${topic}-${timestamp}", Importance::HIGH,
                "The new topic, where ${topic} and ${timestamp} stand for the record's topic and "
                "its formatted timestamp.")
        .define("timestamp.format", ConfigType::STRING, "yyyyMMdd", Importance::HIGH,
                "SimpleDateFormat pattern the timestamp is formatted with.");
  }

  void configure(const TransformConfig& config) override {
    AbstractConfig values(this->config(), config);
    topicFormat_ = values.getString("topic.format");
    const std::string& pattern = values.getString("timestamp.format");
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
  ConfigDef config() const override {
    return ConfigDef()
        .define("header", ConfigType::STRING, DefaultValue(), NonNullValidator::create(),
                Importance::HIGH, "Name of the header added.")
        .define("value.literal", ConfigType::STRING, DefaultValue(), NonNullValidator::create(),
                Importance::HIGH, "The header's value on every record, read as a literal.");
  }

  void configure(const TransformConfig& config) override {
    AbstractConfig values(this->config(), config);
    header_ = values.getString("header");
    literal_ = parseLiteral(values.getString("value.literal"));
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
  ConfigDef config() const override {
    return ConfigDef().define("headers", ConfigType::LIST, DefaultValue(),
                              NonEmptyListValidator::create(), Importance::HIGH,
                              "Names of the headers to remove.");
  }

  void configure(const TransformConfig& config) override {
    std::vector<std::string> names = AbstractConfig(this->config(), config).getList("headers");
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

class TopicNameMatches : public Predicate {
 public:
  ConfigDef config() const override {
    return ConfigDef().define("pattern", ConfigType::STRING, DefaultValue(),
                              NonEmptyString::create(), Importance::MEDIUM,
                              "Regular expression the whole topic must match.");
  }

  void configure(const TransformConfig& config) override {
    pattern_ = compileRegex("pattern", AbstractConfig(this->config(), config).getString("pattern"));
  }
  bool test(const ConnectRecord& record) const override {
    return RE2::FullMatch(record.topic(), *pattern_);
  }

 private:
  std::shared_ptr<const RE2> pattern_;
};

class HasHeaderKey : public Predicate {
 public:
  ConfigDef config() const override {
    return ConfigDef().define("name", ConfigType::STRING, DefaultValue(), NonEmptyString::create(),
                              Importance::MEDIUM, "Name of the header to look for.");
  }

  void configure(const TransformConfig& config) override {
    name_ = AbstractConfig(this->config(), config).getString("name");
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
