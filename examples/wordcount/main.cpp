// Word count, as Kafka's WordCountDemo: lines from streams-plaintext-input, lower-cased, split on
// runs of non-word characters, counted per word; every count change goes to
// streams-wordcount-output (key: the word, value: the count as a big-endian int64).
// Built on oxbow-streams' public headers only.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace streams = oxbow::streams;

namespace {

// Java's \W+ split: word characters are ASCII letters, digits and '_'.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  for (char c : line) {
    auto u = static_cast<unsigned char>(c);
    if (u < 128 && (std::isalnum(u) || c == '_')) {
      word += static_cast<char>(std::tolower(u));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

int usage(const char* error) {
  std::fprintf(
      stderr,
      "wordcount: %s\nusage: wordcount [--bootstrap-server HOST:PORT] [--application-id ID] "
      "[--state-dir DIR] [--processing-guarantee at_least_once|exactly_once_v2] "
      "[--threads N] [--commit-interval-ms MS] [--metrics-listener HOST:PORT] "
      "[--config KEY=VALUE]... [--skip-production-errors] [--driver]\n",
      error);
  return 2;
}

// --driver: the same topology in TopologyTestDriver, no broker. Lines come from stdin; every
// count change is printed as "word count", in the order the driver produced them.
int run_in_test_driver(const streams::Topology& topology,
                       const std::map<std::string, std::string>& config) {
  streams::TopologyTestDriver driver(topology, config);
  auto input = driver.createInputTopic<std::string, std::string>("streams-plaintext-input");
  auto output = driver.createOutputTopic<std::string, int64_t>("streams-wordcount-output");
  std::string line;
  while (std::getline(std::cin, line)) {
    input.pipeInput(line);
    for (const auto& kv : output.readKeyValuesToList())
      std::printf("%s %lld\n", kv.key.c_str(), static_cast<long long>(kv.value));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // No record cache, as Kafka's WordCountDemo: each count is sent at once instead of at the next
  // commit (up to commit.interval.ms, 30 s), so a person trying it sees counts within a second.
  std::map<std::string, std::string> config{{"bootstrap.servers", "localhost:9092"},
                                            {"application.id", "streams-wordcount"},
                                            {"statestore.cache.max.bytes", "0"}};
  const std::map<std::string, std::string> flags{{"--bootstrap-server", "bootstrap.servers"},
                                                 {"--application-id", "application.id"},
                                                 {"--state-dir", "state.dir"},
                                                 {"--processing-guarantee", "processing.guarantee"},
                                                 {"--threads", "num.stream.threads"},
                                                 {"--commit-interval-ms", "commit.interval.ms"},
                                                 {"--metrics-listener", "metrics.listener"}};
  bool driver = false, skip_production_errors = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--driver") {
      driver = true;
      continue;
    }
    if (std::string(argv[i]) == "--skip-production-errors") {
      skip_production_errors = true;
      continue;
    }
    if (std::string(argv[i]) == "--config" && i + 1 < argc) {
      // Any Streams or client setting, e.g. consumer.session.timeout.ms=6000.
      std::string setting = argv[++i];
      auto eq = setting.find('=');
      if (eq == std::string::npos || eq == 0) return usage("--config needs KEY=VALUE");
      config[setting.substr(0, eq)] = setting.substr(eq + 1);
      continue;
    }
    auto it = flags.find(argv[i]);
    if (it == flags.end()) return usage((std::string("unknown flag ") + argv[i]).c_str());
    if (i + 1 >= argc) return usage((std::string(argv[i]) + " needs a value").c_str());
    config[it->second] = argv[++i];
  }

  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("streams-plaintext-input")
      .flatMapValues<std::string>([](const std::string& line) { return words(line); })
      .groupBy<std::string>([](const std::string&, const std::string& word) { return word; })
      .count(streams::Materialized<std::string, int64_t>::as("counts-store"))
      .toStream()
      .to("streams-wordcount-output");
  auto topology = builder.build();
  if (driver) return run_in_test_driver(topology, config);

  // SIGTERM and SIGINT are taken synchronously below, so that the threads never see them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGUSR1);
  sigaddset(&stop_signals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    streams::KafkaStreams app(topology, config);
    std::atomic<bool> failed{false};
    // A thread that failed stops the application: wake the main thread as a signal would.
    app.setStateListener([&](streams::KafkaStreams::State now, streams::KafkaStreams::State) {
      if (now == streams::KafkaStreams::State::ERROR) {
        failed = true;
        kill(getpid(), SIGTERM);
      }
    });
    // --skip-production-errors: a record the producer cannot write is reported here and skipped.
    if (skip_production_errors)
      app.setProductionExceptionHandler([](const streams::ProductionError& e) {
        std::fprintf(stderr,
                     "wordcount: skipping a record for %s partition %d (%zu-byte key, %zu-byte "
                     "value): %s\n",
                     e.topic.c_str(), e.partition, e.key ? e.key->size() : 0,
                     e.value ? e.value->size() : 0, e.error.c_str());
        return streams::ProductionExceptionHandlerResponse::CONTINUE;
      });
    app.start();
    std::cerr << topology.describe();
    // SIGUSR1 adds a stream thread, SIGUSR2 removes one (KafkaStreams::addStreamThread and
    // removeStreamThread at run time); SIGTERM and SIGINT stop.
    int signal_number = 0;
    while (sigwait(&stop_signals, &signal_number) == 0 &&
           (signal_number == SIGUSR1 || signal_number == SIGUSR2)) {
      auto name = signal_number == SIGUSR1 ? app.addStreamThread() : app.removeStreamThread();
      std::fprintf(stderr, "wordcount: %s stream thread %s\n",
                   signal_number == SIGUSR1 ? "added" : "removed",
                   name ? name->c_str() : "(none: not running, or only one left)");
    }
    app.close(std::chrono::seconds(30));
    if (failed) {
      std::fprintf(stderr, "wordcount: the application failed (see the log above)\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wordcount: %s\n", e.what());
    return 1;
  }
  return 0;
}
