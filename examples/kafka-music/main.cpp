// Kafka Music, as Confluent's interactive-queries example: song plays (play-events) and songs
// (song-feed), both Avro through the schema registry, counted into charts of the five most
// played songs overall and per genre, which every instance serves over HTTP (rest_service.h),
// fetching from the instance that holds a chart when that is another one.
// Built on the public headers of oxbow-streams and the registry client only.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "music.h"
#include "oxbow/registry/serdes.h"
#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/rest_server.h"
#include "rest_service.h"

namespace streams = oxbow::streams;

namespace {

int usage(const std::string& error) {
  std::fprintf(stderr,
               "kafka-music: %s\n"
               "usage: kafka-music [--port PORT] [--host HOST] [--bootstrap-server HOST:PORT]\n"
               "                   [--schema-registry-url URL] [--state-dir DIR] [--bind ADDRESS]\n"
               "                   [--forward-timeout-ms MS] [--property KEY=VALUE]...\n"
               "   or: kafka-music PORT [BOOTSTRAP [SCHEMA_REGISTRY_URL [HOST]]]\n"
               "--host is the name other instances and clients reach this one by (its\n"
               "application.server is HOST:PORT); --property (or --config) passes any Streams,\n"
               "client or serde setting, e.g. num.standby.replicas=1.\n",
               error.c_str());
  return 2;
}

struct Options {
  int port = 7070;
  std::string host = "localhost";
  std::string bind;  // default: what host resolves to
  std::string state_dir;
  int64_t forward_timeout_ms = 10000;
  std::map<std::string, std::string> config{{"bootstrap.servers", "localhost:9092"},
                                            {"schema.registry.url", "http://localhost:8081"}};
};

bool parse_number(const std::string& text, int64_t min, int64_t max, int64_t& out) {
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < min || value > max) return false;
  out = value;
  return true;
}

// Returns an error, or empty.
std::string parse(int argc, char** argv, Options& o) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag.rfind("--", 0) != 0) {
      positional.push_back(flag);
      continue;
    }
    if (i + 1 >= argc) return flag + " needs a value";
    std::string value = argv[++i];
    int64_t number = 0;
    if (flag == "--port") {
      if (!parse_number(value, 0, 65535, number)) return "--port: not a port: " + value;
      o.port = static_cast<int>(number);
    } else if (flag == "--host") {
      o.host = value;
    } else if (flag == "--bind") {
      o.bind = value;
    } else if (flag == "--bootstrap-server") {
      o.config["bootstrap.servers"] = value;
    } else if (flag == "--schema-registry-url") {
      o.config["schema.registry.url"] = value;
    } else if (flag == "--state-dir") {
      o.state_dir = value;
    } else if (flag == "--forward-timeout-ms") {
      if (!parse_number(value, 1, 3600000, number)) return "--forward-timeout-ms: " + value;
      o.forward_timeout_ms = number;
    } else if (flag == "--property" || flag == "--config") {
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return flag + " needs KEY=VALUE";
      o.config[value.substr(0, eq)] = value.substr(eq + 1);
    } else {
      return "unknown flag " + flag;
    }
  }
  // The Java example's command line: port, then optionally bootstrap servers, registry, host.
  if (positional.size() > 4) return "too many arguments";
  const char* keys[] = {nullptr, "bootstrap.servers", "schema.registry.url", nullptr};
  for (size_t i = 0; i < positional.size(); ++i) {
    int64_t number = 0;
    if (i == 0) {
      if (!parse_number(positional[0], 0, 65535, number)) return "not a port: " + positional[0];
      o.port = static_cast<int>(number);
    } else if (i == 3) {
      o.host = positional[3];
    } else {
      o.config[keys[i]] = positional[i];
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (auto error = parse(argc, argv, options); !error.empty()) return usage(error);

  // SIGTERM and SIGINT are taken synchronously below, so that no other thread sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    // The HTTP side first: a port that is taken fails here, before the instance joins the group,
    // and with --port 0 the port it got is what application.server announces.
    kafka_music::MusicPlaysService service(std::chrono::milliseconds(options.forward_timeout_ms));
    streams::rest::RestServer server;
    service.add_routes(server);
    server.start(options.bind.empty() ? options.host : options.bind,
                 static_cast<uint16_t>(options.port));
    streams::HostInfo self(options.host, server.port());

    auto& config = options.config;
    config["application.id"] = kafka_music::kApplicationId;
    config["application.server"] = options.host + ":" + std::to_string(server.port());
    // Each instance of one machine keeps its own state: two sharing a directory would wait on
    // each other's task locks.
    if (!options.state_dir.empty()) config["state.dir"] = options.state_dir;
    config.emplace("state.dir", "/tmp/kafka-music-" + std::to_string(server.port()));
    // As the Java example: charts move every half second, and a new application reads the
    // topics from their start.
    config.emplace("commit.interval.ms", "500");
    config.emplace("auto.offset.reset", "earliest");

    auto registry = std::make_shared<oxbow::registry::SchemaRegistryClient>(
        oxbow::registry::SerdeConfig::from_properties(config).client);
    auto topology = kafka_music::build_topology(config, registry);
    std::cerr << topology.describe();

    streams::KafkaStreams app(topology, config);
    std::atomic<bool> failed{false};
    app.setStateListener([&](streams::KafkaStreams::State now, streams::KafkaStreams::State old) {
      std::printf("STATE %s -> %s\n", streams::to_string(old), streams::to_string(now));
      std::fflush(stdout);
      if (now == streams::KafkaStreams::State::ERROR) {
        failed = true;
        kill(getpid(), SIGTERM);
      }
    });
    app.start();
    service.attach(&app, self);
    std::printf("kafka-music: serving http://%s:%u/kafka-music\n", options.host.c_str(),
                static_cast<unsigned>(server.port()));
    std::fflush(stdout);

    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server.stop();
    service.attach(nullptr, self);
    app.close(std::chrono::seconds(30));
    if (failed) {
      std::fprintf(stderr, "kafka-music: the application failed (see the log above)\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kafka-music: %s\n", e.what());
    return 1;
  }
  return 0;
}
