#pragma once
// The points in time Kafka's offset-reset tools take: --to-datetime and --by-duration.
#include <cstdint>
#include <optional>
#include <string_view>

namespace oxbow::cli {

inline constexpr std::string_view kResetDatetimeFormat =
    "YYYY-MM-DDTHH:mm:SS[.sss][Z|+hh:mm|-hh:mm]";
inline constexpr std::string_view kResetDurationFormat = "PnDTnHnMnS";

// An ISO-8601 date-time as milliseconds since the epoch. Without a zone it is local time, as
// Kafka's tools read it.
std::optional<int64_t> parse_reset_datetime(std::string_view text);

// An ISO-8601 duration as java.time.Duration.parse reads it ([-+]P[nD][T[nH][nM][n[.f]S]],
// components signed, letters in either case), in milliseconds.
std::optional<int64_t> parse_reset_duration(std::string_view text);

}  // namespace oxbow::cli
