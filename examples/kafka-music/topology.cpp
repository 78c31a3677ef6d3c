// The charts' topology, as Confluent's Kafka Music example builds it:
//
//   play-events --filter(duration >= 30 s)--> map(key: song id) --leftJoin(all-songs)-->
//     groupBy(song) --count--> song-play-count
//   song-play-count --groupBy(lower-case genre)--> aggregate --> top-five-songs-by-genre
//   song-play-count --groupBy("all")-->            aggregate --> top-five-songs
#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>

#include "music.h"
#include "oxbow/streams/registry_serde.h"
#include "oxbow/streams/streams_builder.h"

namespace kafka_music {

namespace streams = oxbow::streams;
using nlohmann::json;

namespace {

bool ranks_before(const SongPlays& a, const SongPlays& b) {
  if (a.plays != b.plays) return a.plays > b.plays;
  return a.song_id < b.song_id;
}

void put_int64(std::string& out, int64_t value) {
  auto v = static_cast<uint64_t>(value);
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

int64_t get_int64(std::string_view bytes) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return static_cast<int64_t>(v);
}

json song_play_count(const json& song, int64_t plays) {
  return json{{"song_id", song.at("id")}, {"plays", plays}};
}

SongPlays song_plays(const json& count) {
  return SongPlays{count.at("song_id").get<int64_t>(), count.at("plays").get<int64_t>()};
}

}  // namespace

void TopFiveSongs::add(const SongPlays& entry) {
  std::erase_if(entries_, [&](const SongPlays& e) { return e.song_id == entry.song_id; });
  entries_.insert(std::upper_bound(entries_.begin(), entries_.end(), entry, ranks_before), entry);
  if (entries_.size() > kChartSize) entries_.resize(kChartSize);
}

void TopFiveSongs::remove(const SongPlays& entry) {
  std::erase(entries_, entry);
}

streams::Serde<TopFiveSongs> top_five_serde() {
  streams::Serde<TopFiveSongs> serde;
  serde.name = "TopFiveSerde";
  serde.serialize = [](std::string_view, const TopFiveSongs& chart) {
    std::string out;
    for (const auto& e : chart.entries()) {
      put_int64(out, e.song_id);
      put_int64(out, e.plays);
    }
    return out;
  };
  serde.deserialize = [](std::string_view, std::string_view bytes) {
    if (bytes.size() % 16 != 0)
      throw streams::SerializationException("a chart is 16 bytes per song, not " +
                                            std::to_string(bytes.size()) + " bytes");
    TopFiveSongs chart;
    for (size_t at = 0; at < bytes.size(); at += 16)
      chart.add(SongPlays{get_int64(bytes.substr(at)), get_int64(bytes.substr(at + 8))});
    return chart;
  };
  return serde;
}

std::string lower_case(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

streams::Topology build_topology(const std::map<std::string, std::string>& serde_config,
                                 std::shared_ptr<oxbow::registry::SchemaRegistryClient> registry) {
  namespace serdes = streams::serdes;
  auto play_event_serde = serdes::Avro(serde_config, kPlayEventSchema, false, registry);
  auto song_serde = serdes::Avro(serde_config, kSongSchema, false, registry);
  auto song_key_serde = serdes::Avro(serde_config, kSongSchema, true, registry);
  auto song_play_count_serde = serdes::Avro(serde_config, kSongPlayCountSchema, false, registry);

  streams::StreamsBuilder builder;
  auto plays = builder.stream<std::string, json>(
      kPlayEventsTopic,
      streams::Consumed<std::string, json>::with(serdes::String(), play_event_serde));
  auto songs = builder.table<int64_t, json>(
      kSongFeedTopic, streams::Consumed<int64_t, json>::with(serdes::Int64(), song_serde),
      streams::Materialized<int64_t, json>::as(kAllSongsStore));

  auto song_play_counts =
      plays
          .filter([](const std::string&, const json& play) {
            return play.at("duration").get<int64_t>() >= kMinChartableDurationMs;
          })
          .map<int64_t, json>([](const std::string&, const json& play) {
            return streams::KeyValue<int64_t, json>{play.at("song_id").get<int64_t>(), play};
          })
          .leftJoin<json, json>(
              songs,
              [](const json&, const std::optional<json>& song) { return song.value_or(json()); },
              streams::Joined<int64_t, json, json>::with(serdes::Int64(), play_event_serde,
                                                         song_serde))
          // Kafka drops a record whose new key is null where it is repartitioned, which is what
          // happens there to the plays of songs the table does not know; here the key would be
          // a JSON null, which the Song serde cannot write, so they are dropped explicitly.
          .filter([](int64_t, const json& song) { return !song.is_null(); })
          .groupBy<json>([](int64_t, const json& song) { return song; },
                         streams::Grouped<json, json>::with(song_key_serde, song_serde))
          .count(streams::Materialized<json, int64_t>::as(kSongPlayCountStore)
                     .withKeySerde(song_serde));

  auto chart_of = [&](const std::string& store, std::function<std::string(const json&)> key_of) {
    song_play_counts
        .groupBy<std::string, json>(
            [key_of](const json& song, int64_t plays) {
              return streams::KeyValue<std::string, json>{key_of(song),
                                                          song_play_count(song, plays)};
            },
            streams::Grouped<std::string, json>::with(serdes::String(), song_play_count_serde))
        .aggregate<TopFiveSongs>([] { return TopFiveSongs(); },
                                 [](const std::string&, const json& count, TopFiveSongs chart) {
                                   chart.add(song_plays(count));
                                   return chart;
                                 },
                                 [](const std::string&, const json& count, TopFiveSongs chart) {
                                   chart.remove(song_plays(count));
                                   return chart;
                                 },
                                 streams::Materialized<std::string, TopFiveSongs>::as(store)
                                     .withKeySerde(serdes::String())
                                     .withValueSerde(top_five_serde()));
  };
  chart_of(kTopFiveByGenreStore,
           [](const json& song) { return lower_case(song.at("genre").get<std::string>()); });
  chart_of(kTopFiveStore, [](const json&) { return kTopFiveKey; });
  return builder.build();
}

}  // namespace kafka_music
