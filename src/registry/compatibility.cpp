#include "registry/compatibility.h"

#include <algorithm>
#include <cctype>

namespace oxbow::registry {

namespace {

struct LevelName {
  CompatibilityLevel level;
  const char* name;
};
constexpr LevelName kLevels[] = {
    {CompatibilityLevel::kNone, "NONE"},
    {CompatibilityLevel::kBackward, "BACKWARD"},
    {CompatibilityLevel::kBackwardTransitive, "BACKWARD_TRANSITIVE"},
    {CompatibilityLevel::kForward, "FORWARD"},
    {CompatibilityLevel::kForwardTransitive, "FORWARD_TRANSITIVE"},
    {CompatibilityLevel::kFull, "FULL"},
    {CompatibilityLevel::kFullTransitive, "FULL_TRANSITIVE"},
};

bool new_reads_old(CompatibilityLevel l) {
  return l != CompatibilityLevel::kNone && l != CompatibilityLevel::kForward &&
         l != CompatibilityLevel::kForwardTransitive;
}
bool old_reads_new(CompatibilityLevel l) {
  return l == CompatibilityLevel::kForward || l == CompatibilityLevel::kForwardTransitive ||
         l == CompatibilityLevel::kFull || l == CompatibilityLevel::kFullTransitive;
}

// The problems against one version, with that version's items after them.
std::vector<std::string> against(CompatibilityLevel level, const ParsedSchema& candidate,
                                 const RegisteredVersion& old) {
  std::vector<std::string> out;
  if (candidate.type() != old.schema->type()) {
    out.push_back("Incompatible because of different schema type");
  } else {
    // Under FULL, what the old schema cannot read comes first.
    if (old_reads_new(level)) out = old.schema->reader_problems(candidate, "old", "new");
    if (new_reads_old(level)) {
      auto more = candidate.reader_problems(*old.schema, "new", "old");
      out.insert(out.end(), more.begin(), more.end());
    }
  }
  if (out.empty()) return out;
  out.push_back("{oldSchemaVersion: " + std::to_string(old.version) + "}");
  out.push_back("{oldSchema: '" + old.schema->canonical() + "'}");
  return out;
}

}  // namespace

bool is_transitive(CompatibilityLevel l) {
  return l == CompatibilityLevel::kBackwardTransitive ||
         l == CompatibilityLevel::kForwardTransitive || l == CompatibilityLevel::kFullTransitive;
}

std::optional<CompatibilityLevel> compatibility_level(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  for (const auto& l : kLevels)
    if (upper == l.name) return l.level;
  return std::nullopt;
}

const char* level_name(CompatibilityLevel level) {
  for (const auto& l : kLevels)
    if (l.level == level) return l.name;
  return "NONE";
}

std::vector<std::string> compatibility_problems(CompatibilityLevel level,
                                                const ParsedSchema& candidate,
                                                const std::vector<RegisteredVersion>& versions) {
  if (level == CompatibilityLevel::kNone) return {};
  size_t count = is_transitive(level) ? versions.size() : std::min<size_t>(versions.size(), 1);
  for (size_t i = 0; i < count; ++i) {
    auto out = against(level, candidate, versions[i]);
    if (out.empty()) continue;
    out.push_back(std::string("{validateFields: 'false', compatibility: '") + level_name(level) +
                  "'}");
    return out;
  }
  return {};
}

std::string incompatible_message(const std::string& subject,
                                 const std::vector<std::string>& problems) {
  std::string list;
  for (const auto& p : problems) list += (list.empty() ? "" : ", ") + p;
  return "Schema being registered is incompatible with an earlier schema for subject \"" + subject +
         "\", details: [" + list + "]";
}

}  // namespace oxbow::registry
