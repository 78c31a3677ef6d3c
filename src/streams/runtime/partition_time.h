#pragma once
// A task's stream time, kept across restarts as Kafka Streams keeps it: in the metadata of each
// committed input offset, as base64 (standard alphabet) of one version byte (1) and the time as
// 8 bytes big-endian. A restarted task starts from it, so a record that was late before a restart
// is late after it too (windows stay closed), and a Java Streams application reads the same
// metadata.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oxbow::streams::detail {

std::string encode_partition_time(int64_t time);
// nullopt for metadata that is empty or not in that format.
std::optional<int64_t> decode_partition_time(std::string_view metadata);

}  // namespace oxbow::streams::detail
