#pragma once
// A server's settings as the `broker` and `registry` commands take them: a properties file, then
// `--override key=value` on top.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/properties.h"

namespace CLI {
class App;
}

namespace oxbow::cli {

// nullopt with `error` set (naming the file or the override) when they cannot be read.
std::optional<Properties> server_properties(const std::string& config_file,
                                            const std::vector<std::string>& overrides,
                                            std::string& error);

// A server subcommand (`oxbow broker`, `oxbow registry`): -c/--config FILE and -o/--override k=v
// read into properties, logs to stderr, then `run`, whose result is the exit code.
void add_server_command(CLI::App& app, const std::string& name, const std::string& description,
                        const std::string& config_help, std::function<int(const Properties&)> run);

}  // namespace oxbow::cli
