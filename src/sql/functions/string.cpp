// String functions (docs/sql/ksqldb-facts.md §5.3 "Strings"). Positions and lengths count
// characters as Java does (ksqlDB's strings are Java's); text is UTF-8 here, so text that is not
// ASCII is worked on as code points.
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// The characters [from, to) of `s`, counted as ksqlDB counts them.
std::string_view chars(std::string_view s, int64_t from, int64_t to, std::string& buffer) {
  if (is_ascii(s)) return s.substr(static_cast<size_t>(from), static_cast<size_t>(to - from));
  auto points = code_points(s);
  buffer.clear();
  for (int64_t k = from; k < to && k < static_cast<int64_t>(points.size()); ++k)
    append_utf8(buffer, points[static_cast<size_t>(k)]);
  return buffer;
}

int64_t char_count(std::string_view s) {
  return is_ascii(s) ? static_cast<int64_t>(s.size()) : static_cast<int64_t>(code_points(s).size());
}

int upper(int c) {
  return std::toupper(c);
}
int lower(int c) {
  return std::tolower(c);
}

// Case mapping of ASCII letters; other characters are kept (see docs/sql/engine.md).
template <int (*Map)(int)>
void map_ascii(FunctionCall& call) {
  std::string& s = scratch();
  s = call[0].text();
  for (char& c : s) c = static_cast<char>(Map(static_cast<unsigned char>(c)));
  set_string(call.out(), s);
}

void trim(FunctionCall& call) {
  // Java's String.trim: every character up to the space, at both ends.
  std::string_view s = call[0].text();
  size_t b = 0, e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= ' ') ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= ' ') --e;
  set_string(call.out(), s.substr(b, e - b));
}

void len(FunctionCall& call) {
  const Value& v = call[0];
  call.out().set_integer(v.kind() == Kind::kBytes ? static_cast<int32_t>(v.text().size())
                                                  : java_length(v.text()));
}

void concat(FunctionCall& call) {
  std::string& s = scratch();
  for (size_t k = 0; k < call.size(); ++k)
    if (!call[k].is_null()) s += call[k].text();
  bool bytes = call.result_type() && call.result_type()->base() == SqlBaseType::kBytes;
  bytes ? set_bytes(call.out(), s) : set_string(call.out(), s);
}

void concat_ws(FunctionCall& call) {
  if (call.size() < 2) return call.fail("Function Concat_WS expects at least two input arguments.");
  if (call[0].is_null()) return call.out().set_null();
  std::string& s = scratch();
  bool first = true;
  for (size_t k = 1; k < call.size(); ++k) {
    if (call[k].is_null()) continue;
    if (!first) s += call[0].text();
    s += call[k].text();
    first = false;
  }
  bool bytes = call.result_type() && call.result_type()->base() == SqlBaseType::kBytes;
  bytes ? set_bytes(call.out(), s) : set_string(call.out(), s);
}

void substring(FunctionCall& call) {
  // From 1; a negative start counts from the end; both ends clamped to the value.
  std::string_view s = call[0].text();
  bool bytes = call[0].kind() == Kind::kBytes;
  int64_t size = bytes ? static_cast<int64_t>(s.size()) : char_count(s);
  int64_t pos = call[1].as_int64();
  int64_t start = pos < 0 ? std::max<int64_t>(size + pos, 0)
                          : std::max<int64_t>(std::min<int64_t>(pos - 1, size), 0);
  int64_t end =
      call.size() > 2 ? std::max(std::min(start + call[2].as_int64(), size), start) : size;
  if (bytes)
    return set_bytes(call.out(),
                     s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start)));
  std::string& buffer = scratch();
  set_string(call.out(), chars(s, start, end, buffer));
}

void chr(FunctionCall& call) {
  std::string& s = scratch();
  if (call[0].kind() == Kind::kInteger) {
    int32_t c = call[0].integer();
    if (c < 0 || c > 0x10FFFF) return call.out().set_null();
    append_utf8(s, static_cast<char32_t>(c));
    return set_string(call.out(), s);
  }
  // '\uXXXX', possibly a surrogate pair '\uD83D\uDE00'.
  const std::string& code = call[0].text();
  if (code.size() < 6 || code.compare(0, 2, "\\u") != 0) return call.out().set_null();
  std::vector<char32_t> units;
  for (size_t i = 0; i + 6 <= code.size() && code.compare(i, 2, "\\u") == 0; i += 6)
    units.push_back(static_cast<char32_t>(std::stoul(code.substr(i + 2, 4), nullptr, 16)));
  for (size_t i = 0; i < units.size(); ++i) {
    char32_t u = units[i];
    if (u >= 0xD800 && u < 0xDC00 && i + 1 < units.size())
      u = 0x10000 + ((u - 0xD800) << 10) + (units[++i] - 0xDC00);
    append_utf8(s, u);
  }
  set_string(call.out(), s);
}

void elt(FunctionCall& call) {
  if (call[0].is_null()) return call.out().set_null();
  int64_t n = call[0].as_int64();
  if (n < 1 || n >= static_cast<int64_t>(call.size())) return call.out().set_null();
  call.out() = call[static_cast<size_t>(n)];
}

void field(FunctionCall& call) {
  int32_t found = 0;
  if (!call[0].is_null())
    for (size_t k = 1; k < call.size() && !found; ++k)
      if (!call[k].is_null() && call[k].text() == call[0].text()) found = static_cast<int32_t>(k);
  call.out().set_integer(found);
}

void initcap(FunctionCall& call) {
  std::string& s = scratch();
  s = call[0].text();
  bool start = true;
  for (char& c : s) {
    auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
    start = std::isspace(u) != 0;
  }
  set_string(call.out(), s);
}

// Oracle's INSTR: the position of the occurrence-th `sub` from `position` (from the end when
// negative), 0 when there is none.
void instr(FunctionCall& call) {
  if (call[0].is_null() || call[1].is_null()) return call.out().set_integer(0);
  for (size_t k = 2; k < call.size(); ++k)
    if (call[k].is_null()) return call.out().set_null();
  std::string s = call[0].text(), sub = call[1].text();
  int64_t position = call.size() > 2 ? call[2].as_int64() : 1;
  int64_t occurrence = call.size() > 3 ? call[3].as_int64() : 1;
  int64_t size = static_cast<int64_t>(s.size());
  if (std::abs(position) > size || position == 0 || occurrence < 1)
    return call.out().set_integer(0);
  bool reversed = position < 0;
  if (reversed) {
    std::reverse(s.begin(), s.end());
    std::reverse(sub.begin(), sub.end());
    position = -position;
  }
  size_t at = static_cast<size_t>(position - 1);
  for (int64_t n = 0; n < occurrence; ++n) {
    at = s.find(sub, n == 0 ? at : at + 1);
    if (at == std::string::npos) return call.out().set_integer(0);
  }
  int64_t found = static_cast<int64_t>(at);
  int64_t result = reversed ? size - found - static_cast<int64_t>(sub.size()) + 1 : found + 1;
  call.out().set_integer(static_cast<int32_t>(result));
}

// LPAD and RPAD: the input cut or padded to `length` characters with the padding repeated.
template <bool Left>
void pad(FunctionCall& call) {
  int64_t length = call[1].as_int64();
  std::string_view padding = call[2].text();
  if (padding.empty() || length < 0) return call.out().set_null();
  if (call[0].kind() == Kind::kBytes || is_ascii(call[0].text())) {
    std::string_view in = call[0].text();
    std::string& s = scratch();
    size_t target = static_cast<size_t>(length), fill = target > in.size() ? target - in.size() : 0;
    if (!Left) s.append(in.substr(0, target));
    for (size_t k = 0; k < fill; ++k) s += padding[k % padding.size()];
    if (Left) s.append(in.substr(0, target));
    if (call[0].kind() == Kind::kBytes) return set_bytes(call.out(), s);
    return set_string(call.out(), s);
  }
  auto in = code_points(call[0].text()), with = code_points(padding);
  std::vector<char32_t> result;
  size_t target = static_cast<size_t>(length), fill = target > in.size() ? target - in.size() : 0;
  if (!Left) result.assign(in.begin(), in.begin() + static_cast<long>(std::min(target, in.size())));
  for (size_t k = 0; k < fill; ++k) result.push_back(with[k % with.size()]);
  if (Left)
    result.insert(result.end(), in.begin(),
                  in.begin() + static_cast<long>(std::min(target, in.size())));
  std::string& s = scratch();
  for (char32_t c : result) append_utf8(s, c);
  set_string(call.out(), s);
}

// MASK and its four partial forms: upper-case letters, lower-case, digits and others each
// replaced by its mask character (X, x, n, - unless given; a NULL mask keeps the character).
struct Masks {
  int upper = 'X', lower = 'x', digit = 'n', other = '-';
};
constexpr int kKeep = -1;

bool read_masks(FunctionCall& call, size_t first, Masks& m) {
  if (call.size() <= first) return true;
  int* slots[] = {&m.upper, &m.lower, &m.digit, &m.other};
  for (size_t k = 0; k < 4; ++k) {
    const Value& v = call[first + k];
    if (v.is_null()) {
      *slots[k] = kKeep;
      continue;
    }
    auto points = code_points(v.text());
    if (points.size() != 1) {
      call.fail("Invalid mask character. Must be only single character, but was '" + v.text() +
                "'");
      return false;
    }
    *slots[k] = static_cast<int>(points[0]);
  }
  return true;
}

char32_t mask_char(char32_t c, const Masks& m) {
  int by = c < 0x80 && std::isupper(static_cast<int>(c))   ? m.upper
           : c < 0x80 && std::islower(static_cast<int>(c)) ? m.lower
           : c < 0x80 && std::isdigit(static_cast<int>(c)) ? m.digit
                                                           : m.other;
  return by == kKeep ? c : static_cast<char32_t>(by);
}

// Masks all of the first argument, or all but (`keep`) or only its first or last n characters.
void mask_range(FunctionCall& call, const char* name, bool keep, bool from_right) {
  bool whole = std::string_view(name) == "mask";
  if (!whole && call[1].is_null()) return call.out().set_null();
  int64_t n = whole ? 0 : call[1].as_int64();
  if (!whole && n < 0)
    return call.fail(std::string("function ") + name +
                     " requires a non-negative number of characters to mask or skip");
  Masks m;
  if (!read_masks(call, whole ? 1 : 2, m)) return;
  if (call[0].is_null()) return call.out().set_null();
  auto points = code_points(call[0].text());
  int64_t size = static_cast<int64_t>(points.size()), count = std::min(n, size);
  // Masked: [lo, hi).
  int64_t lo = 0, hi = size;
  if (!whole && keep) (from_right ? hi : lo) = from_right ? size - count : count;
  if (!whole && !keep) (from_right ? lo : hi) = from_right ? size - count : count;
  std::string& s = scratch();
  for (int64_t k = 0; k < size; ++k)
    append_utf8(s, k >= lo && k < hi ? mask_char(points[static_cast<size_t>(k)], m)
                                     : points[static_cast<size_t>(k)]);
  set_string(call.out(), s);
}

void mask(FunctionCall& call) {
  mask_range(call, "mask", false, false);
}
void mask_keep_left(FunctionCall& call) {
  mask_range(call, "mask_keep_left", true, false);
}
void mask_keep_right(FunctionCall& call) {
  mask_range(call, "mask_keep_right", true, true);
}
void mask_left(FunctionCall& call) {
  mask_range(call, "mask_left", false, false);
}
void mask_right(FunctionCall& call) {
  mask_range(call, "mask_right", false, true);
}

void md5(FunctionCall& call) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  const std::string& s = call[0].text();
  EVP_Digest(s.data(), s.size(), digest, &size, EVP_md5(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string& out = scratch();
  for (unsigned int k = 0; k < size; ++k) out += kHex[digest[k] >> 4], out += kHex[digest[k] & 15];
  set_string(call.out(), out);
}

// Java's String.replace: every occurrence, left to right; an empty target matches between
// every two characters and at both ends.
void replace(FunctionCall& call) {
  const std::string &s = call[0].text(), &from = call[1].text(), &to = call[2].text();
  std::string& out = scratch();
  if (from.empty()) {
    auto points = code_points(s);
    out += to;
    for (char32_t c : points) append_utf8(out, c), out += to;
    return set_string(call.out(), out);
  }
  size_t at = 0;
  for (size_t hit; (hit = s.find(from, at)) != std::string::npos; at = hit + from.size())
    out.append(s, at, hit - at).append(to);
  out.append(s, at);
  set_string(call.out(), out);
}

// SPLIT: around every occurrence of the delimiter (an empty one splits every character).
void split(FunctionCall& call) {
  const std::string &s = call[0].text(), &delimiter = call[1].text();
  Kind kind = call[0].kind();
  std::vector<Value> parts;
  auto add = [&](std::string_view part) {
    Value v;
    v.set_text(kind, part.data(), part.size());
    parts.push_back(std::move(v));
  };
  if (delimiter.empty()) {
    if (kind == Kind::kBytes) {
      for (char c : s) add(std::string_view(&c, 1));
    } else {
      for (char32_t c : code_points(s)) {
        std::string one;
        append_utf8(one, c);
        add(one);
      }
    }
    if (s.empty()) add("");
  } else {
    size_t at = 0;
    for (size_t hit; (hit = s.find(delimiter, at)) != std::string::npos;
         at = hit + delimiter.size())
      add(std::string_view(s).substr(at, hit - at));
    add(std::string_view(s).substr(at));
  }
  set_items(call.out(), Kind::kArray, std::move(parts));
}

void split_to_map(FunctionCall& call) {
  const std::string &s = call[0].text(), &entry = call[1].text(), &kv = call[2].text();
  if (entry.empty() || kv.empty() || entry == kv) return call.out().set_null();
  std::vector<Value> items;
  auto add = [&](std::string_view pair) {
    size_t at = pair.find(kv);
    if (pair.empty() || at == std::string_view::npos) return;
    std::string_view key = pair.substr(0, at), rest = pair.substr(at + kv.size());
    std::string_view value = rest.substr(0, rest.find(kv));
    for (size_t k = 0; k < items.size(); k += 2)
      if (items[k].text() == key) return set_string(items[k + 1], value);  // the last wins
    items.push_back(string_value(key));
    items.push_back(string_value(value));
  };
  size_t at = 0;
  for (size_t hit; (hit = s.find(entry, at)) != std::string::npos; at = hit + entry.size())
    add(std::string_view(s).substr(at, hit - at));
  add(std::string_view(s).substr(at));
  set_items(call.out(), Kind::kMap, std::move(items));
}

std::string uuid_text(const unsigned char* b) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (int k = 0; k < 16; ++k) {
    if (k == 4 || k == 6 || k == 8 || k == 10) out += '-';
    out += kHex[b[k] >> 4], out += kHex[b[k] & 15];
  }
  return out;
}

void uuid(FunctionCall& call) {
  unsigned char b[16];
  if (call.size() == 1) {
    if (call[0].text().size() != 16) return call.out().set_null();
    std::copy_n(call[0].text().data(), 16, b);
  } else {
    thread_local std::mt19937_64 random{std::random_device{}()};
    for (int k = 0; k < 16; k += 8) {
      uint64_t r = random();
      for (int j = 0; j < 8; ++j) b[k + j] = static_cast<unsigned char>(r >> (8 * j));
    }
    b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);  // version 4
    b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // IETF variant
  }
  set_string(call.out(), uuid_text(b));
}

FunctionVariant masked(const char* params, ScalarImplementation f) {
  FunctionVariant v = signature(params, "VARCHAR", f);
  v.sees_nulls = true;  // a NULL mask keeps its characters
  return v;
}

}  // namespace

void add_string_functions(std::vector<FunctionInfo>& out) {
  out.push_back(scalar("UCASE", kString, "The string in upper case.",
                       {signature("input VARCHAR", "VARCHAR", map_ascii<upper>)}));
  out.push_back(scalar("LCASE", kString, "The string in lower case.",
                       {signature("input VARCHAR", "VARCHAR", map_ascii<lower>)}));
  out.push_back(scalar("TRIM", kString, "The string without its leading and trailing spaces.",
                       {signature("input VARCHAR", "VARCHAR", trim)}));
  out.push_back(
      scalar("LEN", kString, "The length of a string (characters) or bytes.",
             {signature("input VARCHAR", "INT", len), signature("input BYTES", "INT", len)}));
  out.push_back(scalar_seeing_nulls("CONCAT", kString,
                                    "Joins strings or bytes end to end; NULL ones count as empty.",
                                    {signature("inputs VARCHAR...", "VARCHAR", concat),
                                     signature("inputs BYTES...", "BYTES", concat)}));
  out.push_back(scalar_seeing_nulls(
      "CONCAT_WS", kString,
      "Joins the values after the first with the first between them, skipping NULLs; NULL when "
      "the separator is NULL.",
      {signature("separator VARCHAR, inputs VARCHAR...", "VARCHAR", concat_ws),
       signature("separator BYTES, inputs BYTES...", "BYTES", concat_ws)}));
  out.push_back(scalar(
      "SUBSTRING", kString,
      "Part of a string or bytes from a position (1-based, negative from the end), to the end or "
      "for a length.",
      {signature("str VARCHAR, pos INT", "VARCHAR", substring),
       signature("str VARCHAR, pos INT, length INT", "VARCHAR", substring),
       signature("bytes BYTES, pos INT", "BYTES", substring),
       signature("bytes BYTES, pos INT, length INT", "BYTES", substring)}));
  out.push_back(scalar("CHR", kString,
                       "The character of a decimal code point or of a '\\uXXXX' escape.",
                       {signature("decimalCode INT", "VARCHAR", chr),
                        signature("utf16Code VARCHAR", "VARCHAR", chr)}));
  out.push_back(scalar_seeing_nulls(
      "ELT", kString, "The n-th of the following strings (1-based), NULL out of range.",
      {signature("n INT, args VARCHAR...", "VARCHAR", elt)}));
  out.push_back(scalar_seeing_nulls(
      "FIELD", kString,
      "The position (1-based) of the first string among the others, 0 when absent or NULL.",
      {signature("str VARCHAR, args VARCHAR...", "INT", field)}));
  out.push_back(scalar("INITCAP", kString,
                       "Each whitespace-separated word with its first letter in upper case and "
                       "the rest in lower case.",
                       {signature("str VARCHAR", "VARCHAR", initcap)}));
  out.push_back(scalar_seeing_nulls(
      "INSTR", kString,
      "The position (1-based) of the n-th occurrence of a substring from a position (from the "
      "end when negative), 0 when there is none.",
      {signature("str VARCHAR, substring VARCHAR", "INT", instr),
       signature("str VARCHAR, substring VARCHAR, position INT", "INT", instr),
       signature("str VARCHAR, substring VARCHAR, position INT, occurrence INT", "INT", instr)}));
  for (auto [name, f] : {std::pair<const char*, ScalarImplementation>{"LPAD", pad<true>},
                         std::pair<const char*, ScalarImplementation>{"RPAD", pad<false>}})
    out.push_back(
        scalar(name, kString,
               "The input padded with the padding repeated (or cut) to a length; NULL for an empty "
               "padding or a negative length.",
               {signature("input VARCHAR, length INT, padding VARCHAR", "VARCHAR", f),
                signature("input BYTES, length INT, padding BYTES", "BYTES", f)}));
  out.push_back(scalar(
      "MASK", kString,
      "The string with upper-case letters as X, lower-case as x, digits as n and others as -, "
      "or as the masks given (a NULL mask keeps those characters).",
      {signature("input VARCHAR", "VARCHAR", mask),
       masked("input VARCHAR, upper VARCHAR, lower VARCHAR, digit VARCHAR, other VARCHAR", mask)}));
  const std::pair<const char*, ScalarImplementation> partial[] = {
      {"MASK_KEEP_LEFT", mask_keep_left},
      {"MASK_KEEP_RIGHT", mask_keep_right},
      {"MASK_LEFT", mask_left},
      {"MASK_RIGHT", mask_right}};
  for (auto [name, f] : partial)
    out.push_back(scalar(
        name, kString,
        "MASK applied to all but (KEEP) or only the first or last n characters of the string.",
        {masked("input VARCHAR, numChars INT", f),
         masked("input VARCHAR, numChars INT, upper VARCHAR, lower VARCHAR, digit VARCHAR, "
                "other VARCHAR",
                f)}));
  out.push_back(scalar("MD5", kString, "The MD5 digest of a string, in hexadecimal.",
                       {signature("input VARCHAR", "VARCHAR", md5)}));
  out.push_back(
      scalar("REPLACE", kString, "The string with every occurrence of one replaced.",
             {signature("str VARCHAR, oldStr VARCHAR, newStr VARCHAR", "VARCHAR", replace)}));
  out.push_back(scalar(
      "SPLIT", kString,
      "The parts of a string or bytes between occurrences of a delimiter (each character for an "
      "empty one).",
      {signature("string VARCHAR, delimiter VARCHAR", "ARRAY<VARCHAR>", split),
       signature("bytes BYTES, delimiter BYTES", "ARRAY<BYTES>", split)}));
  out.push_back(scalar(
      "SPLIT_TO_MAP", kString,
      "A map from a string of entries and key-value delimiters; the last of a repeated key wins.",
      {signature("input VARCHAR, entryDelimiter VARCHAR, kvDelimiter VARCHAR",
                 "MAP<VARCHAR, VARCHAR>", split_to_map)}));
  out.push_back(
      scalar("UUID", kString, "A random UUID, or the UUID of 16 bytes (NULL for another length).",
             {signature("", "VARCHAR", uuid), signature("bytes BYTES", "VARCHAR", uuid)}));
}

}  // namespace oxbow::sql::functions
