#pragma once
// `oxbow topic get-offsets`: the offsets of topic partitions at a time or marker, as Kafka's
// kafka-get-offsets.sh (GetOffsetShell) prints them.

namespace CLI {
class App;
}

namespace oxbow::cli {

void add_get_offsets_subcommand(CLI::App& topic_cmd);

}  // namespace oxbow::cli
