// Regular expressions (ksqlDB's REGULAR EXPRESSION category), through RE2: Java's syntax less
// what RE2 refuses (back-references, look-around), which fails as an invalid pattern.
#include <re2/re2.h>

#include <memory>
#include <unordered_map>

#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

// The compiled pattern, from a small cache of this thread's: a query's pattern is nearly always
// a constant, compiled once rather than per row. Null (and the call failed) when it is invalid.
const RE2* pattern(FunctionCall& call, const std::string& text) {
  thread_local std::unordered_map<std::string, std::unique_ptr<RE2>> cache;
  auto it = cache.find(text);
  if (it == cache.end()) {
    if (cache.size() >= 64) cache.clear();
    RE2::Options options;
    options.set_log_errors(false);
    it = cache.emplace(text, std::make_unique<RE2>(text, options)).first;
  }
  if (!it->second->ok()) {
    call.fail("Invalid regular expression pattern: " + text);
    return nullptr;
  }
  return it->second.get();
}

// The group-th group (not negative) of each match of `re` in `input` (one match unless `all`);
// false when the pattern has fewer groups.
bool matches(const RE2& re, std::string_view input, int64_t group, bool all,
             std::vector<Value>& out) {
  if (group > re.NumberOfCapturingGroups()) return false;
  std::vector<re2::StringPiece> groups(static_cast<size_t>(group) + 1);
  size_t at = 0;
  while (at <= input.size() && re.Match(input, at, input.size(), RE2::UNANCHORED, groups.data(),
                                        static_cast<int>(groups.size()))) {
    auto g = groups[static_cast<size_t>(group)];
    out.push_back(g.data() ? string_value(std::string_view(g.data(), g.size())) : Value());
    if (!all) break;
    size_t end = static_cast<size_t>(groups[0].data() - input.data()) + groups[0].size();
    at = groups[0].empty() ? end + 1 : end;
  }
  return true;
}

void regexp_extract(FunctionCall& call, bool all) {
  const RE2* re = pattern(call, call[0].text());
  if (!re) return;
  std::vector<Value> found;
  int64_t group = call.size() > 2 ? call[2].as_int64() : 0;
  std::string_view input = call[1].text();
  if (group < 0) {  // Java's Matcher.group(-1) throws, but only once a match is found
    if (re->Match(input, 0, input.size(), RE2::UNANCHORED, nullptr, 0))
      return call.fail("No group " + std::to_string(group));
    return all ? set_items(call.out(), Kind::kArray, {}) : call.null_result();
  }
  if (!matches(*re, call[1].text(), group, all, found)) return call.out().set_null();
  if (all) return set_items(call.out(), Kind::kArray, std::move(found));
  if (found.empty()) return call.out().set_null();
  call.out() = found[0];
}

void extract(FunctionCall& call) {
  regexp_extract(call, false);
}
void extract_all(FunctionCall& call) {
  regexp_extract(call, true);
}

// Java's replaceAll: `$n` in the replacement is the n-th group (RE2 writes it `\n`).
void regexp_replace(FunctionCall& call) {
  const RE2* re = pattern(call, call[1].text());
  if (!re) return;
  std::string rewrite;
  for (const std::string& r = call[2].text(); char c : r) {
    if (c == '\\')
      rewrite += "\\\\";
    else if (c == '$')
      rewrite += '\\';
    else
      rewrite += c;
  }
  std::string& s = scratch();
  s = call[0].text();
  RE2::GlobalReplace(&s, *re, rewrite);
  set_string(call.out(), s);
}

void regexp_split(FunctionCall& call) {
  const RE2* re = pattern(call, call[1].text());
  if (!re) return;
  std::string_view s = call[0].text();
  std::vector<Value> parts;
  if (call[1].text().empty() || RE2::FullMatch("", *re)) {
    // A pattern that matches nothing splits between every two characters.
    for (char32_t c : code_points(s)) {
      std::string one;
      append_utf8(one, c);
      parts.push_back(string_value(one));
    }
    if (parts.empty()) parts.push_back(string_value(""));
    return set_items(call.out(), Kind::kArray, std::move(parts));
  }
  re2::StringPiece match;
  size_t at = 0, from = 0;
  while (re->Match(s, at, s.size(), RE2::UNANCHORED, &match, 1)) {
    size_t start = static_cast<size_t>(match.data() - s.data());
    parts.push_back(string_value(s.substr(from, start - from)));
    from = at = start + match.size();
  }
  parts.push_back(string_value(s.substr(from)));
  set_items(call.out(), Kind::kArray, std::move(parts));
}

}  // namespace

void add_regex_functions(std::vector<FunctionInfo>& out) {
  out.push_back(
      scalar("REGEXP_EXTRACT", kRegex,
             "The first match of a pattern in a string, or its group n; NULL when none matches.",
             {signature("pattern VARCHAR, input VARCHAR", "VARCHAR", extract),
              signature("pattern VARCHAR, input VARCHAR, group INT", "VARCHAR", extract)}));
  out.push_back(scalar(
      "REGEXP_EXTRACT_ALL", kRegex, "Every match of a pattern in a string, or its group n.",
      {signature("pattern VARCHAR, input VARCHAR", "ARRAY<VARCHAR>", extract_all),
       signature("pattern VARCHAR, input VARCHAR, group INT", "ARRAY<VARCHAR>", extract_all)}));
  out.push_back(scalar(
      "REGEXP_REPLACE", kRegex,
      "The string with every match of a pattern replaced ($n in the replacement is group n).",
      {signature("str VARCHAR, regexp VARCHAR, newStr VARCHAR", "VARCHAR", regexp_replace)}));
  out.push_back(scalar(
      "REGEXP_SPLIT_TO_ARRAY", kRegex, "The parts of a string between the matches of a pattern.",
      {signature("string VARCHAR, regexp VARCHAR", "ARRAY<VARCHAR>", regexp_split)}));
}

}  // namespace oxbow::sql::functions
