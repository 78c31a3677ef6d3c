// The Kafka Music example's data generator: writes the example's 21 songs to song-feed (key: the
// song id as Kafka's LongSerializer writes it), then a play of a random song to play-events
// every 100 ms (key "uk", 60 s long), all in Avro through the schema registry, until stopped.
// Built on librdkafka and the registry client's public headers.
#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "oxbow/registry/serdes.h"
#include "schemas.h"

namespace registry = oxbow::registry;
using nlohmann::json;

namespace {

struct Song {
  int64_t id;
  const char* album;
  const char* artist;
  const char* name;
  const char* genre;
};

// The example's song list (its song_source.csv).
const Song kSongs[] = {
    {1, "Fresh Fruit For Rotting Vegetables", "Dead Kennedys", "Chemical Warfare", "Punk"},
    {2, "We Are the League", "Anti-Nowhere League", "Animal", "Punk"},
    {3, "Live In A Dive", "Subhumans", "All Gone Dead", "Punk"},
    {4, "PSI", "Wheres The Pope?", "Fear Of God", "Punk"},
    {5, "Totally Exploited", "The Exploited", "Punks Not Dead", "Punk"},
    {6, "The Audacity Of Hype", "Jello Biafra And The Guantanamo School Of Medicine",
     "Three Strikes", "Punk"},
    {7, "Licensed to Ill", "The Beastie Boys", "Fight For Your Right", "Hip Hop"},
    {8, "De La Soul Is Dead", "De La Soul", "Oodles Of O's", "Hip Hop"},
    {9, "Straight Outta Compton", "N.W.A", "Gangsta Gangsta", "Hip Hop"},
    {10, "Fear Of A Black Planet", "Public Enemy", "911 Is A Joke", "Hip Hop"},
    {11, "Curtain Call - The Hits", "Eminem", "Fack", "Hip Hop"},
    {12, "21", "Adele", "Rolling in the Deep", "Pop"},
    {13, "In The Lonely Hour", "Sam Smith", "Stay With Me", "Pop"},
    {14, "The Calling", "Hilltop Hoods", "The Calling", "Hip Hop"},
    {15, "x", "Ed Sheeran", "Thinking Out Loud", "Pop"},
    {16, "V", "Maroon 5", "Sugar", "Pop"},
    {17, "This Is What The Truth Feels Like", "Gwen Stefani", "Red Flag", "Pop"},
    {18, "This Is Acting", "Sia", "Alive", "Pop"},
    {19, "24K Magic", "Bruno Mars", "That's What I Like", "Pop"},
    {20, "Black Sunday", "Cypress Hill", "Insane in the Brain", "Hip Hop"},
    {21, "Aquemini", "Outkast", "Aquemini", "Hip Hop"},
};

std::atomic<bool> stopping{false};
std::atomic<long> delivery_failures{0};

void on_signal(int) {
  stopping = true;
}

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  if (message->err) {
    ++delivery_failures;
    std::fprintf(stderr, "kafka-music-driver: a record to %s was not written: %s\n",
                 rd_kafka_topic_name(message->rkt), rd_kafka_err2str(message->err));
  }
}

int usage(const std::string& error) {
  std::fprintf(stderr,
               "kafka-music-driver: %s\n"
               "usage: kafka-music-driver [--bootstrap-server HOST:PORT] [--schema-registry-url "
               "URL]\n"
               "                          [--plays N] [--interval-ms MS] [--no-songs] [--seed N]\n"
               "   or: kafka-music-driver [BOOTSTRAP [SCHEMA_REGISTRY_URL]]\n"
               "--plays N stops after N plays (0: the songs only); without it, it runs until "
               "stopped.\n",
               error.c_str());
  return 2;
}

std::string big_endian(int64_t value) {
  std::string out;
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>(static_cast<uint64_t>(value) >> shift));
  return out;
}

class Producer {
 public:
  explicit Producer(const std::string& bootstrap) {
    char error[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    // Keys placed as Java's producer places them (murmur2), where Streams looks for them: a
    // song elsewhere would be missing from the join, and queryMetadataForKey would name the
    // wrong instance. librdkafka's own default is a CRC32 partitioner.
    for (auto [key, value] : {std::pair{"bootstrap.servers", bootstrap.c_str()},
                              std::pair{"partitioner", "murmur2_random"}}) {
      if (rd_kafka_conf_set(conf, key, value, error, sizeof error) != RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        throw std::runtime_error(error);
      }
    }
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (!rk_) throw std::runtime_error(error);
  }
  ~Producer() {
    rd_kafka_flush(rk_, 10000);
    rd_kafka_destroy(rk_);
  }
  void send(const std::string& topic, const std::string& key, const std::string& value) {
    while (true) {
      auto err = rd_kafka_producev(rk_, RD_KAFKA_V_TOPIC(topic.c_str()),
                                   RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
                                   RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        throw std::runtime_error("cannot send to " + topic + ": " + rd_kafka_err2str(err));
      rd_kafka_poll(rk_, 100);
    }
    rd_kafka_poll(rk_, 0);
  }
  bool flush() { return rd_kafka_flush(rk_, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR; }

 private:
  rd_kafka_t* rk_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  std::string bootstrap = "localhost:9092";
  std::map<std::string, std::string> serde_config{{"schema.registry.url", "http://localhost:8081"}};
  long plays = -1;  // forever
  long interval_ms = 100;
  bool songs = true;
  std::random_device device;
  uint64_t seed = device();
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--no-songs") {
      songs = false;
      continue;
    }
    if (flag.rfind("--", 0) != 0) {
      positional.push_back(flag);
      continue;
    }
    if (i + 1 >= argc) return usage(flag + " needs a value");
    std::string value = argv[++i];
    char* end = nullptr;
    long long number = std::strtoll(value.c_str(), &end, 10);
    bool is_number = !value.empty() && *end == '\0' && number >= 0;
    if (flag == "--bootstrap-server") {
      bootstrap = value;
    } else if (flag == "--schema-registry-url") {
      serde_config["schema.registry.url"] = value;
    } else if (flag == "--plays" && is_number) {
      plays = static_cast<long>(number);
    } else if (flag == "--interval-ms" && is_number) {
      interval_ms = static_cast<long>(number);
    } else if (flag == "--seed" && is_number) {
      seed = static_cast<uint64_t>(number);
    } else {
      return usage("bad flag or value: " + flag + " " + value);
    }
  }
  if (positional.size() > 2) return usage("too many arguments");
  if (positional.size() > 0) bootstrap = positional[0];
  if (positional.size() > 1) serde_config["schema.registry.url"] = positional[1];

  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  try {
    auto settings = registry::SerdeConfig::from_properties(serde_config);
    auto client = std::make_shared<registry::SchemaRegistryClient>(settings.client);
    registry::Serializer song_serializer(client, settings, registry::Format::kAvro,
                                         kafka_music::kSongSchema, false);
    registry::Serializer play_serializer(client, settings, registry::Format::kAvro,
                                         kafka_music::kPlayEventSchema, false);
    Producer producer(bootstrap);

    if (songs) {
      for (const auto& s : kSongs) {
        json song{{"id", s.id},
                  {"album", s.album},
                  {"artist", s.artist},
                  {"name", s.name},
                  {"genre", s.genre}};
        producer.send(kafka_music::kSongFeedTopic, big_endian(s.id),
                      song_serializer.serialize(kafka_music::kSongFeedTopic, song));
      }
      if (!producer.flush() || delivery_failures > 0) {
        std::fprintf(stderr, "kafka-music-driver: the songs were not all written\n");
        return 1;
      }
      std::printf("kafka-music-driver: %zu songs written to %s\n", std::size(kSongs),
                  kafka_music::kSongFeedTopic.c_str());
      std::fflush(stdout);
    }

    std::mt19937_64 random(seed);
    std::uniform_int_distribution<size_t> pick(0, std::size(kSongs) - 1);
    long sent = 0;
    auto next = std::chrono::steady_clock::now();
    while (!stopping && (plays < 0 || sent < plays)) {
      json play{{"song_id", kSongs[pick(random)].id}, {"duration", 60000}};
      producer.send(kafka_music::kPlayEventsTopic, "uk",
                    play_serializer.serialize(kafka_music::kPlayEventsTopic, play));
      ++sent;
      next += std::chrono::milliseconds(interval_ms);
      std::this_thread::sleep_until(next);
    }
    if (!producer.flush() || delivery_failures > 0) {
      std::fprintf(stderr, "kafka-music-driver: some plays were not written\n");
      return 1;
    }
    std::printf("kafka-music-driver: %ld plays written to %s\n", sent,
                kafka_music::kPlayEventsTopic.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kafka-music-driver: %s\n", e.what());
    return 1;
  }
  return 0;
}
