// `oxbow sql-server`: ksqlDB's REST server over the SQL engine (src/sql/server/sql_server.h).
#include <spdlog/spdlog.h>

#include <optional>

#include "cli/commands.h"
#include "cli/server_properties.h"
#include "sql/server/sql_server.h"

namespace oxbow::cli {

namespace {

int run_sql_server(const Properties& props) {
  std::string error;
  std::optional<sql::server::SqlServer> server;
  if (auto config = sql::server::make_sql_server_config(props, error))
    server.emplace(std::move(*config));
  if (server && server->start(error)) return server->run();
  spdlog::error("sql-server: {}", error);
  return 1;
}

}  // namespace

void add_sql_server_command(CLI::App& app) {
  add_server_command(app, "sql-server", "Run the SQL server (ksqlDB's REST API)",
                     "ksql-server.properties file", run_sql_server);
}

}  // namespace oxbow::cli
