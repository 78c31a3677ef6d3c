#include "broker/quotas/client_quotas.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "broker/config/host_addresses.h"
#include "storage/file.h"

namespace oxbow::broker {

namespace {

// Kafka drops a client's quota sensors after an hour without traffic.
constexpr int64_t kIdleBucketMs = 3600 * 1000;
constexpr int64_t kSweepEveryMs = 60 * 1000;

const char* key_of(QuotaType type) {
  switch (type) {
    case QuotaType::kProduce:
      return kProducerByteRate;
    case QuotaType::kFetch:
      return kConsumerByteRate;
    case QuotaType::kRequest:
      return kRequestPercentage;
    case QuotaType::kConnection:
      return kConnectionCreationRate;
    case QuotaType::kMutation:
      break;
  }
  return kControllerMutationRate;
}

}  // namespace

std::string quota_entity_problem(const QuotaEntity& entity) {
  if (entity.empty()) return "Invalid empty client quota entity";
  for (const auto& [type, name] : entity) {
    if (type == kQuotaIp) {
      if (entity.size() > 1) {
        return "Invalid quota entity combination, IP entity should not be combined with User or "
               "ClientId";
      }
      if (name && name->empty()) return "Empty ip not supported";
      if (name && !resolve_address(*name)) return *name + " is not a valid IP or resolvable host.";
      continue;
    }
    if (type != kQuotaUser && type != kQuotaClientId) {
      return "Unhandled client quota entity type: " + type;
    }
    if (name && name->empty()) return "Empty " + type + " not supported";
  }
  return "";
}

std::string quota_key_problem(const QuotaEntity& entity, const std::string& key) {
  bool ip = entity.contains(kQuotaIp);
  bool known = ip ? key == kConnectionCreationRate
                  : key == kProducerByteRate || key == kConsumerByteRate ||
                        key == kRequestPercentage || key == kControllerMutationRate;
  return known ? "" : "Invalid configuration key " + key;
}

// Kafka's checks, in its order: positive, then (the byte rates, LONGs, and the connection rate, an
// INT) whole and within range.
std::string quota_value_problem(const QuotaEntity& entity, const std::string& key, double value) {
  if (auto problem = quota_key_problem(entity, key); !problem.empty()) return problem;
  if (std::isnan(value) || value <= 0) return "Quota " + key + " must be greater than 0";
  if (key == kRequestPercentage || key == kControllerMutationRate) {  // DOUBLEs
    return std::isfinite(value) ? "" : "Quota " + key + " must be a finite number";
  }
  if (std::isfinite(value) && std::fabs(std::fmod(value, 1.0)) > 1e-6) {
    return key + " cannot be a fractional value.";
  }
  if (key == kConnectionCreationRate && value > 2147483647.0) {
    return "Proposed value for " + key + " is too large for an INT.";
  }
  if (value >= 9.223372036854775807e18) {
    return "Proposed value for " + key + " is too large for a LONG.";
  }
  return "";
}

void SampledRate::expire(int64_t now_ms) {
  int64_t max_age = window_.window_ms * static_cast<int64_t>(samples_.size());
  for (auto& s : samples_) {
    if (s.start_ms >= 0 && now_ms - s.last_event_ms >= max_age) s = {};
  }
}

void SampledRate::record(double value, int64_t now_ms) {
  auto* s = &samples_[current_];
  if (s->start_ms < 0 || now_ms - s->start_ms >= window_.window_ms) {
    if (s->start_ms >= 0) current_ = (current_ + 1) % samples_.size();
    s = &samples_[current_];
    *s = {now_ms, now_ms, 0};
  }
  s->value += value;
  s->last_event_ms = now_ms;
}

int64_t SampledRate::span_ms(int64_t now_ms) {
  expire(now_ms);
  int64_t oldest = now_ms;
  for (const auto& s : samples_) {
    if (s.start_ms >= 0) oldest = std::min(oldest, s.start_ms);
  }
  int64_t elapsed = now_ms - oldest;
  int64_t full_windows = elapsed / window_.window_ms;
  int64_t min_full_windows = static_cast<int64_t>(samples_.size()) - 1;
  if (full_windows < min_full_windows)
    elapsed += (min_full_windows - full_windows) * window_.window_ms;
  return std::max<int64_t>(elapsed, 1);
}

double SampledRate::per_second(int64_t now_ms) {
  int64_t span = span_ms(now_ms);
  double total = 0;
  for (const auto& s : samples_) total += s.value;
  return total * 1000.0 / static_cast<double>(span);
}

bool ClientQuotas::load(std::string& error) {
  std::string text;
  if (!storage::read_whole_file(path_, text)) return true;
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    error = path_ + ": not valid JSON";
    return false;
  }
  std::lock_guard lock(mutex_);
  for (const auto& entry : doc) {
    if (!entry.is_object() || !entry.contains("entity") || !entry.contains("quotas")) continue;
    QuotaEntity entity;
    for (const auto& [type, name] : entry["entity"].items()) {
      if (name.is_string()) {
        entity[type] = name.get<std::string>();
      } else {
        entity[type] = std::nullopt;
      }
    }
    if (!quota_entity_problem(entity).empty()) continue;
    QuotaValues values;
    for (const auto& [key, value] : entry["quotas"].items()) {
      if (value.is_number() && quota_value_problem(entity, key, value.get<double>()).empty())
        values[key] = value.get<double>();
    }
    if (!values.empty()) quotas_[entity] = std::move(values);
  }
  std::vector<QuotaEntity> entities;
  for (const auto& [entity, values] : quotas_) entities.push_back(entity);
  ip_addresses_ = resolve_ip_names(entities);
  index_quotas();
  return true;
}

std::vector<std::pair<QuotaEntity, QuotaValues>> ClientQuotas::all() const {
  std::lock_guard lock(mutex_);
  return {quotas_.begin(), quotas_.end()};
}

bool ClientQuotas::alter(const Changes& changes, std::string& error) {
  std::vector<QuotaEntity> entities;
  for (const auto& [entity, ops] : changes) entities.push_back(entity);
  auto addresses = resolve_ip_names(entities);
  std::lock_guard lock(mutex_);
  auto next = quotas_;
  for (const auto& [entity, ops] : changes) {
    auto& values = next[entity];
    for (const auto& [key, value] : ops) {
      if (value) {
        values[key] = *value;
      } else {
        values.erase(key);
      }
    }
    if (values.empty()) next.erase(entity);
  }
  nlohmann::json doc = nlohmann::json::array();
  for (const auto& [entity, values] : next) {
    nlohmann::json e = nlohmann::json::object();
    for (const auto& [type, name] : entity) e[type] = name ? nlohmann::json(*name) : nullptr;
    nlohmann::json q = nlohmann::json::object();
    for (const auto& [key, value] : values) {
      if (key == kRequestPercentage || key == kControllerMutationRate) {
        q[key] = value;
      } else {
        q[key] = static_cast<int64_t>(value);
      }
    }
    doc.push_back({{"entity", e}, {"quotas", q}});
  }
  if (!storage::write_file_atomically(path_, doc.dump(2) + "\n", error)) return false;
  quotas_ = std::move(next);
  for (auto& [name, address] : addresses) ip_addresses_.insert_or_assign(name, std::move(address));
  index_quotas();
  return true;
}

std::optional<double> ClientQuotas::quota_of(const QuotaEntity& entity, const char* key) const {
  auto it = quotas_.find(entity);
  if (it == quotas_.end()) return std::nullopt;
  auto value = it->second.find(key);
  if (value == it->second.end()) return std::nullopt;
  return value->second;
}

// Kafka's precedence, most specific first. The tags name the bucket: a quota set for a named
// entity is shared by everything it matches, a default one is counted per user or client-id.
std::optional<ClientQuotas::Bound> ClientQuotas::resolve(QuotaType type, const std::string& user,
                                                         const std::string& client_id) const {
  if (!types_set_[static_cast<size_t>(type)]) return std::nullopt;
  const char* key = key_of(type);
  if (type == QuotaType::kConnection) return resolve_ip(client_id);
  using Name = std::optional<std::string>;
  struct Level {
    std::optional<Name> user;    // nullopt: not part of the entity
    std::optional<Name> client;  // Name nullopt: the default
    bool tag_user;
    bool tag_client;
  };
  const Level levels[] = {
      {Name(user), Name(client_id), true, true},
      {Name(user), Name(), true, true},
      {Name(user), std::nullopt, true, false},
      {Name(), Name(client_id), true, true},
      {Name(), Name(), true, true},
      {Name(), std::nullopt, true, false},
      {std::nullopt, Name(client_id), false, true},
      {std::nullopt, Name(), false, true},
  };
  for (const auto& level : levels) {
    QuotaEntity entity;
    if (level.user) entity[kQuotaUser] = *level.user;
    if (level.client) entity[kQuotaClientId] = *level.client;
    if (auto limit = quota_of(entity, key)) {
      return Bound{level.tag_user ? user : "", level.tag_client ? client_id : "", *limit};
    }
  }
  return std::nullopt;
}

// A named IP's quota (by its resolved address), else the default IP's; `address` is the bucket.
std::optional<ClientQuotas::Bound> ClientQuotas::resolve_ip(const std::string& address) const {
  auto named = ip_rates_.find(address);
  if (named != ip_rates_.end()) return Bound{"", address, named->second};
  if (auto limit = quota_of({{kQuotaIp, std::nullopt}}, kConnectionCreationRate))
    return Bound{"", address, *limit};
  return std::nullopt;
}

void ClientQuotas::index_quotas() {
  ip_rates_.clear();
  types_set_ = {};
  for (const auto& [entity, values] : quotas_) {
    for (auto type : {QuotaType::kProduce, QuotaType::kFetch, QuotaType::kRequest,
                      QuotaType::kConnection, QuotaType::kMutation}) {
      if (values.contains(key_of(type))) types_set_[static_cast<size_t>(type)] = true;
    }
    auto ip = entity.find(kQuotaIp);
    auto rate = values.find(kConnectionCreationRate);
    if (ip == entity.end() || !ip->second || rate == values.end()) continue;
    if (auto address = ip_addresses_.find(*ip->second); address != ip_addresses_.end())
      ip_rates_[address->second] = rate->second;
  }
  active_ = !quotas_.empty();
}

// Outside the lock: a host name's lookup can take long, and the request paths need the lock.
std::map<std::string, std::string> ClientQuotas::resolve_ip_names(
    const std::vector<QuotaEntity>& entities) {
  std::map<std::string, std::string> out;
  for (const auto& entity : entities) {
    auto ip = entity.find(kQuotaIp);
    if (ip == entity.end() || !ip->second) continue;
    if (auto address = resolve_address(*ip->second)) out[*ip->second] = *address;
  }
  return out;
}

void ClientQuotas::forget_idle_buckets(int64_t now_ms) {
  if (now_ms < next_sweep_ms_) return;
  next_sweep_ms_ = now_ms + kSweepEveryMs;
  std::erase_if(buckets_, [&](const auto& entry) {
    return now_ms - entry.second.last_used_ms > kIdleBucketMs;
  });
  std::erase_if(mutation_buckets_,
                [&](const auto& entry) { return now_ms - entry.second.last_ms > kIdleBucketMs; });
}

int64_t ClientQuotas::record(QuotaType type, const std::string& user, const std::string& client_id,
                             double bytes, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto bound = resolve(type, user, client_id);
  if (!bound) return 0;
  forget_idle_buckets(now_ms);
  auto [it, added] = buckets_.try_emplace({type, bound->user_tag, bound->client_tag},
                                          Bucket{SampledRate(window_), now_ms});
  auto& bucket = it->second;
  bucket.last_used_ms = now_ms;
  bucket.rate.record(bytes, now_ms);
  double rate = bucket.rate.per_second(now_ms);
  if (rate <= bound->limit) return 0;
  // Long enough for the rate over the span to fall back to the quota.
  double over = (rate - bound->limit) / bound->limit;
  auto throttle =
      static_cast<int64_t>(std::llround(over * static_cast<double>(bucket.rate.span_ms(now_ms))));
  bool capped = type == QuotaType::kRequest || type == QuotaType::kConnection;
  return capped ? std::min(throttle, window_.window_ms) : throttle;
}

MutationCharge ClientQuotas::charge_mutations(const std::string& user, const std::string& client_id,
                                              double partitions, bool strict, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto bound = resolve(QuotaType::kMutation, user, client_id);
  if (!bound || bound->limit <= 0) return {};
  forget_idle_buckets(now_ms);
  double burst = bound->limit * mutation_window_.samples *
                 (static_cast<double>(mutation_window_.window_ms) / 1000.0);
  auto [it, added] = mutation_buckets_.try_emplace({bound->user_tag, bound->client_tag},
                                                   TokenBucket{burst, now_ms});
  auto& bucket = it->second;
  bucket.tokens = std::min(
      burst, bucket.tokens + bound->limit * static_cast<double>(now_ms - bucket.last_ms) / 1000.0);
  bucket.last_ms = now_ms;
  auto wait = [&] {
    return bucket.tokens >= 0
               ? int64_t{0}
               : static_cast<int64_t>(std::llround(-bucket.tokens / bound->limit * 1000.0));
  };
  if (strict && bucket.tokens < 0) return {false, wait()};
  bucket.tokens = std::min(burst, bucket.tokens - partitions);
  return {true, strict ? 0 : wait()};
}

void ClientQuotas::unrecord(QuotaType type, const std::string& user, const std::string& client_id,
                            double bytes, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto bound = resolve(type, user, client_id);
  if (!bound) return;
  auto it = buckets_.find({type, bound->user_tag, bound->client_tag});
  if (it != buckets_.end()) it->second.rate.record(-bytes, now_ms);
}

std::optional<int64_t> ClientQuotas::max_bytes_per_span(QuotaType type, const std::string& user,
                                                        const std::string& client_id) const {
  std::lock_guard lock(mutex_);
  auto bound = resolve(type, user, client_id);
  if (!bound) return std::nullopt;
  double span_s = static_cast<double>(window_.samples - 1) * window_.window_ms / 1000.0;
  return static_cast<int64_t>(std::min(bound->limit * span_s, 9.2e18));
}

}  // namespace oxbow::broker
