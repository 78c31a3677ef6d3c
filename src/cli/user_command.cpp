// `oxbow user create|delete|list`: SCRAM users, through AlterUserScramCredentials and
// DescribeUserScramCredentials (librdkafka 2.0 has no API for them, so they go over a WireClient).
// The password is salted here; only the salted form goes over the wire, as with Kafka's tools.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "broker/sasl/scram.h"
#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/wire_client.h"
#include "protocol/errors.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/describe_user_scram_credentials.h"

namespace oxbow::cli {
namespace {

namespace pr = oxbow::protocol;
using broker::ScramMechanism;

constexpr int16_t kDescribeUserScramCredentials = 50;
constexpr int16_t kAlterUserScramCredentials = 51;

struct UserOptions {
  ClientOptions client;
  std::string name;
  std::string password;
  std::string mechanism = "SCRAM-SHA-512";
  int32_t iterations = 8192;
};

pr::DescribeUserScramCredentialsResponse describe(WireClient& client,
                                                  std::optional<std::vector<std::string>> names) {
  pr::DescribeUserScramCredentialsRequest request;
  if (names) {
    request.users.emplace();
    for (const auto& n : *names) request.users->push_back({n});
  }
  auto response = client.call<pr::DescribeUserScramCredentialsResponse>(
      kDescribeUserScramCredentials, 0, request);
  if (response.error_code != 0)
    fail(fmt::format("list users: {}", error_text(response.error_code, response.error_message)));
  return response;
}

void alter(WireClient& client, const pr::AlterUserScramCredentialsRequest& request) {
  auto response =
      client.call<pr::AlterUserScramCredentialsResponse>(kAlterUserScramCredentials, 0, request);
  bool failed = false;
  for (const auto& r : response.results) {
    if (r.error_code == 0) continue;
    fmt::print(stderr, "oxbow: error: {}: {}\n", r.user, error_text(r.error_code, r.error_message));
    failed = true;
  }
  if (failed) throw CLI::RuntimeError(1);
}

void create_user(const UserOptions& options) {
  auto mechanism = broker::scram_mechanism_from_name(options.mechanism);
  if (options.password.empty()) fail("--password must not be empty");
  WireClient client(options.client);
  std::string salt = broker::random_bytes(32);
  std::string salted =
      broker::scram_salted_password(mechanism, options.password, salt, options.iterations);
  pr::AlterUserScramCredentialsRequest request;
  request.upsertions.push_back({options.name, static_cast<int8_t>(mechanism), options.iterations,
                                std::vector<uint8_t>(salt.begin(), salt.end()),
                                std::vector<uint8_t>(salted.begin(), salted.end())});
  alter(client, request);
  fmt::print("{} can now authenticate with {}\n", options.name, options.mechanism);
}

void delete_user(const UserOptions& options) {
  WireClient client(options.client);
  auto found = describe(client, std::vector<std::string>{options.name});
  const auto& result = found.results.front();
  if (result.error_code != 0)
    fail(fmt::format("{}: {}", options.name, error_text(result.error_code, result.error_message)));
  // Kafka takes one operation per user per request: one request per mechanism.
  for (const auto& info : result.credential_infos) {
    pr::AlterUserScramCredentialsRequest request;
    request.deletions.push_back({options.name, info.mechanism});
    alter(client, request);
  }
  fmt::print("deleted {}\n", options.name);
}

void list_users(const UserOptions& options) {
  WireClient client(options.client);
  auto response = describe(client, std::nullopt);
  std::vector<std::vector<std::string>> rows{{"USER", "MECHANISM", "ITERATIONS"}};
  for (const auto& r : response.results) {
    for (const auto& info : r.credential_infos) {
      rows.push_back({r.user,
                      broker::scram_mechanism_name(static_cast<ScramMechanism>(info.mechanism)),
                      std::to_string(info.iterations)});
    }
  }
  print_table(rows);
}

}  // namespace

void add_user_command(CLI::App& app) {
  auto options = std::make_shared<UserOptions>();
  CLI::App* user = app.add_subcommand("user", "Create, delete and list SCRAM users");
  user->require_subcommand(1);

  CLI::App* create = user->add_subcommand("create", "Create a user or set its password");
  add_client_options(*create, options->client);
  create->add_option("name", options->name, "User name")->required();
  create->add_option("--password", options->password, "Password")->required();
  create->add_option("--mechanism", options->mechanism, "SCRAM mechanism")
      ->capture_default_str()
      ->check(CLI::IsMember({"SCRAM-SHA-256", "SCRAM-SHA-512"}));
  create->add_option("--iterations", options->iterations, "PBKDF2 iterations")
      ->capture_default_str()
      ->check(CLI::Range(4096, 16384));
  create->callback([options] { create_user(*options); });

  CLI::App* del = user->add_subcommand("delete", "Delete a user's credentials");
  add_client_options(*del, options->client);
  del->add_option("name", options->name, "User name")->required();
  del->callback([options] { delete_user(*options); });

  CLI::App* list = user->add_subcommand("list", "List users and their SCRAM mechanisms");
  add_client_options(*list, options->client);
  list->callback([options] { list_users(*options); });
}

}  // namespace oxbow::cli
