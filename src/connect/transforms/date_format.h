#pragma once
// The part of Java's SimpleDateFormat the transforms need, in UTC: the numeric letters y (yy: two
// digits), M, d, H, m, s and S, z as "UTC" (GMT read too), text in single quotes ('' for a quote)
// and other non-letters as they are. Formats a time and parses one back.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oxbow::connect::transforms {

class UtcDateFormat {
 public:
  // std::invalid_argument ("Illegal pattern character 'Q'", "Unterminated quote") for a pattern
  // with anything else.
  explicit UtcDateFormat(const std::string& pattern);

  const std::string& pattern() const { return pattern_; }
  std::string format(int64_t epochMillis) const;
  // Milliseconds since the epoch, fields the pattern lacks taken from 1970-01-01T00:00:00.000,
  // out-of-range fields rolled over (SimpleDateFormat is lenient) and text after the pattern
  // ignored, as DateFormat.parse does; nullopt when the text does not match.
  std::optional<int64_t> parse(const std::string& text) const;

 private:
  struct Token {
    char letter = 0;  // 0 for literal text
    size_t count = 0;
    std::string text;
  };
  std::string pattern_;
  std::vector<Token> tokens_;
};

}  // namespace oxbow::connect::transforms
