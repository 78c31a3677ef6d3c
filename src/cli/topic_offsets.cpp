#include "cli/topic_offsets.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "cli/client_config.h"
#include "cli/wire_client.h"
#include "common/properties.h"
#include "protocol/errors.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/metadata.h"

namespace oxbow::cli {
namespace {

namespace pr = oxbow::protocol;

struct GetOffsetsOptions {
  ClientOptions client;
  std::string topic_pattern;  // a regular expression over whole names; empty: every topic
  std::string partitions;     // "0,2,4-7"; empty: every partition
  std::string time = "latest";
  bool exclude_internal = false;
};

const std::map<std::string, int64_t>& named_times() {
  static const std::map<std::string, int64_t> names{{"latest", -1},
                                                    {"earliest", -2},
                                                    {"max-timestamp", -3},
                                                    {"earliest-local", -4},
                                                    {"latest-tiered", -5}};
  return names;
}

// A timestamp in ms, or one of Kafka's markers (-1 latest ... -5 latest-tiered) by number or name.
int64_t parse_time(const std::string& text) {
  if (auto it = named_times().find(text); it != named_times().end()) return it->second;
  auto value = parse_int64(text);
  if (!value || *value < -5) {
    fail(
        fmt::format("malformed --time '{}': use a timestamp in ms, or -1 or latest, -2 or "
                    "earliest, -3 or max-timestamp, -4 or earliest-local, -5 or latest-tiered",
                    text));
  }
  return *value;
}

struct PartitionRange {
  int64_t first = 0;
  int64_t last = 0;
};

// "0,2,4-7" as the ranges it names.
std::vector<PartitionRange> parse_partitions(const std::string& text) {
  std::vector<PartitionRange> out;
  std::string_view rest = text;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    auto dash = item.find('-', 1);
    auto first = parse_int64(item.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parse_int64(item.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first || *last > INT32_MAX) {
      fail(fmt::format("malformed --partitions '{}': use ids and ranges, as 0,2,4-7", text));
    }
    out.push_back({*first, *last});
  }
  return out;
}

bool wanted_partition(const std::vector<PartitionRange>& wanted, int32_t partition) {
  return wanted.empty() || std::any_of(wanted.begin(), wanted.end(), [&](const auto& range) {
           return range.first <= partition && partition <= range.last;
         });
}

// ListOffsets' first version to know the marker: the oldest that serves the request.
int16_t list_offsets_version(int64_t timestamp) {
  switch (timestamp) {
    case -3:
      return 7;
    case -4:
      return 8;
    case -5:
      return 9;
    default:
      return 5;
  }
}

using Partitions = std::map<std::string, std::vector<int32_t>>;

Partitions matching_partitions(WireClient& wire, const GetOffsetsOptions& options) {
  pr::MetadataRequest request;  // no topics named: every topic
  request.allow_auto_topic_creation = false;
  constexpr int16_t kVersion = 4;
  auto metadata = wire.call<pr::MetadataResponse>(pr::MetadataRequest::kApiKey, kVersion, request);
  std::regex pattern;
  try {
    pattern = std::regex(options.topic_pattern.empty() ? ".*" : options.topic_pattern);
  } catch (const std::regex_error&) {
    fail(fmt::format("malformed topic pattern '{}'", options.topic_pattern));
  }
  auto wanted = parse_partitions(options.partitions);
  Partitions out;
  for (const auto& topic : metadata.topics) {
    if (topic.error_code != 0 || !topic.name) continue;
    if (options.exclude_internal && topic.is_internal) continue;
    if (!std::regex_match(*topic.name, pattern)) continue;
    for (const auto& p : topic.partitions) {
      if (wanted_partition(wanted, p.partition_index))
        out[*topic.name].push_back(p.partition_index);
    }
  }
  for (auto& [_, partitions] : out) std::sort(partitions.begin(), partitions.end());
  return out;
}

void get_offsets(const GetOffsetsOptions& options) {
  int64_t timestamp = parse_time(options.time);
  WireClient wire(options.client);
  auto partitions = matching_partitions(wire, options);
  if (partitions.empty()) fail("could not match any topic-partitions with the specified filters");
  pr::ListOffsetsRequest request;
  request.replica_id = -1;
  for (const auto& [topic, ids] : partitions) {
    auto& t = request.topics.emplace_back();
    t.name = topic;
    for (int32_t id : ids) t.partitions.push_back({id, -1, timestamp, 1});
  }
  int16_t version = list_offsets_version(timestamp);
  auto response =
      wire.call<pr::ListOffsetsResponse>(pr::ListOffsetsRequest::kApiKey, version, request);
  // As GetOffsetShell: topic:partition:offset, a partition without an offset for that time left
  // out, and a partition's error reported and skipped.
  std::map<std::pair<std::string, int32_t>, int64_t> found;
  for (const auto& topic : response.topics) {
    for (const auto& p : topic.partitions) {
      if (p.error_code != 0) {
        fmt::print(stderr, "Skip getting offsets for topic-partition {}-{} due to error: {}\n",
                   topic.name, p.partition_index, error_text(p.error_code));
      } else if (p.offset != -1) {
        found[{topic.name, p.partition_index}] = p.offset;
      }
    }
  }
  for (const auto& [tp, offset] : found) fmt::print("{}:{}:{}\n", tp.first, tp.second, offset);
}

}  // namespace

void add_get_offsets_subcommand(CLI::App& topic_cmd) {
  auto options = std::make_shared<GetOffsetsOptions>();
  CLI::App* sub = topic_cmd.add_subcommand(
      "get-offsets", "Print topic:partition:offset at a time or marker (as kafka-get-offsets.sh)");
  add_client_options(*sub, options->client);
  sub->add_option("topic", options->topic_pattern,
                  "Topic name or regular expression over whole names (default: every topic)");
  sub->add_option("--partitions", options->partitions,
                  "Partition ids and ranges, as 0,2,4-7 (default: every partition)");
  sub->add_option("--time", options->time,
                  "A timestamp in ms, or -1/latest, -2/earliest, -3/max-timestamp, "
                  "-4/earliest-local, -5/latest-tiered")
      ->capture_default_str();
  sub->add_flag("--exclude-internal-topics", options->exclude_internal,
                "Leave out __consumer_offsets and __transaction_state");
  sub->callback([options] { get_offsets(*options); });
}

}  // namespace oxbow::cli
