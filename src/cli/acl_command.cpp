// `oxbow acl add|list|remove`: ACLs through CreateAcls, DescribeAcls and DeleteAcls, with the
// options of Kafka's kafka-acls tool (--allow-principal, --operation, --topic, --group,
// --transactional-id, --cluster, --resource-pattern-type, --producer, --consumer). They go over a
// WireClient: librdkafka 2.0's ACL API has no TRANSACTIONAL_ID resource type.
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/wire_client.h"
#include "protocol/errors.h"
#include "protocol/messages/create_acls.h"
#include "protocol/messages/delete_acls.h"
#include "protocol/messages/describe_acls.h"
#include "security/acl.h"

namespace oxbow::cli {
namespace {

namespace pr = oxbow::protocol;
namespace sec = oxbow::security;
using sec::AclOperation;
using sec::ResourceType;

constexpr int16_t kDescribeAcls = 29;
constexpr int16_t kCreateAcls = 30;
constexpr int16_t kDeleteAcls = 31;
constexpr int16_t kAclApiVersion = 2;

struct AclOptions {
  ClientOptions client;
  std::vector<std::string> allow_principals;
  std::vector<std::string> deny_principals;
  std::vector<std::string> allow_hosts;
  std::vector<std::string> deny_hosts;
  std::vector<std::string> operations;
  std::vector<std::string> topics;
  std::vector<std::string> groups;
  std::vector<std::string> transactional_ids;
  bool cluster = false;
  std::string pattern_type;
  std::string principal;  // list filter
  bool producer = false;
  bool consumer = false;
  bool idempotent = false;
};

using Resource = std::pair<ResourceType, std::string>;

std::vector<Resource> resources_of(const AclOptions& o) {
  std::vector<Resource> out;
  for (const auto& t : o.topics) out.emplace_back(ResourceType::kTopic, t);
  for (const auto& g : o.groups) out.emplace_back(ResourceType::kGroup, g);
  for (const auto& x : o.transactional_ids) out.emplace_back(ResourceType::kTransactionalId, x);
  if (o.cluster) out.emplace_back(ResourceType::kCluster, sec::kClusterResourceName);
  return out;
}

std::vector<AclOperation> parse_operations(const std::vector<std::string>& names) {
  std::vector<AclOperation> out;
  for (const auto& n : names) {
    auto op = sec::parse_operation(n);
    if (op == AclOperation::kUnknown || op == AclOperation::kAny) {
      fail(fmt::format(
          "unknown --operation {} (Read, Write, Create, Delete, Alter, Describe, ClusterAction, "
          "DescribeConfigs, AlterConfigs, IdempotentWrite, All)",
          n));
    }
    out.push_back(op);
  }
  return out;
}

// The operations each resource gets: --operation, or those --producer / --consumer imply
// (as kafka-acls: producers WRITE, DESCRIBE and CREATE topics and use their transactional ids,
// consumers READ and DESCRIBE topics and READ groups).
std::vector<AclOperation> operations_for(const AclOptions& o, ResourceType type) {
  std::set<AclOperation> ops;
  for (auto op : parse_operations(o.operations)) ops.insert(op);
  if (o.producer && type == ResourceType::kTopic)
    ops.insert({AclOperation::kWrite, AclOperation::kDescribe, AclOperation::kCreate});
  if (o.producer && type == ResourceType::kTransactionalId)
    ops.insert({AclOperation::kWrite, AclOperation::kDescribe});
  if (o.idempotent && type == ResourceType::kCluster) ops.insert(AclOperation::kIdempotentWrite);
  if (o.consumer && type == ResourceType::kTopic)
    ops.insert({AclOperation::kRead, AclOperation::kDescribe});
  if (o.consumer && type == ResourceType::kGroup) ops.insert(AclOperation::kRead);
  return {ops.begin(), ops.end()};
}

sec::PatternType pattern_of(const AclOptions& o, const char* fallback) {
  auto type = sec::parse_pattern_type(o.pattern_type.empty() ? fallback : o.pattern_type);
  if (type == sec::PatternType::kUnknown)
    fail(fmt::format("unknown --resource-pattern-type {}", o.pattern_type));
  return type;
}

struct Entry {
  std::string principal;
  std::string host;
  sec::AclPermission permission;
};

// Principal × host × permission combinations from --allow-principal/--allow-host and the deny ones.
std::vector<Entry> entries_of(const AclOptions& o) {
  std::vector<Entry> out;
  auto add = [&](const std::vector<std::string>& principals, const std::vector<std::string>& hosts,
                 sec::AclPermission permission) {
    std::vector<std::string> any_host{"*"};
    for (const auto& p : principals) {
      for (const auto& h : hosts.empty() ? any_host : hosts) out.push_back({p, h, permission});
    }
  };
  add(o.allow_principals, o.allow_hosts, sec::AclPermission::kAllow);
  add(o.deny_principals, o.deny_hosts, sec::AclPermission::kDeny);
  return out;
}

std::vector<std::string> row(int8_t type, const std::string& name, int8_t pattern,
                             const std::string& principal, const std::string& host, int8_t op,
                             int8_t permission) {
  return {sec::name(static_cast<ResourceType>(type)),
          name,
          sec::name(static_cast<sec::PatternType>(pattern)),
          principal,
          host,
          sec::name(static_cast<AclOperation>(op)),
          sec::name(static_cast<sec::AclPermission>(permission))};
}

const std::vector<std::string> kHeader{"RESOURCE-TYPE", "NAME",      "PATTERN",   "PRINCIPAL",
                                       "HOST",          "OPERATION", "PERMISSION"};

void add_acls(const AclOptions& o) {
  auto resources = resources_of(o);
  auto entries = entries_of(o);
  if (resources.empty()) fail("name a resource: --topic, --group, --transactional-id or --cluster");
  if (entries.empty()) fail("name who: --allow-principal or --deny-principal (e.g. User:alice)");
  auto pattern = pattern_of(o, "literal");
  pr::CreateAclsRequest request;
  std::vector<std::vector<std::string>> rows{kHeader};
  for (const auto& [type, name] : resources) {
    auto ops = operations_for(o, type);
    if (ops.empty()) fail(fmt::format("no --operation for {} {}", sec::name(type), name));
    for (const auto& e : entries) {
      for (auto op : ops) {
        request.creations.push_back({static_cast<int8_t>(type), name, static_cast<int8_t>(pattern),
                                     e.principal, e.host, static_cast<int8_t>(op),
                                     static_cast<int8_t>(e.permission)});
        const auto& c = request.creations.back();
        rows.push_back(row(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal,
                           c.host, c.operation, c.permission_type));
      }
    }
  }
  WireClient client(o.client);
  auto response = client.call<pr::CreateAclsResponse>(kCreateAcls, kAclApiVersion, request);
  bool failed = false;
  for (size_t i = 0; i < response.results.size(); ++i) {
    const auto& r = response.results[i];
    if (r.error_code == 0) continue;
    fmt::print(stderr, "oxbow: error: {}: {}\n", fmt::join(rows[i + 1], " "),
               error_text(r.error_code, r.error_message));
    failed = true;
  }
  if (failed) throw CLI::RuntimeError(1);
  fmt::print("added {} ACLs\n", request.creations.size());
  print_table(rows);
}

void list_acls(const AclOptions& o) {
  auto resources = resources_of(o);
  if (resources.empty()) resources.emplace_back(ResourceType::kAny, "");
  WireClient client(o.client);
  std::vector<std::vector<std::string>> rows{kHeader};
  for (const auto& [type, name] : resources) {
    pr::DescribeAclsRequest request;
    request.resource_type_filter = static_cast<int8_t>(type);
    if (type != ResourceType::kAny) request.resource_name_filter = name;
    request.pattern_type_filter =
        static_cast<int8_t>(pattern_of(o, type == ResourceType::kAny ? "any" : "match"));
    if (!o.principal.empty()) request.principal_filter = o.principal;
    request.operation = static_cast<int8_t>(AclOperation::kAny);
    request.permission_type = static_cast<int8_t>(sec::AclPermission::kAny);
    auto response = client.call<pr::DescribeAclsResponse>(kDescribeAcls, kAclApiVersion, request);
    if (response.error_code != 0)
      fail(fmt::format("list ACLs: {}", error_text(response.error_code, response.error_message)));
    for (const auto& r : response.resources) {
      for (const auto& a : r.acls) {
        rows.push_back(row(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host,
                           a.operation, a.permission_type));
      }
    }
  }
  print_table(rows);
}

void remove_acls(const AclOptions& o) {
  auto resources = resources_of(o);
  if (resources.empty()) fail("name a resource: --topic, --group, --transactional-id or --cluster");
  auto pattern = pattern_of(o, "literal");
  auto entries = entries_of(o);
  pr::DeleteAclsRequest request;
  for (const auto& [type, name] : resources) {
    auto ops = operations_for(o, type);
    if (ops.empty()) ops.push_back(AclOperation::kAny);
    auto add = [&, type = type, name = name](std::optional<std::string> principal,
                                             std::optional<std::string> host,
                                             sec::AclPermission permission) {
      for (auto op : ops) {
        request.filters.push_back({static_cast<int8_t>(type), name, static_cast<int8_t>(pattern),
                                   principal, host, static_cast<int8_t>(op),
                                   static_cast<int8_t>(permission)});
      }
    };
    if (entries.empty()) add(std::nullopt, std::nullopt, sec::AclPermission::kAny);
    for (const auto& e : entries) add(e.principal, e.host, e.permission);
  }
  WireClient client(o.client);
  auto response = client.call<pr::DeleteAclsResponse>(kDeleteAcls, kAclApiVersion, request);
  std::vector<std::vector<std::string>> rows{kHeader};
  bool failed = false;
  for (const auto& r : response.filter_results) {
    if (r.error_code != 0) {
      fmt::print(stderr, "oxbow: error: {}\n", error_text(r.error_code, r.error_message));
      failed = true;
    }
    for (const auto& m : r.matching_acls) {
      rows.push_back(row(m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host,
                         m.operation, m.permission_type));
    }
  }
  if (failed) throw CLI::RuntimeError(1);
  fmt::print("removed {} ACLs\n", rows.size() - 1);
  if (rows.size() > 1) print_table(rows);
}

void add_resource_options(CLI::App& cmd, AclOptions& o) {
  cmd.add_option("--topic", o.topics, "Topic (name or prefix); repeatable");
  cmd.add_option("--group", o.groups, "Consumer group; repeatable");
  cmd.add_option("--transactional-id", o.transactional_ids, "Transactional id; repeatable");
  cmd.add_flag("--cluster", o.cluster, "The cluster resource");
  cmd.add_option("--resource-pattern-type", o.pattern_type,
                 "literal, prefixed (add, remove); also any, match (list)");
}

void add_entry_options(CLI::App& cmd, AclOptions& o) {
  cmd.add_option("--allow-principal", o.allow_principals,
                 "Principal allowed, e.g. User:alice or User:*");
  cmd.add_option("--deny-principal", o.deny_principals, "Principal denied");
  cmd.add_option("--allow-host", o.allow_hosts, "Host the allow applies to (default: every host)");
  cmd.add_option("--deny-host", o.deny_hosts, "Host the deny applies to (default: every host)");
  cmd.add_option("--operation", o.operations,
                 "Read, Write, Create, Delete, Alter, Describe, ..., All");
  cmd.add_flag("--producer", o.producer,
               "Write, Describe and Create on --topic; Write and Describe on --transactional-id");
  cmd.add_flag("--consumer", o.consumer, "Read and Describe on --topic, Read on --group");
  cmd.add_flag("--idempotent", o.idempotent, "IdempotentWrite on --cluster");
}

}  // namespace

void add_acl_command(CLI::App& app) {
  auto options = std::make_shared<AclOptions>();
  CLI::App* acl =
      app.add_subcommand("acl", "Add, list and remove ACLs (needs an authorizer on the broker)");
  acl->require_subcommand(1);

  CLI::App* add = acl->add_subcommand("add", "Add ACLs");
  add_client_options(*add, options->client);
  add_resource_options(*add, *options);
  add_entry_options(*add, *options);
  add->callback([options] { add_acls(*options); });

  CLI::App* list = acl->add_subcommand("list", "List ACLs, all or those of the named resources");
  add_client_options(*list, options->client);
  add_resource_options(*list, *options);
  list->add_option("--principal", options->principal, "Only this principal's ACLs");
  list->callback([options] { list_acls(*options); });

  CLI::App* remove =
      acl->add_subcommand("remove",
                          "Remove the ACLs matching the options (all of a resource's when "
                          "no principal or operation is given)");
  add_client_options(*remove, options->client);
  add_resource_options(*remove, *options);
  add_entry_options(*remove, *options);
  remove->callback([options] { remove_acls(*options); });
}

}  // namespace oxbow::cli
