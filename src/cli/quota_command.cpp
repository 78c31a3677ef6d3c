// `oxbow quota set|delete|list`: client quotas (producer_byte_rate, consumer_byte_rate,
// request_percentage, controller_mutation_rate) of users, client-ids and (user, client-id) pairs,
// and connection_creation_rate of IP addresses, through AlterClientQuotas
// and DescribeClientQuotas (librdkafka 2.0 has no API for them, so they go over a WireClient).
#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/wire_client.h"
#include "protocol/messages/alter_client_quotas.h"
#include "protocol/messages/describe_client_quotas.h"

namespace oxbow::cli {
namespace {

namespace pr = oxbow::protocol;

constexpr int16_t kDescribeClientQuotas = 48;
constexpr int16_t kAlterClientQuotas = 49;
constexpr const char* kDefaultName = "<default>";

struct QuotaOptions {
  ClientOptions client;
  std::string user;
  bool user_default = false;
  std::string client_id;
  bool client_id_default = false;
  std::string ip;
  bool ip_default = false;
  std::vector<std::string> settings;  // key=value for set, key for delete
};

using Entity = std::vector<pr::AlterClientQuotasRequest::EntityData>;

Entity entity_of(const QuotaOptions& o) {
  Entity entity;
  if (o.user_default) {
    entity.push_back({"user", std::nullopt});
  } else if (!o.user.empty()) {
    entity.push_back({"user", o.user});
  }
  if (o.client_id_default) {
    entity.push_back({"client-id", std::nullopt});
  } else if (!o.client_id.empty()) {
    entity.push_back({"client-id", o.client_id});
  }
  if (o.ip_default) {
    entity.push_back({"ip", std::nullopt});
  } else if (!o.ip.empty()) {
    entity.push_back({"ip", o.ip});
  }
  if (entity.empty()) fail("name a --user, --client-id or --ip (or their --*-default)");
  return entity;
}

std::string describe_entity(const Entity& entity) {
  std::string text;
  for (const auto& part : entity) {
    if (!text.empty()) text += ", ";
    text += part.entity_type + " " + part.entity_name.value_or(kDefaultName);
  }
  return text;
}

void alter(const QuotaOptions& options, std::vector<pr::AlterClientQuotasRequest::OpData> ops) {
  WireClient client(options.client);
  pr::AlterClientQuotasRequest request;
  auto& entry = request.entries.emplace_back();
  entry.entity = entity_of(options);
  entry.ops = std::move(ops);
  auto response = client.call<pr::AlterClientQuotasResponse>(kAlterClientQuotas, 0, request);
  for (const auto& r : response.entries) {
    if (r.error_code != 0) fail(error_text(r.error_code, r.error_message));
  }
  fmt::print("updated the quotas of {}\n", describe_entity(entry.entity));
}

void set_quotas(const QuotaOptions& options) {
  std::vector<pr::AlterClientQuotasRequest::OpData> ops;
  for (const auto& setting : options.settings) {
    auto eq = setting.find('=');
    if (eq == std::string::npos || eq == 0) fail("'" + setting + "' is not key=value");
    std::string key = setting.substr(0, eq);
    std::string text = setting.substr(eq + 1);
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value))
      fail("'" + text + "' is not a number (" + key + ")");
    ops.push_back({key, value, false});
  }
  alter(options, std::move(ops));
}

void delete_quotas(const QuotaOptions& options) {
  std::vector<pr::AlterClientQuotasRequest::OpData> ops;
  for (const auto& key : options.settings) ops.push_back({key, 0, true});
  alter(options, std::move(ops));
}

std::string format_value(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) return std::to_string(static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

void list_quotas(const QuotaOptions& options) {
  WireClient client(options.client);
  pr::DescribeClientQuotasRequest request;
  auto component = [&](const char* type, const std::string& name, bool is_default) {
    if (is_default) {
      request.components.push_back({type, 1, std::nullopt});
    } else if (!name.empty()) {
      request.components.push_back({type, 0, name});
    }
  };
  component("user", options.user, options.user_default);
  component("client-id", options.client_id, options.client_id_default);
  component("ip", options.ip, options.ip_default);
  auto response = client.call<pr::DescribeClientQuotasResponse>(kDescribeClientQuotas, 0, request);
  if (response.error_code != 0)
    fail("list quotas: " + error_text(response.error_code, response.error_message));
  std::vector<std::vector<std::string>> rows{{"USER", "CLIENT-ID", "IP", "QUOTA", "VALUE"}};
  for (const auto& entry : response.entries.value_or(decltype(response.entries)::value_type{})) {
    std::string user, client_id, ip;
    for (const auto& part : entry.entity) {
      std::string name = part.entity_name.value_or(kDefaultName);
      (part.entity_type == "user" ? user : part.entity_type == "ip" ? ip : client_id) = name;
    }
    for (const auto& value : entry.values)
      rows.push_back({user, client_id, ip, value.key, format_value(value.value)});
  }
  print_table(rows);
}

void add_entity_options(CLI::App& command, QuotaOptions& options) {
  add_client_options(command, options.client);
  command.add_option("--user", options.user, "User (principal name)");
  command.add_flag("--user-default", options.user_default, "The default of all users");
  command.add_option("--client-id", options.client_id, "Client id");
  command.add_flag("--client-id-default", options.client_id_default,
                   "The default of all client ids");
  command.add_option("--ip", options.ip, "Client address (connection_creation_rate only)");
  command.add_flag("--ip-default", options.ip_default, "The default of all client addresses");
}

}  // namespace

void add_quota_command(CLI::App& app) {
  auto options = std::make_shared<QuotaOptions>();
  CLI::App* quota = app.add_subcommand("quota", "Set, delete and list client quotas");
  quota->require_subcommand(1);

  CLI::App* set = quota->add_subcommand(
      "set",
      "Set quotas of a user, a client id or both: producer_byte_rate=N consumer_byte_rate=N");
  add_entity_options(*set, *options);
  set->add_option("quotas", options->settings,
                  "key=value (bytes, partitions or connections per second; "
                  "request_percentage: percent of a thread)")
      ->required();
  set->callback([options] { set_quotas(*options); });

  CLI::App* del = quota->add_subcommand("delete", "Remove quotas of a user, a client id or both");
  add_entity_options(*del, *options);
  del->add_option("keys", options->settings, "Quota keys to remove")->required();
  del->callback([options] { delete_quotas(*options); });

  CLI::App* list = quota->add_subcommand(
      "list", "List quotas (all, or those of the user, client id or IP given)");
  add_entity_options(*list, *options);
  list->callback([options] { list_quotas(*options); });
}

}  // namespace oxbow::cli
