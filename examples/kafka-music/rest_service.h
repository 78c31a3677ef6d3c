#pragma once
// The charts over HTTP, under /kafka-music, as the Java example's MusicPlaysRestService answers:
//
//   GET /kafka-music/charts/top-five        [{"artist","album","name","plays"}, ...] (up to 5)
//   GET /kafka-music/charts/genre/{genre}   the same for one genre (any case)
//   GET /kafka-music/song/{id}              {"artist","album","name"}; 404 for an unknown song
//   GET /kafka-music/instances              [{"host","port","storeNames"}, ...]
//   GET /kafka-music/instances/{store}      the instances holding that store
//
// Any instance answers any of them: a chart or a song held by another instance (as the group's
// assignment says, KafkaStreams::queryMetadataForKey) is fetched from it. Where that metadata
// is not available, or names this instance, the local stores answer.
#include <atomic>
#include <chrono>
#include <optional>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/rest_server.h"

namespace kafka_music {

class MusicPlaysService {
 public:
  explicit MusicPlaysService(std::chrono::milliseconds forward_timeout);

  void add_routes(oxbow::streams::rest::RestServer& server);
  // The application the routes read, and its application.server endpoint; until it is set (and
  // after it is set to null) they answer 503. Set it before the application can go away.
  void attach(const oxbow::streams::KafkaStreams* streams, oxbow::streams::HostInfo self);

 private:
  using Request = oxbow::streams::rest::Request;
  using Response = oxbow::streams::rest::Response;

  const oxbow::streams::KafkaStreams& app() const;
  Response chart(const Request& request, const std::string& store, const std::string& key) const;
  Response song(const Request& request) const;
  Response instances(const std::string* store) const;
  // Where a key of a store lives when that is another instance; nothing for "here", and for
  // "not known" (no metadata yet), which the local stores answer.
  std::optional<oxbow::streams::HostInfo> elsewhere(
      const std::optional<oxbow::streams::KeyQueryMetadata>& metadata) const;

  std::chrono::milliseconds forward_timeout_;
  // Written once before streams_ is published, read only after a handler found streams_ set.
  oxbow::streams::HostInfo self_;
  std::atomic<const oxbow::streams::KafkaStreams*> streams_{nullptr};
};

}  // namespace kafka_music
