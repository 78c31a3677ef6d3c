// oxbow: the broker and the client tools in one binary.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <system_error>

#include "cli/commands.h"
#include "common/process_signals.h"

int main(int argc, char** argv) {
  oxbow::ignore_peer_signals();
  CLI::App app{"Oxbow: a Kafka-compatible streaming platform"};
  app.require_subcommand(1);
  oxbow::cli::add_broker_command(app);
  oxbow::cli::add_topic_command(app);
  oxbow::cli::add_produce_command(app);
  oxbow::cli::add_consume_command(app);
  oxbow::cli::add_perf_command(app);
  oxbow::cli::add_group_command(app);
  oxbow::cli::add_txn_command(app);
  oxbow::cli::add_user_command(app);
  oxbow::cli::add_quota_command(app);
  oxbow::cli::add_acl_command(app);
  oxbow::cli::add_streams_command(app);
  oxbow::cli::add_registry_command(app);
  oxbow::cli::add_schema_command(app);
  oxbow::cli::add_platform_command(app);
  oxbow::cli::add_sql_command(app);
  oxbow::cli::add_sql_server_command(app);
  oxbow::cli::add_connect_command(app);
  oxbow::cli::add_connector_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::system_error& e) {
    // A tool whose stdout reader went away (`| head`) has nobody left to tell.
    if (e.code().value() == EPIPE) return 0;
    std::fprintf(stderr, "oxbow: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oxbow: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
