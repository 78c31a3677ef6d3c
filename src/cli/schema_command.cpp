// `oxbow schema`: the schema registry from the command line, over its REST API (Confluent's, so
// it works against Confluent's registry too): list subjects and versions, show a schema, register
// one from a file, check one for compatibility, read or set a compatibility level, delete.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/rest_call.h"

namespace oxbow::cli {

namespace {

using Json = nlohmann::json;

struct SchemaOptions {
  std::string url = "http://localhost:8081";
  std::string subject, file, type, version, level;
  std::vector<std::string> references;  // name=subject:version
  int id = 0;
  bool deleted = false, permanent = false, normalize = false, verbose = false;
  std::string prefix;
};

// Path segments are percent-encoded: subjects may hold '/', '?', '%' or spaces.
std::string encode(const std::string& segment) {
  std::string out;
  for (unsigned char c : segment) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == ':')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

// The answer's JSON; an error fails the command with one line naming the registry's error.
Json call(const SchemaOptions& o, const std::string& method, const std::string& path,
          const Json& body = nullptr) {
  http::Response response =
      rest_call({o.url, "the registry", "application/vnd.schemaregistry.v1+json"}, method, path,
                body.is_null() ? "" : body.dump());
  auto answer = Json::parse(response.body, nullptr, false);
  if (answer.is_discarded()) fail("the registry's answer is not JSON: " + response.body);
  return answer;
}

Json schema_body(const SchemaOptions& o) {
  std::ifstream in(o.file, std::ios::binary);
  if (!in) fail("cannot read " + o.file);
  std::stringstream text;
  text << in.rdbuf();
  Json body{{"schema", text.str()}};
  if (!o.type.empty()) body["schemaType"] = o.type;
  Json refs = Json::array();
  for (const auto& r : o.references) {
    auto eq = r.find('='), colon = r.rfind(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq)
      fail("--reference " + r + ": expected NAME=SUBJECT:VERSION");
    int version = 0;
    try {
      version = std::stoi(r.substr(colon + 1));
    } catch (const std::exception&) {
      fail("--reference " + r + ": the version is not a number");
    }
    refs.push_back({{"name", r.substr(0, eq)},
                    {"subject", r.substr(eq + 1, colon - eq - 1)},
                    {"version", version}});
  }
  if (!refs.empty()) body["references"] = refs;
  return body;
}

void print_list(const Json& list) {
  for (const auto& item : list)
    fmt::print("{}\n", item.is_string() ? item.get<std::string>() : item.dump());
}

void add_schema_file_options(CLI::App* cmd, SchemaOptions& o) {
  cmd->add_option("subject", o.subject, "Subject")->required();
  cmd->add_option("file", o.file, "File holding the schema")->required();
  cmd->add_option("-t,--type", o.type, "Schema type")
      ->check(CLI::IsMember({"AVRO", "JSON", "PROTOBUF"}));
  cmd->add_option("-r,--reference", o.references, "A reference NAME=SUBJECT:VERSION (repeatable)");
}

}  // namespace

void add_schema_command(CLI::App& app) {
  auto o = std::make_shared<SchemaOptions>();
  auto* schema =
      app.add_subcommand("schema", "Schemas in a schema registry (Confluent's REST API)");
  schema->add_option("--url", o->url, "The registry's URL")->capture_default_str();
  schema->require_subcommand(1);

  auto* subjects = schema->add_subcommand("subjects", "List the subjects");
  subjects->add_flag("--deleted", o->deleted, "Soft-deleted subjects too");
  subjects->add_option("--prefix", o->prefix, "Only subjects starting with this");
  subjects->callback([o] {
    std::string query = o->deleted ? "?deleted=true" : "";
    if (!o->prefix.empty())
      query += (query.empty() ? "?" : "&") + ("subjectPrefix=" + encode(o->prefix));
    print_list(call(*o, "GET", "/subjects" + query));
  });

  auto* versions = schema->add_subcommand("versions", "List a subject's versions");
  versions->add_option("subject", o->subject, "Subject")->required();
  versions->add_flag("--deleted", o->deleted, "Soft-deleted versions too");
  versions->callback([o] {
    print_list(call(
        *o, "GET",
        "/subjects/" + encode(o->subject) + "/versions" + (o->deleted ? "?deleted=true" : "")));
  });

  auto* show = schema->add_subcommand("show", "Show a subject's version (the latest by default)");
  show->add_option("subject", o->subject, "Subject")->required();
  show->add_option("-v,--version", o->version, "Version number or latest")->default_val("latest");
  show->callback([o] {
    fmt::print("{}\n", call(*o, "GET",
                            "/subjects/" + encode(o->subject) + "/versions/" + encode(o->version))
                           .dump(2));
  });

  auto* by_id = schema->add_subcommand("id", "Show the schema with an id, and who holds it");
  by_id->add_option("id", o->id, "Schema id")->required();
  by_id->callback([o] {
    Json out = call(*o, "GET", "/schemas/ids/" + std::to_string(o->id));
    out["versions"] = call(*o, "GET", "/schemas/ids/" + std::to_string(o->id) + "/versions");
    fmt::print("{}\n", out.dump(2));
  });

  auto* reg = schema->add_subcommand("register", "Register a schema from a file; prints its id");
  add_schema_file_options(reg, *o);
  reg->add_flag("--normalize", o->normalize, "Normalize the schema first");
  reg->callback([o] {
    Json answer = call(
        *o, "POST",
        "/subjects/" + encode(o->subject) + "/versions" + (o->normalize ? "?normalize=true" : ""),
        schema_body(*o));
    fmt::print("{}\n", answer.value("id", 0));
  });

  auto* check = schema->add_subcommand(
      "check", "Check a schema in a file against a subject; exits 1 when it is incompatible");
  add_schema_file_options(check, *o);
  check->add_option("-v,--version", o->version, "Against this version only (number or latest)");
  check->callback([o] {
    std::string path = "/compatibility/subjects/" + encode(o->subject) + "/versions" +
                       (o->version.empty() ? "" : "/" + encode(o->version)) + "?verbose=true";
    Json answer = call(*o, "POST", path, schema_body(*o));
    if (answer.value("is_compatible", false)) {
      fmt::print("compatible\n");
      return;
    }
    fmt::print("incompatible\n");
    if (answer.contains("messages")) print_list(answer["messages"]);
    throw CLI::RuntimeError(1);
  });

  auto* config = schema->add_subcommand(
      "config", "Show the compatibility level (global, or a subject's), or --set it");
  config->add_option("subject", o->subject, "Subject (global when left out)");
  config->add_option("--set", o->level, "New level")
      ->check(CLI::IsMember({"NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD",
                             "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE"},
                            CLI::ignore_case));
  config->callback([o] {
    std::string path = o->subject.empty() ? "/config" : "/config/" + encode(o->subject);
    if (!o->level.empty()) {
      Json answer = call(*o, "PUT", path, Json{{"compatibility", o->level}});
      fmt::print("{}\n", answer.value("compatibility", ""));
      return;
    }
    Json answer = call(*o, "GET", path + (o->subject.empty() ? "" : "?defaultToGlobal=true"));
    fmt::print("{}\n", answer.value("compatibilityLevel", ""));
  });

  auto* del = schema->add_subcommand(
      "delete", "Delete a subject or one version (soft; --permanent after a soft delete)");
  del->add_option("subject", o->subject, "Subject")->required();
  del->add_option("-v,--version", o->version, "Only this version");
  del->add_flag("--permanent", o->permanent, "Delete for good (after a soft delete)");
  del->callback([o] {
    std::string path = "/subjects/" + encode(o->subject) +
                       (o->version.empty() ? "" : "/versions/" + encode(o->version)) +
                       (o->permanent ? "?permanent=true" : "");
    Json answer = call(*o, "DELETE", path);
    if (answer.is_array())
      print_list(answer);
    else
      fmt::print("{}\n", answer.dump());
  });
}

}  // namespace oxbow::cli
