#include "rest_service.h"

#include <charconv>
#include <optional>
#include <string>

#include "music.h"

namespace kafka_music {

namespace streams = oxbow::streams;
namespace rest = oxbow::streams::rest;
using nlohmann::json;
using nlohmann::ordered_json;  // fields in the order the Java example's beans print them

namespace {

const std::string kPrefix = "/kafka-music";

// The stores cannot be read now (not started, rebalancing, migrating): a client should retry.
template <class F>
rest::Response guarded(F f) {
  try {
    return f();
  } catch (const streams::InvalidStateStoreException& e) {
    return rest::Response::error(503, e.what());
  }
}

std::optional<int64_t> parse_id(const std::string& text) {
  int64_t id = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return id;
}

// Bytes that are not UTF-8 (an Avro string may hold any) are replaced rather than failing the
// answer.
std::string dump(const ordered_json& value) {
  return value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

rest::Response song_not_found(const std::string& id) {
  return rest::Response::error(404, "Song with id [" + id + "] was not found");
}

}  // namespace

MusicPlaysService::MusicPlaysService(std::chrono::milliseconds forward_timeout)
    : forward_timeout_(forward_timeout) {}

void MusicPlaysService::attach(const streams::KafkaStreams* streams, streams::HostInfo self) {
  if (streams) self_ = std::move(self);
  streams_.store(streams);
}

const streams::KafkaStreams& MusicPlaysService::app() const {
  const auto* app = streams_.load();
  if (!app) throw streams::InvalidStateStoreException("the application is starting");
  return *app;
}

std::optional<streams::HostInfo> MusicPlaysService::elsewhere(
    const std::optional<streams::KeyQueryMetadata>& metadata) const {
  if (!metadata) return std::nullopt;
  const auto& host = metadata->activeHost();
  if (host == streams::HostInfo::unavailable() || host == self_) return std::nullopt;
  return host;
}

void MusicPlaysService::add_routes(rest::RestServer& server) {
  server.route("GET", kPrefix + "/charts/top-five", [this](const Request& r) {
    return guarded([&] { return chart(r, kTopFiveStore, kTopFiveKey); });
  });
  server.route("GET", kPrefix + "/charts/genre/{genre}", [this](const Request& r) {
    // The Java example looks the owner up with the genre as given and then reads the
    // lower-cased key, so "Punk" may be sent to the wrong instance; the key itself is asked
    // for here.
    return guarded([&] { return chart(r, kTopFiveByGenreStore, lower_case(r.param("genre"))); });
  });
  server.route("GET", kPrefix + "/song/{id}",
               [this](const Request& r) { return guarded([&] { return song(r); }); });
  server.route("GET", kPrefix + "/instances",
               [this](const Request&) { return guarded([&] { return instances(nullptr); }); });
  server.route("GET", kPrefix + "/instances/{store}", [this](const Request& r) {
    return guarded([&] { return instances(&r.param("store")); });
  });
}

rest::Response MusicPlaysService::chart(const Request& request, const std::string& store,
                                        const std::string& key) const {
  const auto& streams = app();
  if (!request.forwarded()) {
    auto owner = elsewhere(streams.queryMetadataForKey(store, key, streams::serdes::String()));
    if (owner) return rest::forward(*owner, request, forward_timeout_);
  }
  auto charts = streams.store(streams::StoreQueryParameters<>::fromNameAndType(
      store, streams::QueryableStoreTypes::keyValueStore<std::string, TopFiveSongs>()));
  auto top = charts.get(key);
  if (!top)
    return rest::Response::error(404, "Unable to find value in " + store + " for key " + key);

  ordered_json out = ordered_json::array();
  for (const auto& entry : top->entries()) {
    Request lookup;
    lookup.method = "GET";
    lookup.path = kPrefix + "/song/" + std::to_string(entry.song_id);
    lookup.params["id"] = std::to_string(entry.song_id);
    auto answer = song(lookup);
    ordered_json item;
    if (answer.status == 200) {
      auto bean = ordered_json::parse(answer.body);
      item = {
          {"artist", bean.at("artist")}, {"album", bean.at("album")}, {"name", bean.at("name")}};
    } else if (answer.status == 404) {
      // The song was deleted from song-feed since it was played (a tombstone).
      item = {{"artist", nullptr}, {"album", nullptr}, {"name", nullptr}};
    } else {
      return answer;
    }
    item["plays"] = entry.plays;
    out.push_back(std::move(item));
  }
  return rest::Response::json(dump(out));
}

rest::Response MusicPlaysService::song(const Request& request) const {
  const std::string& text = request.param("id");
  auto id = parse_id(text);
  if (!id) return song_not_found(text);
  const auto& streams = app();
  if (!request.forwarded()) {
    auto owner =
        elsewhere(streams.queryMetadataForKey(kAllSongsStore, *id, streams::serdes::Int64()));
    if (owner) return rest::forward(*owner, request, forward_timeout_);
  }
  auto songs = streams.store(streams::StoreQueryParameters<>::fromNameAndType(
      kAllSongsStore, streams::QueryableStoreTypes::keyValueStore<int64_t, json>()));
  auto song = songs.get(*id);
  if (!song) return song_not_found(text);
  ordered_json bean = {
      {"artist", song->at("artist")}, {"album", song->at("album")}, {"name", song->at("name")}};
  return rest::Response::json(dump(bean));
}

rest::Response MusicPlaysService::instances(const std::string* store) const {
  const auto& streams = app();
  auto all =
      store ? streams.streamsMetadataForStore(*store) : streams.metadataForAllStreamsClients();
  ordered_json out = ordered_json::array();
  for (const auto& instance : all)
    out.push_back({{"host", instance.host()},
                   {"port", instance.port()},
                   {"storeNames", instance.stateStoreNames()}});
  return rest::Response::json(dump(out));
}

}  // namespace kafka_music
