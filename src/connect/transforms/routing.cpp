// The transforms that route, drop or re-head whole records (Filter, RegexRouter, InsertHeader,
// DropHeaders) and the predicates (TopicNameMatches, HasHeaderKey, RecordIsTombstone).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <limits>
#include <regex>
#include <set>

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

// A SimpleDateFormat pattern in UTC, for the letters a topic name uses: y (yy: two digits), M,
// d, H, m, s and S as numbers, text in single quotes ('' for a quote), other non-letters as they
// are.
class UtcDateFormat {
 public:
  explicit UtcDateFormat(const std::string& pattern) : pattern_(pattern) {
    for (size_t i = 0; i < pattern.size(); ++i) {
      char c = pattern[i];
      if (c == '\'') {
        size_t close = pattern.find('\'', i + 1);
        if (close == std::string::npos) throw std::invalid_argument("Unterminated quote");
        i = close;
      } else if (std::isalpha(static_cast<unsigned char>(c)) &&
                 std::string_view("yMdHmsS").find(c) == std::string_view::npos) {
        throw std::invalid_argument(std::string("Illegal pattern character '") + c + "'");
      }
    }
  }

  std::string format(int64_t epochMillis) const {
    using namespace std::chrono;
    sys_time<milliseconds> time{milliseconds(epochMillis)};
    sys_days day = floor<days>(time);
    year_month_day date(day);
    int64_t millisOfDay = (time - day).count();
    std::string out;
    for (size_t i = 0; i < pattern_.size();) {
      char c = pattern_[i];
      size_t run = pattern_.find_first_not_of(c, i);
      size_t count = (run == std::string::npos ? pattern_.size() : run) - i;
      if (c == '\'') {
        if (i + 1 < pattern_.size() && pattern_[i + 1] == '\'') {
          out += '\'';
          i += 2;
          continue;
        }
        size_t close = pattern_.find('\'', i + 1);
        out += pattern_.substr(i + 1, close - i - 1);
        i = close + 1;
        continue;
      }
      int64_t field = -1;
      switch (c) {
        case 'y':
          field = static_cast<int>(date.year());
          if (count == 2) field %= 100;
          break;
        case 'M':
          field = static_cast<unsigned>(date.month());
          break;
        case 'd':
          field = static_cast<unsigned>(date.day());
          break;
        case 'H':
          field = millisOfDay / 3600000;
          break;
        case 'm':
          field = millisOfDay / 60000 % 60;
          break;
        case 's':
          field = millisOfDay / 1000 % 60;
          break;
        case 'S':
          field = millisOfDay % 1000;
          break;
        default:
          out.append(count, c);
          i += count;
          continue;
      }
      std::string digits = std::to_string(field);
      if (digits.size() < count) out.append(count - digits.size(), '0');
      out += digits;
      i += count;
    }
    return out;
  }

 private:
  std::string pattern_;
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
