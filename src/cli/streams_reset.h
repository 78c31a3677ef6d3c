#pragma once
// `oxbow streams reset`: Kafka's kafka-streams-application-reset. With no instance of the
// application running, it moves the offsets its consumer group (the application id) has
// committed for its input topics, moves those of its intermediate topics to their end, and
// deletes its internal topics (changelogs, repartition topics), so that the application
// processes its input again from scratch. Local state (state.dir) is left to the application.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/client_config.h"

namespace oxbow::cli {

struct StreamsResetOptions {
  ClientOptions client;
  std::string application_id;
  std::vector<std::string> input_topics;
  std::vector<std::string> intermediate_topics;
  std::vector<std::string> internal_topics;  // empty: every internal topic found by name
  // Where the input topics' offsets go; at most one is set, none meaning --to-earliest.
  bool to_earliest = false;
  bool to_latest = false;
  std::optional<int64_t> to_offset;
  std::optional<std::string> to_datetime;
  std::optional<std::string> by_duration;
  std::optional<int64_t> shift_by;
  bool dry_run = false;
  bool force = false;  // remove the group's members instead of refusing
};

// Fails the command (throws CLI::RuntimeError(1)) with a one-line error, before changing
// anything, when the group has members (and --force is not given), or a topic is missing.
void reset_streams_application(const StreamsResetOptions& options);

}  // namespace oxbow::cli
