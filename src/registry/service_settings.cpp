// The registry's settings: compatibility levels and modes, globally and per subject.
#include <optional>
#include <string>

#include "registry/service.h"
#include "registry/service_errors.h"

namespace oxbow::registry {

using namespace detail;
using store::KeyType;
using store::RecordKey;

Result<std::string> RegistryService::compatibility(const std::optional<std::string>& subject,
                                                   bool default_to_global) const {
  if (subject) {
    if (const auto* c = state().config(subject); c && c->compatibility_level)
      return *c->compatibility_level;
    if (!default_to_global)
      return not_found(
          40408, "Subject '" + *subject + "' does not have subject-level compatibility configured");
  }
  if (const auto* c = state().config(std::nullopt); c && c->compatibility_level)
    return *c->compatibility_level;
  return std::string(level_name(config_.default_level));
}

Result<std::string> RegistryService::set_compatibility(const std::optional<std::string>& subject,
                                                       const std::optional<std::string>& level,
                                                       std::optional<bool> normalize) {
  std::optional<CompatibilityLevel> parsed;
  if (level) parsed = compatibility_level(*level);
  if (level ? !parsed : !normalize)
    return unprocessable(42203,
                         "Invalid compatibility level. Valid values are none, backward, forward, "
                         "full, backward_transitive, forward_transitive, and full_transitive");
  store::ConfigValue value;
  if (const auto* old = state().config(subject)) value = *old;  // other settings kept
  value.subject = subject;
  if (parsed) value.compatibility_level = level_name(*parsed);
  if (normalize) value.other["normalize"] = *normalize;
  if (auto error = write({{RecordKey{KeyType::kConfig, subject}, store::RecordValue(value)}},
                         "Update config"))
    return *error;
  return parsed ? std::string(level_name(*parsed)) : std::string();
}

std::optional<bool> RegistryService::normalize_setting(const std::optional<std::string>& subject,
                                                       bool default_to_global) const {
  for (const auto& s : {subject, std::optional<std::string>()}) {
    if (const auto* c = state().config(s)) {
      auto it = c->other.find("normalize");
      if (it != c->other.end() && it->is_boolean()) return it->get<bool>();
    }
    if (!default_to_global) break;
  }
  return std::nullopt;
}

Result<std::string> RegistryService::delete_compatibility(
    const std::optional<std::string>& subject) {
  const auto* old = state().config(subject);
  if (!old || !old->compatibility_level) {
    if (subject) return subject_not_found(*subject);
    return std::string(level_name(config_.default_level));
  }
  std::string level = *old->compatibility_level;
  if (auto error = write({{RecordKey{KeyType::kConfig, subject}, std::nullopt}}, "Delete config"))
    return *error;
  return level;
}

namespace {

std::optional<std::string> mode_name(const std::string& text) {
  std::string m = upper(text);
  for (const char* known : {"READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT"})
    if (m == known) return m;
  return std::nullopt;
}

}  // namespace

Result<std::string> RegistryService::mode(const std::optional<std::string>& subject,
                                          bool default_to_global) const {
  if (subject) {
    if (const auto* m = state().mode(subject)) return m->mode;
    if (!default_to_global)
      return not_found(40409,
                       "Subject '" + *subject + "' does not have subject-level mode configured");
  }
  if (const auto* m = state().mode(std::nullopt)) return m->mode;
  return std::string("READWRITE");
}

Result<std::string> RegistryService::set_mode(const std::optional<std::string>& subject,
                                              const std::string& text, bool force) {
  auto m = mode_name(text);
  if (!m)
    return unprocessable(42204, "Invalid mode. Valid values are READWRITE, READONLY, and IMPORT.");
  if (*m == "IMPORT" && !force) {
    auto current = mode(subject, true);
    bool has_schemas =
        subject ? state().latest(*subject) != nullptr : !state().subjects(false).empty();
    if (current.value && *current.value != "IMPORT" && has_schemas)
      return unprocessable(42205, "Cannot import since found existing subjects");
  }
  if (auto error = write(
          {{RecordKey{KeyType::kMode, subject}, store::RecordValue(store::ModeValue{subject, *m})}},
          "Update mode"))
    return *error;
  return *m;
}

Result<std::string> RegistryService::delete_mode(const std::optional<std::string>& subject) {
  const auto* old = state().mode(subject);
  if (!old) {
    if (subject) return subject_not_found(*subject);
    return std::string("READWRITE");
  }
  std::string m = old->mode;
  if (auto error = write({{RecordKey{KeyType::kMode, subject}, std::nullopt}}, "Delete mode"))
    return *error;
  return m;
}

}  // namespace oxbow::registry
