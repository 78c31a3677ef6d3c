#pragma once
// The names and record schemas of Confluent's Kafka Music example, which the application and its
// driver share: with the same topics, stores and Avro records, this application, its driver and
// the Java ones interoperate.
#include <cstddef>
#include <cstdint>
#include <string>

namespace kafka_music {

inline const std::string kApplicationId = "kafka-music-charts";
inline const std::string kPlayEventsTopic = "play-events";  // key: region, value: PlayEvent
inline const std::string kSongFeedTopic = "song-feed";      // key: song id (Int64), value: Song
inline const std::string kAllSongsStore = "all-songs";
inline const std::string kSongPlayCountStore = "song-play-count";
inline const std::string kTopFiveByGenreStore = "top-five-songs-by-genre";
inline const std::string kTopFiveStore = "top-five-songs";
inline const std::string kTopFiveKey = "all";  // the overall chart's key in kTopFiveStore
// Shorter plays are skipped (a listener who moved on is not a play).
constexpr int64_t kMinChartableDurationMs = 30 * 1000;
constexpr size_t kChartSize = 5;

inline const std::string kPlayEventSchema =
    R"({"type":"record","name":"PlayEvent","namespace":"io.confluent.examples.streams.avro",)"
    R"("fields":[{"name":"song_id","type":"long"},{"name":"duration","type":"long"}]})";
inline const std::string kSongSchema =
    R"({"type":"record","name":"Song","namespace":"io.confluent.examples.streams.avro",)"
    R"("fields":[{"name":"id","type":"long"},{"name":"album","type":"string"},)"
    R"({"name":"artist","type":"string"},{"name":"name","type":"string"},)"
    R"({"name":"genre","type":"string"}]})";
inline const std::string kSongPlayCountSchema =
    R"({"type":"record","name":"SongPlayCount","namespace":"io.confluent.examples.streams.avro",)"
    R"("fields":[{"name":"song_id","type":"long"},{"name":"plays","type":"long"}]})";

}  // namespace kafka_music
