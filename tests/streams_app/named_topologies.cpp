// streams_named_app: two named topologies in one KafkaStreams instance (its threads, clients and
// group), for tests/integration/test_streams_named_topologies.py, on oxbow-streams' public
// headers only:
//   upper  "nt-upper-input" (String/String) -> mapValues(upper case) -> "nt-upper-output"
//   count  "nt-count-input" (String/String) -> selectKey(value) -> groupByKey -> count into
//          Materialized.as("counts") -> toStream -> "nt-count-output" (key String, value
//          big-endian int64): a repartition topic and a changelog under its prefix
//   late   "nt-late-input" (String/String) -> mapValues(reversed) -> "nt-late-output", added while
//          running on SIGUSR2 (prints "ADDED late" or "ADD ERROR <message>"); --late-input TOPIC
//          makes it read another topic (nt-upper-input: one that upper reads too), and
//          --late-at-start yes adds it before start instead
// SIGHUP removes the count topology with resetOffsets (prints "REMOVED count" or
// "REMOVE ERROR <message>").
// --prefix NAME=PREFIX gives topology NAME its internal topics' prefix (default:
// "<application.id>-<NAME>"). Every state change is printed as "STATE <old> -> <new>". SIGUSR1
// prints one line of interactive queries: "IQ counts <k=v,...>" (the count topology's store,
// keys in order) and "IQ unnamed <exception class>" (the same store asked without a topology).
// SIGTERM or SIGINT closes and exits 0; the state ERROR exits 3; bad usage exits 2.
// Usage: streams_named_app [--bootstrap-server B] [--application-id ID] [--state-dir DIR]
//        [--processing-guarantee G] [--threads N] [--prefix NAME=PREFIX]... [--config K=V]...
//        [--late-input TOPIC] [--late-at-start yes]
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <map>
#include <string>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"

namespace streams = oxbow::streams;

namespace {

int usage(const std::string& error) {
  std::fprintf(stderr,
               "streams_named_app: %s\nusage: streams_named_app [--bootstrap-server B] "
               "[--application-id ID] [--state-dir DIR] [--processing-guarantee G] [--threads N] "
               "[--prefix NAME=PREFIX]... [--config KEY=VALUE]... [--late-input TOPIC] "
               "[--late-at-start yes]\n",
               error.c_str());
  return 2;
}

streams::Topology upper() {
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("nt-upper-input")
      .mapValues([](const std::string& v) {
        std::string out = v;
        for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return out;
      })
      .to("nt-upper-output");
  return builder.build();
}

streams::Topology count() {
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("nt-count-input")
      .selectKey([](const std::string&, const std::string& v) { return v; })
      .groupByKey()
      .count(streams::Materialized<std::string, int64_t>::as("counts"))
      .toStream()
      .to("nt-count-output");
  return builder.build();
}

streams::Topology late(const std::string& input) {
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>(input)
      .mapValues([](const std::string& v) { return std::string(v.rbegin(), v.rend()); })
      .to("nt-late-output");
  return builder.build();
}

// SIGUSR2 and SIGHUP: a topology added or removed while running.
void add_late(streams::KafkaStreams& app, const std::string& input,
              const std::map<std::string, std::string>& prefixes) {
  auto prefix = prefixes.find("late");
  app.addNamedTopology("late", late(input), prefix == prefixes.end() ? "" : prefix->second);
}

void change(streams::KafkaStreams& app, int number, const std::string& late_input,
            const std::map<std::string, std::string>& prefixes) {
  bool add = number == SIGUSR2;
  try {
    if (add) {
      add_late(app, late_input, prefixes);
    } else {
      app.removeNamedTopology("count", true);
    }
    std::printf(add ? "ADDED late\n" : "REMOVED count\n");
  } catch (const std::exception& e) {
    std::printf("%s ERROR %s\n", add ? "ADD" : "REMOVE", e.what());
  }
  std::fflush(stdout);
}

void print_queries(const streams::KafkaStreams& app) {
  auto params = streams::StoreQueryParameters<>::fromNameAndType(
      "counts", streams::QueryableStoreTypes::keyValueStore<std::string, int64_t>());
  std::string line = "IQ counts ";
  try {
    std::map<std::string, int64_t> all;
    for (const auto& kv : app.store("count", params).all()) all[kv.key] = kv.value;
    bool first = true;
    for (const auto& [k, v] : all) {
      line += (first ? "" : ",") + k + "=" + std::to_string(v);
      first = false;
    }
  } catch (const std::exception& e) {
    line += std::string("ERROR ") + e.what();
  }
  try {
    app.store(params);
    line += "; IQ unnamed found";
  } catch (const streams::UnknownStateStoreException&) {
    line += "; IQ unnamed UnknownStateStoreException";
  } catch (const std::exception& e) {
    line += std::string("; IQ unnamed ") + e.what();
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> config{{"bootstrap.servers", "localhost:9092"},
                                            {"application.id", "streams-named"}};
  const std::map<std::string, std::string> flags{{"--bootstrap-server", "bootstrap.servers"},
                                                 {"--application-id", "application.id"},
                                                 {"--state-dir", "state.dir"},
                                                 {"--processing-guarantee", "processing.guarantee"},
                                                 {"--threads", "num.stream.threads"}};
  std::map<std::string, std::string> prefixes;
  std::string late_input = "nt-late-input";
  bool late_at_start = false;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return usage(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--config" || flag == "--prefix") {
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return usage(flag + " needs KEY=VALUE");
      (flag == "--config" ? config : prefixes)[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (flag == "--late-input") {
      late_input = value;
    } else if (flag == "--late-at-start") {
      late_at_start = value == "yes";
    } else if (auto it = flags.find(flag); it != flags.end()) {
      config[it->second] = value;
    } else {
      return usage("unknown flag " + flag);
    }
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGUSR2);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  try {
    streams::KafkaStreams app(config);
    app.addNamedTopology("upper", upper(), prefixes["upper"]);
    app.addNamedTopology("count", count(), prefixes["count"]);
    if (late_at_start) add_late(app, late_input, prefixes);
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
    int number = 0;
    while (sigwait(&signals, &number) == 0 && number != SIGTERM && number != SIGINT) {
      if (number == SIGUSR1)
        print_queries(app);
      else
        change(app, number, late_input, prefixes);
    }
    app.close(std::chrono::seconds(30));
    return failed ? 3 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "streams_named_app: %s\n", e.what());
    return 1;
  }
}
