#include "cli/server_properties.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <fstream>
#include <memory>
#include <sstream>

namespace oxbow::cli {

std::optional<Properties> server_properties(const std::string& config_file,
                                            const std::vector<std::string>& overrides,
                                            std::string& error) {
  Properties props;
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in) {
      error = "cannot read " + config_file;
      return std::nullopt;
    }
    std::stringstream text;
    text << in.rdbuf();
    if (auto bad = parse_properties(text.str(), props)) {
      error = config_file + ": " + *bad;
      return std::nullopt;
    }
  }
  for (const auto& item : overrides) {
    auto kv = split_assignment(item);
    if (!kv) {
      error = "--override expects key=value, got '" + item + "'";
      return std::nullopt;
    }
    props[kv->first] = kv->second;
  }
  return props;
}

void add_server_command(CLI::App& app, const std::string& name, const std::string& description,
                        const std::string& config_help, std::function<int(const Properties&)> run) {
  struct Options {
    std::string config_file;
    std::vector<std::string> overrides;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(name, description);
  cmd->add_option("-c,--config", options->config_file, config_help);
  cmd->add_option("-o,--override", options->overrides,
                  "key=value overriding the file (repeatable)");
  cmd->callback([options, run = std::move(run)] {
    // Logs go to stderr, leaving stdout to tools that wrap the server.
    spdlog::set_default_logger(spdlog::stderr_color_mt("oxbow"));
    std::string error;
    auto props = server_properties(options->config_file, options->overrides, error);
    int code = 1;
    if (props)
      code = run(*props);
    else
      spdlog::error("{}", error);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace oxbow::cli
