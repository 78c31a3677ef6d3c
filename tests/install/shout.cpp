// Upper-cases the values of topics "words" and "more-words" (merged) into "shouts". With --driver
// it runs the topology in TopologyTestDriver and prints the results; with --bootstrap-server it
// runs KafkaStreams until it has processed --records records.
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

using namespace oxbow::streams;

namespace {

std::atomic<int> seen{0};

Topology shout() {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("words")
      .merge(builder.stream<std::string, std::string>("more-words"))
      .peek([](const std::string&, const std::string&) { ++seen; })
      .mapValues<std::string>([](std::string v) {
        for (auto& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return v;
      })
      .to("shouts");
  return builder.build();
}

int run_driver() {
  TopologyTestDriver driver(shout());
  auto in = driver.createInputTopic<std::string, std::string>("words");
  in.pipeInput("a", "hello");
  in.pipeInput("b", "streams");
  for (const auto& kv :
       driver.createOutputTopic<std::string, std::string>("shouts").readKeyValuesToList())
    std::printf("%s=%s\n", kv.key.c_str(), kv.value.c_str());
  return 0;
}

int run_app(const std::string& bootstrap, const std::string& state_dir, int records) {
  KafkaStreams app(shout(), {{"application.id", "shout"},
                             {"bootstrap.servers", bootstrap},
                             {"state.dir", state_dir},
                             {"commit.interval.ms", "100"}});
  app.start();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen < records && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  app.close(std::chrono::seconds(30));
  std::printf("processed %d\n", seen.load());
  return seen >= records ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--driver") return run_driver();
  if (argc == 5 && std::string(argv[1]) == "--bootstrap-server")
    return run_app(argv[2], argv[3], std::stoi(argv[4]));
  std::fprintf(stderr, "usage: shout --driver | --bootstrap-server HOST:PORT STATE_DIR RECORDS\n");
  return 2;
}
