// oxbow: the broker and the client tools in one binary.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
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
  CLI11_PARSE(app, argc, argv);
  return 0;
}
