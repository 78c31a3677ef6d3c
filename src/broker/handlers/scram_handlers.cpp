// DescribeUserScramCredentials and AlterUserScramCredentials: the SCRAM users SASL listeners
// accept. Clients send salted passwords; the broker keeps only the derived keys.
#include <set>

#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/sasl/scram.h"
#include "protocol/errors.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/describe_user_scram_credentials.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

constexpr int32_t kMinIterations = 4096;  // Kafka's bounds
constexpr int32_t kMaxIterations = 16384;

struct Refusal {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
};

Refusal check_upsertion(const pr::AlterUserScramCredentialsRequest::ScramCredentialUpsertion& u) {
  auto m = static_cast<ScramMechanism>(u.mechanism);
  if (u.name.empty()) return {ErrorCode::kUnacceptableCredential, "Username must not be empty"};
  if (m != ScramMechanism::kSha256 && m != ScramMechanism::kSha512) {
    return {ErrorCode::kUnsupportedSaslMechanism,
            "Unknown SCRAM mechanism " + std::to_string(u.mechanism)};
  }
  if (u.iterations < kMinIterations) {
    return {ErrorCode::kUnacceptableCredential,
            "Too few iterations: " + std::to_string(u.iterations) + " is below " +
                std::to_string(kMinIterations)};
  }
  if (u.iterations > kMaxIterations) {
    return {ErrorCode::kUnacceptableCredential,
            "Too many iterations: " + std::to_string(u.iterations) + " is above " +
                std::to_string(kMaxIterations)};
  }
  if (u.salt.empty() || u.salted_password.empty())
    return {ErrorCode::kUnacceptableCredential, "Empty salt or password"};
  return {};
}

}  // namespace

void handle_describe_user_scram_credentials(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeUserScramCredentialsRequest request;
  request.decode(body, v);
  pr::DescribeUserScramCredentialsResponse response;
  if (!authorized_on_cluster(ctx, AclOperation::kDescribe)) {
    response.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
    response.error_message = "Authorization failed.";
    response.encode(out, v);
    return;
  }
  auto users = ctx.broker.scram_credentials().all();
  auto describe = [&](const std::string& name) {
    auto& result = response.results.emplace_back();
    result.user = name;
    auto it = users.find(name);
    if (it == users.end()) {
      result.error_code = pr::code(ErrorCode::kResourceNotFound);
      result.error_message = "Attempt to describe a user credential that does not exist: " + name;
      return;
    }
    for (const auto& [m, c] : it->second)
      result.credential_infos.push_back({static_cast<int8_t>(m), c.iterations});
  };
  if (!request.users) {
    for (const auto& [name, mechanisms] : users) describe(name);
  } else {
    std::set<std::string> seen;
    for (const auto& u : *request.users) {
      if (!seen.insert(u.name).second) continue;
      describe(u.name);
    }
  }
  response.encode(out, v);
}

void handle_alter_user_scram_credentials(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::AlterUserScramCredentialsRequest request;
  request.decode(body, v);
  auto& store = ctx.broker.scram_credentials();
  // Kafka refuses a user named twice in one request, whichever the operations.
  std::map<std::string, int> mentions;
  for (const auto& d : request.deletions) mentions[d.name]++;
  for (const auto& u : request.upsertions) mentions[u.name]++;
  std::map<std::string, Refusal> refused;
  bool allowed = authorized_on_cluster(ctx, AclOperation::kAlter);
  if (!allowed) {
    for (const auto& [name, count] : mentions)
      refused[name] = {ErrorCode::kClusterAuthorizationFailed, "Authorization failed."};
  }
  std::map<std::pair<std::string, ScramMechanism>, std::optional<ScramCredential>> changes;
  for (const auto& d : request.deletions) {
    auto m = static_cast<ScramMechanism>(d.mechanism);
    if (!allowed) {
      continue;
    } else if (mentions[d.name] > 1) {
      refused[d.name] = {ErrorCode::kDuplicateResource,
                         "A user credential cannot be altered twice in the same request"};
    } else if (m != ScramMechanism::kSha256 && m != ScramMechanism::kSha512) {
      refused[d.name] = {ErrorCode::kUnsupportedSaslMechanism,
                         "Unknown SCRAM mechanism " + std::to_string(d.mechanism)};
    } else if (!store.contains(d.name, m)) {
      refused[d.name] = {ErrorCode::kResourceNotFound,
                         "Attempt to delete a user credential that does not exist"};
    } else {
      changes[{d.name, m}] = std::nullopt;
    }
  }
  for (const auto& u : request.upsertions) {
    if (!allowed) continue;
    auto refusal = mentions[u.name] > 1
                       ? Refusal{ErrorCode::kDuplicateResource,
                                 "A user credential cannot be altered twice in the same request"}
                       : check_upsertion(u);
    if (refusal.error != ErrorCode::kNone) {
      refused[u.name] = refusal;
      continue;
    }
    auto m = static_cast<ScramMechanism>(u.mechanism);
    std::string salt(u.salt.begin(), u.salt.end());
    std::string salted(u.salted_password.begin(), u.salted_password.end());
    changes[{u.name, m}] = derive_scram_credential(m, salt, salted, u.iterations);
  }
  std::string error;
  bool stored = changes.empty() || store.update(changes, error);
  pr::AlterUserScramCredentialsResponse response;
  std::set<std::string> answered;
  auto answer = [&](const std::string& name) {
    if (!answered.insert(name).second) return;
    auto& result = response.results.emplace_back();
    result.user = name;
    if (auto it = refused.find(name); it != refused.end()) {
      result.error_code = pr::code(it->second.error);
      result.error_message = it->second.message;
    } else if (!stored) {
      result.error_code = pr::code(ErrorCode::kKafkaStorageError);
      result.error_message = error;
    }
  };
  for (const auto& d : request.deletions) answer(d.name);
  for (const auto& u : request.upsertions) answer(u.name);
  response.encode(out, v);
}

}  // namespace oxbow::broker
