// The Streams applications bench/streams.sh measures, on oxbow-streams' public headers only:
//   stateless   lines -> filter(not empty) -> mapValues(upper case) -> output
//   wordcount   as examples/wordcount: flatMapValues(words) -> groupBy(word) -> count, stored in
//               "counts" (RocksDB by default) -> toStream -> output
//   uniquekeys  groupBy(value) -> count: with distinct values, a store (and changelog) of one
//               entry per input record, for measuring restoration
//   tumbling    keyed events -> groupByKey -> windowedBy(1 s tumbling windows, no grace) -> count
//               -> toStream -> output (the windows close as the events' timestamps advance)
//   hopping     the same with 10 s windows advancing by 1 s (Nexmark q5's shape): ten windows
//               updated per record
//   join        keyed events -> join(the table read from --table, by key) -> output, the joiner
//               putting the two values side by side. Run twice: with --records 0 and
//               --table-records T it reads the table's T rows into its store and closes; started
//               again (the state directory kept, nothing to restore) on the events loaded since,
//               it joins them, and that second run's rate is the join's
// Each runs until it has processed --records input records, everything they led to included (the
// words in the repartition topic), then closes and prints one JSON object on stdout: input
// records/s from the first input record until close() returned (the last commit included), the
// records sent through the repartition topic, the process's CPU seconds (getrusage) and records
// per CPU-second. With --records 0 it only starts, waits for RUNNING (its stores restored) and
// closes: the restoration figures of bench/streams.sh (join: waits for the table's rows instead,
// and the figures are those of reading them, from the first row until close() returned). The
// library logs to stdout (spdlog's default logger): the JSON object is the line that starts with
// '{'.
// Usage: streams_apps MODE [--bootstrap-server B] [--application-id ID] [--state-dir DIR]
//        [--processing-guarantee at_least_once|exactly_once_v2] [--input T] [--output T]
//        [--records N] [--size-ms MS] [--advance-ms MS] [--table T] [--table-records N]
//        [--timeout-s S] [--config KEY=VALUE]...
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/windows.h"

namespace streams = oxbow::streams;
using State = streams::KafkaStreams::State;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

long max_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

// ASCII case and classes, inline: what <cctype> answers in the "C" locale these programs run in,
// without a library call per character (toupper() alone was 11% of the stateless application's
// stream thread; the raw pipe, which the ratios are to, transforms nothing).
char ascii_upper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}
char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
bool word_char(char c) {  // Java's \w
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Java's \W+ split, lower-cased, as examples/wordcount does.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  for (char c : line) {
    if (word_char(c)) {
      word += ascii_lower(c);
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

// When the run is over: every input record read and every record it sent through the repartition
// topic aggregated. The library has no hook for "caught up" (Kafka has none either), so the
// callables count. Each writer updates its counter, then checks; with sequentially consistent
// atomics the last of the two writers to finish sees the other's update, so the end is never
// missed, and the aggregated count cannot catch up with the emitted one early because a record's
// emits are added before the record is counted as read.
//
// A windowed count has no operation before its aggregation to count the input in; its aggregator
// counts window updates instead, and each input record makes updates_per_input of them (every
// window that holds its timestamp: none has closed, as each partition's events are in time order).
// A join's table rows are counted as they are read, for its first run.
class Progress {
 public:
  explicit Progress(int64_t target, int64_t updates_per_input = 0, int64_t table_target = 0)
      : target_(target), updates_per_input_(updates_per_input), table_target_(table_target) {}

  void read(int64_t emitted) {
    emitted_ += emitted;
    if (input_++ == 0) first_ns_ = now_ns();
    check();
  }
  // read(0), also timing the pauses between records (one clock read per record: the join only,
  // whose tasks read two topics and may hold records back until both can be ordered by time).
  void read_timed() {
    int64_t now = now_ns(), last = last_ns_.exchange(now);
    if (last != 0 && now - last >= kPause) {
      paused_ns_ += now - last;
      if (now - last > longest_pause_ns_) longest_pause_ns_ = now - last;
    }
    read(0);
  }
  void aggregated() {
    ++aggregated_;
    check();
  }
  void window_updated() {
    int64_t n = ++aggregated_;
    if (n == 1) first_ns_ = now_ns();
    if (n == target_ * updates_per_input_) finish(false);
  }
  // The run with --records 0 ends when the table's rows are all read.
  void table_row() {
    int64_t n = ++table_rows_;
    if (n == 1) table_first_ns_ = now_ns();
    if (target_ == 0 && n == table_target_) finish(false);
  }
  void failed() { finish(true); }
  // For --records 0: the end is being RUNNING.
  void stop() { finish(false); }
  // Until the end, a failure or the timeout; false unless the end was reached.
  bool wait(std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [&] { return finished_; });
    return finished_ && !failed_;
  }
  int64_t first_ns() const { return first_ns_; }
  int64_t table_first_ns() const { return table_first_ns_; }
  int64_t done_ns() const { return done_ns_; }
  int64_t input() const {
    return updates_per_input_ ? aggregated_.load() / updates_per_input_ : input_.load();
  }
  int64_t emitted() const { return emitted_; }
  int64_t table_rows() const { return table_rows_; }
  // Pauses of kPause or more between two records read: their sum and the longest.
  static constexpr int64_t kPause = 100'000'000;
  int64_t paused_ns() const { return paused_ns_; }
  int64_t longest_pause_ns() const { return longest_pause_ns_; }

 private:
  void check() {
    if (updates_per_input_ == 0 && input_ == target_ && aggregated_ == emitted_) finish(false);
  }
  void finish(bool failed) {
    if (signalled_.exchange(true)) return;
    done_ns_ = now_ns();
    std::lock_guard lock(mutex_);
    finished_ = true;
    failed_ = failed;
    cv_.notify_all();
  }

  const int64_t target_, updates_per_input_, table_target_;
  std::atomic<int64_t> input_{0}, emitted_{0}, aggregated_{0}, table_rows_{0};
  std::atomic<int64_t> first_ns_{0}, table_first_ns_{0}, done_ns_{0};
  std::atomic<int64_t> last_ns_{0}, paused_ns_{0}, longest_pause_ns_{0};
  std::atomic<bool> signalled_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false, failed_ = false;
};

// count() as aggregate(): the same store, serdes and one processor, with the aggregator counting
// the records it takes (Progress). The initializer and adder are count()'s own.
template <class K, class V>
streams::KTable<K, int64_t> counted(const streams::KGroupedStream<K, V>& grouped,
                                    Progress* progress) {
  return grouped.template aggregate<int64_t>([] { return int64_t{0}; },
                                             [progress](const K&, const V&, int64_t count) {
                                               progress->aggregated();
                                               return count + 1;
                                             },
                                             streams::Materialized<K, int64_t>::as("counts"));
}

// What the windowed and join modes take besides the topics.
struct Shape {
  int64_t size_ms = 0, advance_ms = 0;  // the windows; 0: the mode's own
  std::string table;                    // join: the table's topic
};

// The windows of a windowed mode (size and advance from the command line or the mode's own).
streams::TimeWindows windows_of(const std::string& mode, const Shape& shape) {
  int64_t size = shape.size_ms ? shape.size_ms : mode == "hopping" ? 10000 : 1000;
  int64_t advance = shape.advance_ms ? shape.advance_ms : mode == "hopping" ? 1000 : size;
  if (size % advance != 0)
    throw std::invalid_argument("the window size must be a multiple of the advance");
  return streams::TimeWindows::ofSizeWithNoGrace(std::chrono::milliseconds(size))
      .advanceBy(std::chrono::milliseconds(advance));
}

// The table's values as String reads them, each row counted (Progress::table_row).
streams::Serde<std::string> counting_string(Progress* progress) {
  auto serde = streams::serdes::String();
  serde.deserialize = [progress, inner = serde.deserialize](std::string_view topic,
                                                            std::string_view bytes) {
    progress->table_row();
    return inner(topic, bytes);
  };
  serde.deserialize_into = nullptr;  // sources prefer it: without it they call the counting one
  return serde;
}

streams::Topology topology(const std::string& mode, const std::string& input,
                           const std::string& output, const Shape& shape, Progress* progress) {
  streams::StreamsBuilder builder;
  auto lines = builder.stream<std::string, std::string>(input);
  // The input is counted inside the first operation rather than in a peek(), which would be one
  // more processor per record than the application measured has.
  if (mode == "stateless") {
    lines
        .filter([progress](const std::string&, const std::string& line) {
          progress->read(0);
          return !line.empty();
        })
        .mapValues<std::string>([](const std::string& line) {
          std::string upper(line);
          for (auto& c : upper) c = ascii_upper(c);
          return upper;
        })
        .to(output);
  } else if (mode == "wordcount") {
    auto grouped =
        lines
            .flatMapValues<std::string>([progress](const std::string& line) {
              auto w = words(line);
              progress->read(static_cast<int64_t>(w.size()));
              return w;
            })
            .groupBy<std::string>([](const std::string&, const std::string& word) { return word; });
    counted(grouped, progress).toStream().to(output);
  } else if (mode == "uniquekeys") {
    auto grouped = lines.groupBy<std::string>([progress](const std::string&, const std::string& v) {
      progress->read(1);
      return v;
    });
    counted(grouped, progress).toStream().to(output);
  } else if (mode == "tumbling" || mode == "hopping") {
    // count() as aggregate(), as counted() does, with the window updates counted.
    lines.groupByKey()
        .windowedBy(windows_of(mode, shape))
        .aggregate<int64_t>([] { return int64_t{0}; },
                            [progress](const std::string&, const std::string&, int64_t count) {
                              progress->window_updated();
                              return count + 1;
                            },
                            streams::Materialized<std::string, int64_t>::as("counts"))
        .toStream()
        .to(output);
  } else if (mode == "join") {
    if (shape.table.empty()) throw std::invalid_argument("join needs --table");
    // The store reads its values with the plain serde: only the source counts rows.
    auto table = builder.table<std::string, std::string>(
        shape.table,
        streams::Consumed<std::string, std::string>::with(streams::serdes::String(),
                                                          counting_string(progress)),
        streams::Materialized<std::string, std::string>::with(streams::serdes::String(),
                                                              streams::serdes::String()));
    lines
        .join<std::string>(table,
                           [progress](const std::string& event, const std::string& row) {
                             progress->read_timed();
                             std::string out;
                             out.reserve(event.size() + 1 + row.size());
                             out += event;
                             out += ',';
                             out += row;
                             return out;
                           })
        .to(output);
  } else {
    throw std::invalid_argument("unknown mode " + mode +
                                " (stateless, wordcount, uniquekeys, tumbling, hopping, join)");
  }
  return builder.build();
}

int usage(const std::string& error) {
  std::fprintf(stderr,
               "streams_apps: %s\nusage: streams_apps "
               "stateless|wordcount|uniquekeys|tumbling|hopping|join "
               "[--bootstrap-server B] [--application-id ID] [--state-dir DIR] "
               "[--processing-guarantee at_least_once|exactly_once_v2] [--input T] [--output T] "
               "[--records N] [--size-ms MS] [--advance-ms MS] [--table T] [--table-records N] "
               "[--timeout-s S] [--config KEY=VALUE]...\n",
               error.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("no mode");
  std::string mode = argv[1], input = "streams-bench-input", output = "streams-bench-output";
  int64_t records = 0, table_records = 0;
  Shape shape;
  int timeout_s = 900;
  std::map<std::string, std::string> config{{"bootstrap.servers", "localhost:9092"},
                                            {"application.id", "streams-bench-" + mode}};
  const std::map<std::string, std::string> flags{
      {"--bootstrap-server", "bootstrap.servers"},
      {"--application-id", "application.id"},
      {"--state-dir", "state.dir"},
      {"--processing-guarantee", "processing.guarantee"}};
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return usage(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--config") {
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return usage("--config needs KEY=VALUE");
      config[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (flag == "--input") {
      input = value;
    } else if (flag == "--output") {
      output = value;
    } else if (flag == "--records") {
      records = std::atoll(value.c_str());
    } else if (flag == "--size-ms") {
      shape.size_ms = std::atoll(value.c_str());
    } else if (flag == "--advance-ms") {
      shape.advance_ms = std::atoll(value.c_str());
    } else if (flag == "--table") {
      shape.table = value;
    } else if (flag == "--table-records") {
      table_records = std::atoll(value.c_str());
    } else if (flag == "--timeout-s") {
      timeout_s = std::atoi(value.c_str());
    } else if (auto it = flags.find(flag); it != flags.end()) {
      config[it->second] = value;
    } else {
      return usage("unknown flag " + flag);
    }
  }
  signal(SIGPIPE, SIG_IGN);

  // The join's first run ends when its table is read, not when it is RUNNING.
  const bool table_run = mode == "join" && records == 0 && table_records > 0;
  std::atomic<int64_t> running_ns{0};
  try {
    int64_t updates_per_input = 0;
    if (mode == "tumbling" || mode == "hopping") {
      auto windows = windows_of(mode, shape);
      updates_per_input = windows.size() / windows.advance();
    }
    Progress progress(records, updates_per_input, table_records);
    auto app_topology = topology(mode, input, output, shape, &progress);
    streams::KafkaStreams app(app_topology, config);
    app.setStateListener([&](State now, State) {
      if (now == State::RUNNING && running_ns == 0) {
        running_ns = now_ns();
        if (records == 0 && !table_run) progress.stop();
      }
      if (now == State::ERROR) progress.failed();
    });
    int64_t start_ns = now_ns();
    app.start();
    bool reached = progress.wait(std::chrono::seconds(timeout_s));
    int64_t close_start_ns = now_ns();
    bool closed = app.close(std::chrono::seconds(60));
    int64_t closed_ns = now_ns();
    double to_running_ms = running_ns ? static_cast<double>(running_ns - start_ns) / 1e6 : -1;
    if (table_run) {
      if (!reached) {
        std::fprintf(stderr, "streams_apps: read %lld of the table's %lld rows (%s)\n",
                     static_cast<long long>(progress.table_rows()),
                     static_cast<long long>(table_records),
                     app.state() == State::ERROR ? "the application failed" : "timed out");
        return 1;
      }
      double seconds = static_cast<double>(closed_ns - progress.table_first_ns()) / 1e9;
      double cpu = cpu_seconds();
      std::printf(
          "{\"mode\": \"join-table\", \"records\": %lld, \"seconds\": %.3f, "
          "\"records_per_sec\": %.0f, \"close_ms\": %.1f, \"start_to_running_ms\": %.1f, "
          "\"cpu_seconds\": %.3f, \"records_per_cpu_sec\": %.0f, \"max_rss_mb\": %ld, "
          "\"start_to_first_row_ms\": %.1f}\n",
          static_cast<long long>(table_records), seconds,
          static_cast<double>(table_records) / seconds,
          static_cast<double>(closed_ns - close_start_ns) / 1e6, to_running_ms, cpu,
          static_cast<double>(table_records) / cpu, max_rss_mb(),
          static_cast<double>(progress.table_first_ns() - start_ns) / 1e6);
      return closed ? 0 : 1;
    }
    if (records == 0) {
      if (!running_ns) {
        std::fprintf(stderr, "streams_apps: never RUNNING within %d s\n", timeout_s);
        return 1;
      }
      std::printf("{\"mode\": \"%s\", \"start_to_running_ms\": %.1f, \"close_ms\": %.1f}\n",
                  mode.c_str(), to_running_ms,
                  static_cast<double>(closed_ns - close_start_ns) / 1e6);
      return closed ? 0 : 1;
    }
    if (!reached) {
      std::fprintf(stderr, "streams_apps: stopped after %lld of %lld input records (%s)\n",
                   static_cast<long long>(progress.input()), static_cast<long long>(records),
                   app.state() == State::ERROR ? "the application failed" : "timed out");
      return 1;
    }
    double seconds = static_cast<double>(closed_ns - progress.first_ns()) / 1e9;
    double cpu = cpu_seconds();
    std::printf(
        "{\"mode\": \"%s\", \"guarantee\": \"%s\", \"records\": %lld, \"seconds\": %.3f, "
        "\"records_per_sec\": %.0f, \"repartitioned\": %lld, \"processing_seconds\": %.3f, "
        "\"close_ms\": %.1f, "
        "\"start_to_running_ms\": %.1f, \"cpu_seconds\": %.3f, \"records_per_cpu_sec\": %.0f, "
        "\"max_rss_mb\": %ld, \"window_updates\": %lld, \"table_rows_read\": %lld, "
        "\"paused_ms\": %.1f, \"longest_pause_ms\": %.1f}\n",
        mode.c_str(),
        config.count("processing.guarantee") ? config["processing.guarantee"].c_str()
                                             : "at_least_once",
        static_cast<long long>(records), seconds, static_cast<double>(records) / seconds,
        static_cast<long long>(progress.emitted()),
        static_cast<double>(progress.done_ns() - progress.first_ns()) / 1e9,
        static_cast<double>(closed_ns - close_start_ns) / 1e6, to_running_ms, cpu,
        static_cast<double>(records) / cpu, max_rss_mb(),
        static_cast<long long>(records * updates_per_input),
        static_cast<long long>(progress.table_rows()),
        static_cast<double>(progress.paused_ns()) / 1e6,
        static_cast<double>(progress.longest_pause_ns()) / 1e6);
    return closed ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "streams_apps: %s\n", e.what());
    return 1;
  }
}
