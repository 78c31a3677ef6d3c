// Windowed count: records from windowed-count-input counted per key and time window, by event
// time (the record's timestamp); values are ignored. Every count goes to windowed-count-output with
// the key in Kafka Streams' time-windowed format (the key's UTF-8 bytes, then the window start as 8
// bytes big-endian: Java reads it with WindowedSerdes.timeWindowedSerdeFrom(String.class, size))
// and the count as a big-endian int64. Session windows use the session-windowed format (key, then
// end and start), and a session merged into another is deleted with a tombstone (--emit changes).
//
//   --window tumbling|hopping|sliding|session   (tumbling by default)
//   --size-ms N     the window size (tumbling, hopping; sliding: the time difference)
//   --advance-ms N  how far each hopping window starts after the previous one (0 < N <= size)
//   --gap-ms N      the inactivity gap (session windows)
//   --grace-ms N    how long after its end a window still takes late records (0 by default)
//   --emit changes  every update of a window's count (the default)
//   --emit final    one record per window, once it has closed (KTable.suppress untilWindowCloses)
//
// Sliding windows (KIP-450) take --size-ms as their time difference: a window [t - size, t] ends
// at each record and one starts just after it, both ends inclusive.
// The other flags are wordcount's. Built on oxbow-streams' public headers only.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/suppressed.h"
#include "oxbow/streams/test_driver.h"
#include "oxbow/streams/windows.h"

namespace streams = oxbow::streams;
using std::chrono::milliseconds;

namespace {

constexpr const char* kInput = "windowed-count-input";
constexpr const char* kOutput = "windowed-count-output";

enum class WindowKind { kTumbling, kHopping, kSliding, kSession };
enum class Emit { kChanges, kFinal };

struct WindowOptions {
  WindowKind kind = WindowKind::kTumbling;
  std::string kind_name = "tumbling";
  std::optional<int64_t> size_ms, advance_ms, gap_ms;
  int64_t grace_ms = 0;
  Emit emit = Emit::kChanges;
};

// A command line the example cannot run with: the message is printed as one line, exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const char* const kUsage =
    "usage: windowed-count [--window tumbling|hopping|sliding|session] [--size-ms N] "
    "[--advance-ms N] [--gap-ms N] [--grace-ms N] [--emit changes|final] "
    "[--bootstrap-server HOST:PORT] [--application-id ID] [--state-dir DIR] "
    "[--processing-guarantee at_least_once|exactly_once_v2] [--threads N] "
    "[--commit-interval-ms MS] [--metrics-listener HOST:PORT] [--config KEY=VALUE]... [--driver]\n"
    "--driver: no broker; reads \"KEY TIMESTAMP\" lines from stdin and prints every output record "
    "as \"KEY WINDOW_START WINDOW_END COUNT\"\n";

int64_t milliseconds_flag(const std::string& flag, const std::string& text, bool positive) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0 ||
      (positive && value == 0))
    throw UsageError(flag + " needs " + (positive ? "a positive" : "a non-negative") +
                     " number of milliseconds, not \"" + text + "\"");
  return value;
}

WindowKind window_kind(const std::string& name) {
  if (name == "tumbling") return WindowKind::kTumbling;
  if (name == "hopping") return WindowKind::kHopping;
  if (name == "sliding") return WindowKind::kSliding;
  if (name == "session") return WindowKind::kSession;
  throw UsageError("--window must be tumbling, hopping, sliding or session, not \"" + name + "\"");
}

// What a window kind needs from the command line and what it has no use for.
void require(const std::optional<int64_t>& value, const char* flag, const WindowOptions& o) {
  if (!value) throw UsageError("--window " + o.kind_name + " needs " + flag);
}
void refuse(const std::optional<int64_t>& value, const char* flag, const WindowOptions& o) {
  if (value) throw UsageError(std::string(flag) + " does not apply to --window " + o.kind_name);
}

// Downstream of the windowed count, the same for every kind of window: the final results only with
// --emit final, out to the output topic with the window kind's key format.
void to_output(const streams::KTable<streams::Windowed<std::string>, int64_t>& counts,
               const WindowOptions& o, streams::Serde<streams::Windowed<std::string>> key_serde) {
  auto table = counts;
  if (o.emit == Emit::kFinal)
    table = table.suppress(streams::Suppressed<streams::Windowed<std::string>>::untilWindowCloses(
        streams::BufferConfig::unbounded()));
  table.toStream().to(kOutput, streams::Produced<streams::Windowed<std::string>, int64_t>::with(
                                   std::move(key_serde), streams::serdes::Int64()));
}

// The topology for the window kind asked for. Sliding and session windows are to be added here
// (SlidingWindows, SessionWindows and their windowedBy) once the library has them.
streams::Topology build_topology(const WindowOptions& o) {
  streams::StreamsBuilder builder;
  auto grouped = builder
                     .stream<std::string, streams::Bytes>(
                         kInput, streams::Consumed<std::string, streams::Bytes>::with(
                                     streams::serdes::String(), streams::serdes::ByteArray()))
                     .groupByKey();
  switch (o.kind) {
    case WindowKind::kTumbling: {
      require(o.size_ms, "--size-ms", o);
      refuse(o.advance_ms, "--advance-ms", o);
      refuse(o.gap_ms, "--gap-ms", o);
      auto windows =
          streams::TimeWindows::ofSizeAndGrace(milliseconds(*o.size_ms), milliseconds(o.grace_ms));
      to_output(grouped.windowedBy(windows).count(), o,
                streams::serdes::TimeWindowed(streams::serdes::String(), windows.size()));
      break;
    }
    case WindowKind::kHopping: {
      require(o.size_ms, "--size-ms", o);
      require(o.advance_ms, "--advance-ms", o);
      refuse(o.gap_ms, "--gap-ms", o);
      if (*o.advance_ms > *o.size_ms)
        throw UsageError("--advance-ms cannot be more than --size-ms");
      auto windows =
          streams::TimeWindows::ofSizeAndGrace(milliseconds(*o.size_ms), milliseconds(o.grace_ms))
              .advanceBy(milliseconds(*o.advance_ms));
      to_output(grouped.windowedBy(windows).count(), o,
                streams::serdes::TimeWindowed(streams::serdes::String(), windows.size()));
      break;
    }
    case WindowKind::kSession: {
      require(o.gap_ms, "--gap-ms", o);
      refuse(o.size_ms, "--size-ms", o);
      refuse(o.advance_ms, "--advance-ms", o);
      auto windows = streams::SessionWindows::ofInactivityGapAndGrace(milliseconds(*o.gap_ms),
                                                                      milliseconds(o.grace_ms));
      to_output(grouped.windowedBy(windows).count(), o,
                streams::serdes::SessionWindowed(streams::serdes::String()));
      break;
    }
    case WindowKind::kSliding: {
      // --size-ms is the time difference: windows [start, start + size], both ends inclusive.
      require(o.size_ms, "--size-ms", o);
      refuse(o.advance_ms, "--advance-ms", o);
      refuse(o.gap_ms, "--gap-ms", o);
      auto windows = streams::SlidingWindows::ofTimeDifferenceAndGrace(milliseconds(*o.size_ms),
                                                                       milliseconds(o.grace_ms));
      to_output(grouped.windowedBy(windows).count(), o,
                streams::serdes::TimeWindowed(streams::serdes::String(), *o.size_ms));
      break;
    }
  }
  return builder.build();
}

// --driver: the same topology in TopologyTestDriver, no broker. Each stdin line is "KEY TIMESTAMP";
// each output record is printed as "KEY WINDOW_START WINDOW_END COUNT", in the order the driver
// produced them.
int run_in_test_driver(const streams::Topology& topology,
                       const std::map<std::string, std::string>& config,
                       streams::Serde<streams::Windowed<std::string>> key_serde) {
  streams::TopologyTestDriver driver(topology, config);
  auto input = driver.createInputTopic<std::string, streams::Bytes>(
      kInput, streams::serdes::String(), streams::serdes::ByteArray());
  auto output = driver.createOutputTopic<streams::Windowed<std::string>, int64_t>(
      kOutput, std::move(key_serde), streams::serdes::Int64());
  std::string line;
  for (int number = 1; std::getline(std::cin, line); ++number) {
    std::istringstream fields(line);
    std::string key;
    int64_t timestamp = 0;
    if (!(fields >> key >> timestamp)) {
      std::fprintf(stderr, "windowed-count: line %d is not \"KEY TIMESTAMP\"\n", number);
      return 2;
    }
    input.pipeInput(key, streams::Bytes{}, timestamp);
    // A deleted (merged-away) session prints "deleted" for its count.
    for (const auto& r : output.readRecordsToList())
      std::printf("%s %lld %lld %s\n", r.key->key.c_str(),
                  static_cast<long long>(r.key->window.start),
                  static_cast<long long>(r.key->window.end),
                  r.value ? std::to_string(*r.value).c_str() : "deleted");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> config{{"bootstrap.servers", "localhost:9092"},
                                            {"application.id", "streams-windowed-count"}};
  const std::map<std::string, std::string> flags{{"--bootstrap-server", "bootstrap.servers"},
                                                 {"--application-id", "application.id"},
                                                 {"--state-dir", "state.dir"},
                                                 {"--processing-guarantee", "processing.guarantee"},
                                                 {"--threads", "num.stream.threads"},
                                                 {"--commit-interval-ms", "commit.interval.ms"},
                                                 {"--metrics-listener", "metrics.listener"}};
  const std::set<std::string> window_flags{"--window", "--size-ms",  "--advance-ms",
                                           "--gap-ms", "--grace-ms", "--emit"};
  WindowOptions window;
  bool driver = false;
  std::optional<streams::Topology> topology;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      }
      if (flag == "--driver") {
        driver = true;
        continue;
      }
      if (!flags.count(flag) && !window_flags.count(flag) && flag != "--config")
        throw UsageError("unknown flag " + flag + " (--help lists them)");
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--config") {
        // Any Streams or client setting, e.g. statestore.cache.max.bytes=0.
        auto eq = value.find('=');
        if (eq == std::string::npos || eq == 0)
          throw UsageError("--config needs KEY=VALUE, not \"" + value + "\"");
        config[value.substr(0, eq)] = value.substr(eq + 1);
      } else if (flag == "--window") {
        window.kind = window_kind(value);
        window.kind_name = value;
      } else if (flag == "--size-ms") {
        window.size_ms = milliseconds_flag(flag, value, true);
      } else if (flag == "--advance-ms") {
        window.advance_ms = milliseconds_flag(flag, value, true);
      } else if (flag == "--gap-ms") {
        window.gap_ms = milliseconds_flag(flag, value, true);
      } else if (flag == "--grace-ms") {
        window.grace_ms = milliseconds_flag(flag, value, false);
      } else if (flag == "--emit") {
        if (value != "changes" && value != "final")
          throw UsageError("--emit must be changes or final, not \"" + value + "\"");
        window.emit = value == "final" ? Emit::kFinal : Emit::kChanges;
      } else {
        config[flags.at(flag)] = value;
      }
    }
    topology = build_topology(window);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "windowed-count: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    // The library refusing a window definition the checks above let through.
    std::fprintf(stderr, "windowed-count: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "windowed-count: %s\n", e.what());
    return 1;
  }
  if (driver)
    return run_in_test_driver(
        *topology, config,
        window.kind == WindowKind::kSession
            ? streams::serdes::SessionWindowed(streams::serdes::String())
            : streams::serdes::TimeWindowed(streams::serdes::String(), window.size_ms.value_or(0)));

  // SIGTERM and SIGINT are taken synchronously below, so that the threads never see them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    streams::KafkaStreams app(*topology, config);
    std::atomic<bool> failed{false};
    // A thread that failed stops the application: wake the main thread as a signal would.
    app.setStateListener([&](streams::KafkaStreams::State now, streams::KafkaStreams::State) {
      if (now == streams::KafkaStreams::State::ERROR) {
        failed = true;
        kill(getpid(), SIGTERM);
      }
    });
    app.start();
    std::cerr << topology->describe();
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    app.close(std::chrono::seconds(30));
    if (failed) {
      std::fprintf(stderr, "windowed-count: the application failed (see the log above)\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "windowed-count: %s\n", e.what());
    return 1;
  }
  return 0;
}
