#pragma once
// Compatibility levels as Confluent's registry applies them: which registered versions a new
// schema is checked against, in which direction, and the detail items a refusal lists (its 409
// message, or a verbose compatibility answer):
//   NONE                no check
//   BACKWARD            the new schema reads the latest version's data (the default)
//   FORWARD             the latest version reads the new schema's data
//   FULL                both
//   *_TRANSITIVE        the same against every live version, newest first; the first version that
//                       fails is the one reported
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry/parsed_schema.h"

namespace oxbow::registry {

enum class CompatibilityLevel {
  kNone,
  kBackward,
  kBackwardTransitive,
  kForward,
  kForwardTransitive,
  kFull,
  kFullTransitive,
};

// Case-insensitive, as Confluent takes them; nullopt for an unknown name.
std::optional<CompatibilityLevel> compatibility_level(std::string_view name);
const char* level_name(CompatibilityLevel level);
// Whether a level checks every live version rather than the latest.
bool is_transitive(CompatibilityLevel level);

struct RegisteredVersion {
  int version = 0;
  const ParsedSchema* schema = nullptr;
};

// Empty when `candidate` may be registered; else Confluent's detail items: each problem, then
// {oldSchemaVersion: n} and {oldSchema: '...'} for the version that failed, then once
// {validateFields: 'false', compatibility: 'LEVEL'}. `versions`: live versions, newest first.
std::vector<std::string> compatibility_problems(CompatibilityLevel level,
                                                const ParsedSchema& candidate,
                                                const std::vector<RegisteredVersion>& versions);

// The 409 message of a refused registration.
std::string incompatible_message(const std::string& subject,
                                 const std::vector<std::string>& problems);

}  // namespace oxbow::registry
