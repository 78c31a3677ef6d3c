// `oxbow streams`: tools for Kafka Streams (and oxbow-streams) applications. `reset` is Kafka's
// kafka-streams-application-reset, with its option names.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/reset_times.h"
#include "cli/streams_reset.h"

namespace oxbow::cli {
namespace {

constexpr const char* kResetFooter =
    "Run it only while no instance of the application is running; it refuses while the "
    "application's consumer group has members. Output topics are left as they are, and so is "
    "the local state of each instance: call KafkaStreams::cleanUp() or delete the instance's "
    "state directory before starting it again, or it resumes from its old stores. Try "
    "--dry-run first: deleting the internal topics cannot be undone.";

void add_connection_options(CLI::App& reset, StreamsResetOptions& options) {
  add_client_options(reset, options.client);
  // Kafka's tool takes the plural spelling too, and a reset is not something to aim at
  // localhost by default.
  reset.remove_option(reset.get_option("--bootstrap-server"));
  reset
      .add_option("-b,--bootstrap-server,--bootstrap-servers", options.client.bootstrap_servers,
                  "Comma-separated host:port list of brokers")
      ->required();
  reset
      .add_option("--application-id", options.application_id,
                  "The application.id of the application (its consumer group id and the "
                  "prefix of its internal topics)")
      ->required();
}

void add_topic_options(CLI::App& reset, StreamsResetOptions& options) {
  reset
      .add_option("--input-topics", options.input_topics,
                  "Comma-separated input topics, whose offsets are reset (by default to the "
                  "earliest)")
      ->delimiter(',');
  reset
      .add_option("--intermediate-topics", options.intermediate_topics,
                  "Comma-separated topics the application both writes and reads, whose "
                  "offsets are moved to their end")
      ->delimiter(',');
  reset
      .add_option("--internal-topics", options.internal_topics,
                  "Comma-separated internal topics to delete, among those found by name "
                  "(default: every <application-id>-...-changelog, -repartition and "
                  "foreign-key-join subscription topic)")
      ->delimiter(',');
}

void add_scenario_options(CLI::App& reset, StreamsResetOptions& options) {
  CLI::Option_group* scenario =
      reset.add_option_group("scenario", "Where the input topics' offsets go (one at most)");
  scenario->add_flag("--to-earliest", options.to_earliest,
                     "The earliest offset still in the log (the default)");
  scenario->add_flag("--to-latest", options.to_latest, "The end of the log");
  scenario->add_option("--to-offset", options.to_offset,
                       "This offset, moved into the log's [earliest, end] range");
  scenario->add_option(
      "--to-datetime", options.to_datetime,
      fmt::format("The first record with a timestamp at or after this time, {} (local time "
                  "without a zone)",
                  kResetDatetimeFormat));
  scenario->add_option("--by-duration", options.by_duration,
                       fmt::format("The first record at or after this long ago, {} (as PT1H30M)",
                                   kResetDurationFormat));
  scenario->add_option("--shift-by", options.shift_by,
                       "The committed offset plus N (N may be negative; from the end where "
                       "nothing is committed), kept within the log");
  scenario->require_option(0, 1);
}

}  // namespace

void add_streams_command(CLI::App& app) {
  auto options = std::make_shared<StreamsResetOptions>();
  CLI::App* streams = app.add_subcommand("streams", "Tools for Kafka Streams applications");
  streams->require_subcommand(1);
  CLI::App* reset = streams->add_subcommand(
      "reset",
      "Reset an application to process its input again from scratch: reset its input topics' "
      "offsets, move its intermediate topics' to their end, delete its internal topics");
  reset->footer(kResetFooter);
  add_connection_options(*reset, *options);
  add_topic_options(*reset, *options);
  add_scenario_options(*reset, *options);
  reset->add_flag("--dry-run", options->dry_run,
                  "Print what the reset would do without doing any of it");
  reset->add_flag("--force", options->force,
                  "Remove the consumer group's members first instead of refusing (for "
                  "instances that died but whose sessions have not expired yet; a running "
                  "instance would rejoin)");
  reset->callback([options] { reset_streams_application(*options); });
}

}  // namespace oxbow::cli
