#pragma once
// The kafka-music application's chart type and topology.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oxbow/registry/client.h"
#include "oxbow/streams/serde.h"
#include "oxbow/streams/topology.h"
#include "schemas.h"

namespace kafka_music {

struct SongPlays {
  int64_t song_id = 0;
  int64_t plays = 0;
  bool operator==(const SongPlays&) const = default;
};

// A chart: at most five songs, most plays first, equal plays by the smaller song id. Each song
// is in it once: a song's new count replaces its old one.
class TopFiveSongs {
 public:
  void add(const SongPlays& entry);
  // Takes out exactly this entry (song and count), as the aggregation's subtractor does with a
  // count that is being replaced; another count of the same song stays.
  void remove(const SongPlays& entry);
  const std::vector<SongPlays>& entries() const { return entries_; }

 private:
  std::vector<SongPlays> entries_;  // in chart order
};

// The chart's bytes as the Java example writes them: each entry as song id then plays, 8 bytes
// big-endian each, in chart order, with nothing around them.
oxbow::streams::Serde<TopFiveSongs> top_five_serde();

// ASCII lower case: the genre charts' keys ("Hip Hop" -> "hip hop").
std::string lower_case(std::string text);

// `serde_config` holds schema.registry.url (and any other serde setting); every Avro serde of
// the topology shares `registry`.
oxbow::streams::Topology build_topology(
    const std::map<std::string, std::string>& serde_config,
    std::shared_ptr<oxbow::registry::SchemaRegistryClient> registry);

}  // namespace kafka_music
