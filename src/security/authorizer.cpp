#include "security/authorizer.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <system_error>

#include "storage/file.h"

namespace oxbow::security {

namespace {

constexpr int kFormatVersion = 1;

// One access control entry, kept under the resource pattern it is bound to.
struct Entry {
  std::string principal;
  // Length of "<type>:" when the principal is "<type>:*" (every principal of that type), else 0.
  size_t wildcard_prefix = 0;
  std::string host;
  AclOperation operation;
  AclPermission permission;
};

using Entries = std::vector<Entry>;
// std::less<> so the hot path looks names up through string_views without building strings.
using ByName = std::map<std::string, Entries, std::less<>>;

struct TypeIndex {
  ByName literal;
  ByName prefixed;
};

constexpr size_t kResourceTypes = static_cast<size_t>(ResourceType::kUser) + 1;

bool is_concrete(ResourceType type) {
  return type >= ResourceType::kTopic && type <= ResourceType::kUser;
}

bool principal_matches(const Entry& entry, std::string_view principal) {
  if (entry.wildcard_prefix != 0) {
    return principal.starts_with(
        std::string_view(entry.principal).substr(0, entry.wildcard_prefix));
  }
  return entry.principal == principal;
}

bool host_matches(const Entry& entry, std::string_view host) {
  return entry.host == "*" || entry.host == host;
}

// Kafka lets an ALLOW for an operation that changes a resource also reveal it; a DENY never
// spreads that way, so denying READ still lets a principal see the topic exists.
bool grants(AclOperation bound, AclOperation requested) {
  if (bound == AclOperation::kAll || bound == requested) return true;
  if (requested == AclOperation::kDescribe) {
    return bound == AclOperation::kRead || bound == AclOperation::kWrite ||
           bound == AclOperation::kDelete || bound == AclOperation::kAlter;
  }
  return requested == AclOperation::kDescribeConfigs && bound == AclOperation::kAlterConfigs;
}

bool forbids(AclOperation bound, AclOperation requested) {
  return bound == AclOperation::kAll || bound == requested;
}

// Calls `visit` on the entries of every key of `by_name` that is a prefix of `name`, stopping
// early when it returns true (the result). Rather than trying every prefix length, it jumps:
// if the greatest key <= the bound is not a prefix, every prefix still to find sorts at or below
// the part it shares with `name`, so the bound shrinks to that part.
template <typename Visit>
bool any_prefix(const ByName& by_name, std::string_view name, Visit visit) {
  std::string_view bound = name;
  while (true) {
    auto it = by_name.upper_bound(bound);
    if (it == by_name.begin()) return false;
    --it;
    std::string_view key = it->first;
    auto common = static_cast<size_t>(
        std::mismatch(key.begin(), key.end(), bound.begin(), bound.end()).first - key.begin());
    if (common == key.size()) {
      if (visit(it->second)) return true;
      if (key.empty()) return false;
      bound = name.substr(0, key.size() - 1);
    } else {
      bound = name.substr(0, common);
    }
  }
}

nlohmann::json to_json(const std::set<AclBinding>& bindings) {
  nlohmann::json acls = nlohmann::json::array();
  for (const auto& b : bindings) {
    acls.push_back({{"resource_type", name(b.resource_type)},
                    {"resource_name", b.resource_name},
                    {"pattern_type", name(b.pattern_type)},
                    {"principal", b.principal},
                    {"host", b.host},
                    {"operation", name(b.operation)},
                    {"permission", name(b.permission)}});
  }
  return {{"version", kFormatVersion}, {"acls", std::move(acls)}};
}

std::optional<std::string> string_field(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// A binding that fails to load is an error rather than skipped: dropping a DENY would quietly
// widen access.
std::optional<std::string> from_json(const nlohmann::json& doc, std::set<AclBinding>& out) {
  if (!doc.is_object()) return "not a JSON object";
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || *version != kFormatVersion) {
    return "unsupported version (expected " + std::to_string(kFormatVersion) + ")";
  }
  auto acls = doc.find("acls");
  if (acls == doc.end() || !acls->is_array()) return "no \"acls\" array";
  for (size_t i = 0; i < acls->size(); ++i) {
    const auto& item = (*acls)[i];
    std::string where = "acls[" + std::to_string(i) + "]: ";
    if (!item.is_object()) return where + "not an object";
    auto resource_type = string_field(item, "resource_type");
    auto resource_name = string_field(item, "resource_name");
    auto pattern_type = string_field(item, "pattern_type");
    auto principal = string_field(item, "principal");
    auto host = string_field(item, "host");
    auto operation = string_field(item, "operation");
    auto permission = string_field(item, "permission");
    if (!resource_type || !resource_name || !pattern_type || !principal || !host || !operation ||
        !permission) {
      return where + "a field is missing or not a string";
    }
    AclBinding binding{parse_resource_type(*resource_type),
                       std::move(*resource_name),
                       parse_pattern_type(*pattern_type),
                       std::move(*principal),
                       std::move(*host),
                       parse_operation(*operation),
                       parse_permission(*permission)};
    if (auto why = validate(binding)) return where + *why;
    out.insert(std::move(binding));
  }
  return std::nullopt;
}

}  // namespace

struct Authorizer::State {
  explicit State(std::set<AclBinding> all) : bindings(std::move(all)) {
    for (const auto& b : bindings) {
      TypeIndex& index = types[static_cast<size_t>(b.resource_type)];
      ByName& by_name = b.pattern_type == PatternType::kLiteral ? index.literal : index.prefixed;
      Entry entry{b.principal, 0, b.host, b.operation, b.permission};
      size_t colon = b.principal.find(':');
      if (std::string_view(b.principal).substr(colon + 1) == "*") entry.wildcard_prefix = colon + 1;
      by_name[b.resource_name].push_back(std::move(entry));
    }
  }

  std::set<AclBinding> bindings;  // every binding, valid, in the order describe() returns
  std::array<TypeIndex, kResourceTypes> types;
};

Authorizer::Authorizer(std::string path, AuthorizerConfig config)
    : path_(std::move(path)),
      config_(std::move(config)),
      state_(std::make_unique<State>(std::set<AclBinding>{})) {}

Authorizer::~Authorizer() = default;

bool Authorizer::load(std::string& error) {
  std::string text;
  std::set<AclBinding> bindings;
  if (storage::read_whole_file(path_, text)) {
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
      error = path_ + ": not valid JSON";
      return false;
    }
    if (auto why = from_json(doc, bindings)) {
      error = path_ + ": " + *why;
      return false;
    }
  } else if (std::error_code ec; std::filesystem::exists(path_, ec) || ec) {
    // An ACL file we cannot read must not pass for an empty one: that could open everything.
    error = path_ + ": cannot be read";
    return false;
  }
  std::lock_guard update(update_mutex_);
  publish(std::make_unique<const State>(std::move(bindings)));
  return true;
}

bool Authorizer::is_super_user(const std::string& principal) const {
  return std::find(config_.super_users.begin(), config_.super_users.end(), principal) !=
         config_.super_users.end();
}

bool Authorizer::authorize(const std::string& principal, const std::string& host, AclOperation op,
                           const Resource& resource) const {
  if (is_super_user(principal)) return true;
  if (size() == 0) return config_.allow_everyone_if_no_acl_found;
  std::shared_lock lock(state_mutex_);
  return authorize_locked(*state_, principal, host, op, resource);
}

bool Authorizer::authorize_locked(const State& state, const std::string& principal,
                                  const std::string& host, AclOperation op,
                                  const Resource& resource) const {
  if (!is_concrete(resource.type)) return false;
  const TypeIndex& index = state.types[static_cast<size_t>(resource.type)];
  bool applies = false;
  bool allowed = false;
  // True when a DENY settles it; otherwise notes whether anything applied or allowed.
  auto denies = [&](const Entries& entries) {
    applies = true;
    for (const auto& e : entries) {
      if (!principal_matches(e, principal) || !host_matches(e, host)) continue;
      if (e.permission == AclPermission::kDeny) {
        if (forbids(e.operation, op)) return true;
      } else if (grants(e.operation, op)) {
        allowed = true;
      }
    }
    return false;
  };
  if (auto it = index.literal.find(resource.name);
      it != index.literal.end() && denies(it->second)) {
    return false;
  }
  if (resource.name != "*") {
    auto it = index.literal.find(std::string_view("*"));
    if (it != index.literal.end() && denies(it->second)) return false;
  }
  if (any_prefix(index.prefixed, resource.name, denies)) return false;
  return applies ? allowed : config_.allow_everyone_if_no_acl_found;
}

bool Authorizer::authorize_any(const std::string& principal, const std::string& host,
                               AclOperation op, ResourceType type) const {
  if (is_super_user(principal)) return true;
  if (!is_concrete(type)) return false;
  std::shared_lock lock(state_mutex_);
  const TypeIndex& index = state_->types[static_cast<size_t>(type)];
  auto has = [&](const Entries& entries, AclPermission permission) {
    return std::any_of(entries.begin(), entries.end(), [&](const Entry& e) {
      return e.permission == permission && principal_matches(e, principal) &&
             host_matches(e, host) &&
             (permission == AclPermission::kDeny ? forbids(e.operation, op)
                                                 : grants(e.operation, op));
    });
  };
  auto denied_by_prefix = [&](std::string_view name) {
    return any_prefix(index.prefixed, name,
                      [&](const Entries& entries) { return has(entries, AclPermission::kDeny); });
  };
  auto star = index.literal.find(std::string_view("*"));
  if (star != index.literal.end()) {
    if (has(star->second, AclPermission::kDeny)) return false;
    if (has(star->second, AclPermission::kAllow)) return true;
  } else if (config_.allow_everyone_if_no_acl_found) {
    // Prefixes never cover every name, so without a "*" binding some resource has no ACL at all,
    // and allow_everyone_if_no_acl_found lets everyone use it.
    return true;
  }
  for (const auto& [name, entries] : index.literal) {
    if (name == "*") continue;
    if (has(entries, AclPermission::kAllow) && !has(entries, AclPermission::kDeny) &&
        !denied_by_prefix(name)) {
      return true;
    }
  }
  for (const auto& [name, entries] : index.prefixed) {
    // A longer DENY prefix leaves other names under this ALLOW usable, so only shorter or equal
    // DENY prefixes count.
    if (has(entries, AclPermission::kAllow) && !denied_by_prefix(name)) return true;
  }
  return false;
}

int32_t Authorizer::authorized_operations(const std::string& principal, const std::string& host,
                                          const Resource& resource) const {
  int32_t supported = supported_operation_bits(resource.type);
  if (is_super_user(principal)) return supported;
  if (size() == 0) return config_.allow_everyone_if_no_acl_found ? supported : 0;
  int32_t bits = 0;
  std::shared_lock lock(state_mutex_);
  for (int code = 0; code < 32; ++code) {
    int32_t bit = int32_t{1} << code;
    if ((supported & bit) != 0 &&
        authorize_locked(*state_, principal, host, static_cast<AclOperation>(code), resource)) {
      bits |= bit;
    }
  }
  return bits;
}

bool Authorizer::create(const std::vector<AclBinding>& bindings, std::string& error) {
  for (const auto& b : bindings) {
    if (auto why = validate(b)) {
      error = *why;
      return false;
    }
  }
  std::lock_guard update(update_mutex_);
  // Only writers replace state_, and they hold update_mutex_, so reading it here needs no lock.
  std::set<AclBinding> next = state_->bindings;
  size_t before = next.size();
  next.insert(bindings.begin(), bindings.end());
  if (next.size() == before) return true;
  return persist_and_publish(std::make_unique<const State>(std::move(next)), error);
}

std::vector<AclBinding> Authorizer::describe(const AclFilter& filter) const {
  std::vector<AclBinding> out;
  std::shared_lock lock(state_mutex_);
  for (const auto& b : state_->bindings) {
    if (filter.matches(b)) out.push_back(b);
  }
  return out;
}

bool Authorizer::remove(const std::vector<AclFilter>& filters,
                        std::vector<std::vector<AclBinding>>& removed, std::string& error) {
  removed.assign(filters.size(), {});
  for (const auto& f : filters) {
    if (auto why = validate(f)) {
      error = *why;
      return false;
    }
  }
  std::lock_guard update(update_mutex_);
  std::set<AclBinding> next = state_->bindings;
  bool changed = false;
  for (const auto& b : state_->bindings) {
    for (size_t i = 0; i < filters.size(); ++i) {
      if (filters[i].matches(b)) {
        removed[i].push_back(b);
        next.erase(b);
        changed = true;
        break;
      }
    }
  }
  if (!changed) return true;
  if (!persist_and_publish(std::make_unique<const State>(std::move(next)), error)) {
    removed.assign(filters.size(), {});
    return false;
  }
  return true;
}

bool Authorizer::persist_and_publish(std::unique_ptr<const State> next, std::string& error) {
  if (!storage::write_file_atomically(path_, to_json(next->bindings).dump(2) + "\n", error)) {
    return false;
  }
  publish(std::move(next));
  return true;
}

void Authorizer::publish(std::unique_ptr<const State> next) {
  size_t count = next->bindings.size();
  {
    std::unique_lock lock(state_mutex_);
    state_.swap(next);
    size_.store(count, std::memory_order_release);
  }
  // `next` now holds the old state, freed here outside the lock.
}

}  // namespace oxbow::security
