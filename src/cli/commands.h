#pragma once

namespace CLI {
class App;
}

namespace oxbow::cli {

// Each adds one subcommand (with its own subcommands where relevant) to `app`.
// The callbacks throw CLI::RuntimeError(code) for a non-zero exit.
void add_broker_command(CLI::App& app);
void add_topic_command(CLI::App& app);
void add_produce_command(CLI::App& app);
void add_consume_command(CLI::App& app);
void add_perf_command(CLI::App& app);
void add_group_command(CLI::App& app);
void add_txn_command(CLI::App& app);
void add_user_command(CLI::App& app);
void add_acl_command(CLI::App& app);
void add_quota_command(CLI::App& app);
void add_streams_command(CLI::App& app);
void add_registry_command(CLI::App& app);
void add_platform_command(CLI::App& app);
void add_schema_command(CLI::App& app);
void add_sql_command(CLI::App& app);
void add_sql_server_command(CLI::App& app);
void add_connect_command(CLI::App& app);
void add_connector_command(CLI::App& app);

}  // namespace oxbow::cli
