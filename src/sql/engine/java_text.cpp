// PRINT's tests of whether bytes are text and JSON, as ksqlDB makes them in Java: a String decoded
// from UTF-8 (bad sequences become U+FFFD, which ksqlDB then refuses) and Jackson's tree reader
// with its default features (strict JSON, the first value only, trailing text ignored unless it
// runs into a number or a literal).
#include <cctype>
#include <cstdint>

#include "sql/engine/topic_output.h"

namespace oxbow::sql {

namespace {

// The length of the well-formed UTF-8 sequence at `i` (Unicode's table 3-7), or 0.
size_t utf8_sequence(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned { return k < s.size() ? (unsigned char)s[k] : 0x100; };
  unsigned c = at(i);
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return at(k) >= lo && at(k) <= hi;
  };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

class JsonChecker {
 public:
  explicit JsonChecker(std::string_view text) : s_(text) {}

  bool document() {
    skip_space();
    if (i_ == s_.size()) return true;  // Jackson reads no content as a missing node
    char first = s_[i_];
    if (!value()) return false;
    // A root-level number must end at white space; a literal at a non-identifier character.
    if (first == '-' || (first >= '0' && first <= '9')) return i_ == s_.size() || space(s_[i_]);
    return true;
  }

 private:
  static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  void skip_space() {
    while (i_ < s_.size() && space(s_[i_])) ++i_;
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  bool value() {
    if (++depth_ > 1000) return false;
    skip_space();
    if (i_ == s_.size()) return false;
    bool ok = false;
    switch (s_[i_]) {
      case '{':
        ok = container('}', true);
        break;
      case '[':
        ok = container(']', false);
        break;
      case '"':
        ok = string();
        break;
      case 't':
        ok = literal("true");
        break;
      case 'f':
        ok = literal("false");
        break;
      case 'n':
        ok = literal("null");
        break;
      default:
        ok = number();
    }
    --depth_;
    return ok;
  }

  bool container(char close, bool object) {
    ++i_;
    if (eat(close)) return true;
    do {
      if (object) {
        skip_space();
        if (!string() || !eat(':')) return false;
      }
      if (!value()) return false;
    } while (eat(','));
    return eat(close);
  }

  bool string() {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      unsigned char c = s_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c != '\\') continue;
      if (++i_ >= s_.size()) return false;
      char e = s_[i_];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k)
          if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }

  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    if (i_ == s_.size()) return true;
    unsigned char next = s_[i_];
    return !(std::isalnum(next) || next == '_' || next == '$' || next >= 0x80);
  }

  bool number() {
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !digit(s_[i_])) return false;
    if (s_[i_] == '0' && i_ + 1 < s_.size() && digit(s_[i_ + 1])) return false;  // leading zero
    while (i_ < s_.size() && digit(s_[i_])) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      if (++i_ >= s_.size() || !digit(s_[i_])) return false;
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !digit(s_[i_])) return false;
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    }
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

bool is_java_text(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    size_t n = utf8_sequence(bytes, i);
    if (n == 0 || bytes.substr(i, n) == "\xEF\xBF\xBD") return false;
    i += n;
  }
  return true;
}

bool is_jackson_json(std::string_view text) {
  return JsonChecker(text).document();
}

}  // namespace oxbow::sql
