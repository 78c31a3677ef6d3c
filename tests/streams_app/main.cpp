// streams_test_app: small Streams applications for tests/integration/test_streams_apps.py, on
// oxbow-streams' public headers only. One topology per run (--topology):
//   tables  builder.table("tables-input") (key user, value region) -> groupBy(region) -> count
//           -> toStream -> "tables-output" (key region, value big-endian int64)
//   poison  "poison-input" (String key, Int64 value) -> mapValues(v * 2) -> "poison-output"; what
//           an undecodable value does is default.deserialization.exception.handler's (--config);
//           --offset-reset earliest|latest sets the source's Consumed::withOffsetResetPolicy
//   fail    "fail-input" (String/String) -> mapValues, which throws std::runtime_error on the
//           value "boom" (--fail-value V: on V instead; with --fail-once only the first time in
//           the process) -> "fail-output";
//           --on-error replace|shutdown-client|shutdown-application sets the uncaught exception
//           handler's response (none given: the library's default); --slow-ms N: each record
//           prints "PROCESSING <value>" and takes N ms
//   windowed "windowed-input" (String/String) -> groupByKey -> 1 s tumbling windows, no grace
//           -> count -> "windowed-output" (key "<key>@<window start>", value big-endian int64)
//   avro    "avro-input" (String key, Avro value in the registry's wire format, any writer's
//           schema with fields id and amount) -> filter(amount > 0) -> mapValues to
//           {id, cents} (Avro, registered as avro-output-value) -> "avro-output";
//           --registry-url URL names the schema registry
//   iq      "iq-input" (String/String) -> groupByKey -> count into Materialized.as("counts")
//           (key String, value Int64), for interactive queries
//   iq-global  iq's, and a globalTable of "iq-names" (String/String) materialized as "names"
//   iq-windows "iq-windows-input" (String/String) -> groupByKey -> count into "counts", and
//           counts per hopping window of 10 s every 5 s into "window-counts" and per session
//           (3 s gap) into "session-counts", both with a day's grace and two days' retention
// --query-stdin: interactive queries from stdin, one command a line, each answered by one line
// "IQ <command>: <answer>" on stdout, or "IQ <command>: ERROR <exception class>: <message>":
//   get K | ts K (timestamped: V@T) | range A B | rrange A B | all | rall | prefix P | count
//   | pget P K (withPartition P) | pall P | bad NAME (store NAME queried as counts is)
//   | window (a window-store name asked as a key-value store; the iq topology has none)
//   | gget K | gpget K P (withPartition P) | gtget K (V@T) | gall (k=v,...): iq-global's "names"
// and, of iq-windows' stores (times in ms; "window-counts" as windowStore<String, Int64>,
// "session-counts" as sessionStore<String, Int64>):
//   wget K T (fetch: V or null) | wtget K T (timestampedWindowStore: V@T or null)
//   | wfetch K F T | wbfetch K F T (start=v,...) | wrange A B F T | wbrange A B F T | wall | wball
//   | wfetchall F T | wbfetchall F T | wtall | wpall P
//   | sfind K E L | sbfind K E L | sfindr A B E L | sget K S E (fetchSession: V or null)
//   | sfetch K | sbfetch K | srange A B | sbrange A B
//   | kvaswindow | sessionaswindow | windowassession (a store asked as another type)
// Windowed results are "key@start@end=v,...". Results of range-like commands are
// "k=v,k=v,...". Before start() "IQ prestart: ..." is
// printed for a get, and after close() "IQ afterclose: ..." for an all().
// --close-timeout-ms N: SIGTERM calls close(N ms) and prints "CLOSE <true|false> <state>"; when
// it answered false, close() again without a timeout, printing the same.
// Every state change is printed on stdout as "STATE <old> -> <new>" (flushed). SIGTERM or SIGINT
// closes the application and exits 0; the state ERROR closes it and exits 3. Bad usage exits 2,
// any other error 1.
// Usage: streams_test_app --topology tables|poison|fail|windowed [--bootstrap-server B]
//        [--application-id ID] [--state-dir DIR] [--processing-guarantee G]
//        [--config KEY=VALUE]... [--fail-once] [--fail-value V] [--on-error RESPONSE]
//        [--offset-reset earliest|latest] [--slow-ms N] [--close-timeout-ms N]
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/registry_serde.h"
#include "oxbow/streams/streams_builder.h"

namespace streams = oxbow::streams;
using State = streams::KafkaStreams::State;
using Response = streams::KafkaStreams::StreamThreadExceptionResponse;

namespace {

// --fail-once: set by the first "boom", which is the only one to throw.
std::atomic<bool> failed_once{false};

int usage(const std::string& error) {
  std::fprintf(
      stderr,
      "streams_test_app: %s\nusage: streams_test_app --topology tables|poison|fail|windowed "
      "[--bootstrap-server B] [--application-id ID] [--state-dir DIR] "
      "[--processing-guarantee at_least_once|exactly_once_v2] [--config KEY=VALUE]... "
      "[--fail-once] [--fail-value V] "
      "[--on-error replace|shutdown-client|shutdown-application] "
      "[--offset-reset earliest|latest] [--slow-ms N] [--close-timeout-ms N]\n",
      error.c_str());
  return 2;
}

struct Options {
  std::string topology, on_error, fail_value = "boom", offset_reset;
  std::string registry_url = "http://localhost:8081";
  bool fail_once = false;
  int64_t slow_ms = 0;
  int64_t close_timeout_ms = -1;  // none: close(30 s)
  bool query_stdin = false;
};

// The stdin query thread's, which may outlive main's objects (it is detached).
std::mutex query_mutex;
bool app_gone = false;

using Counts = streams::ReadOnlyKeyValueStore<std::string, int64_t>;

Counts counts_store(const streams::KafkaStreams& app, const std::string& name,
                    std::optional<int32_t> partition = std::nullopt) {
  return app.store(streams::StoreQueryParameters<>::fromNameAndType(
                       name, streams::QueryableStoreTypes::keyValueStore<std::string, int64_t>())
                       .withPartition(partition));
}

// A scan's entries, read through once.
std::string joined(streams::KeyValueIterator<std::string, int64_t> kvs) {
  std::string out;
  for (const auto& kv : kvs) {
    if (!out.empty()) out += ",";
    out += kv.key + "=" + std::to_string(kv.value);
  }
  return out;
}

template <class Store>
Store store_of(const streams::KafkaStreams& app, const std::string& name,
               streams::QueryableStoreType<Store> type,
               std::optional<int32_t> partition = std::nullopt) {
  return app.store(
      streams::StoreQueryParameters<>::fromNameAndType(name, type).withPartition(partition));
}

std::string text(int64_t v) {
  return std::to_string(v);
}
std::string text(const streams::ValueAndTimestamp<int64_t>& v) {
  return std::to_string(v.value) + "@" + std::to_string(v.timestamp);
}
template <class T>
std::string text(const std::optional<T>& v) {
  return v ? text(*v) : "null";
}
template <class K, class T>
std::string text(const std::vector<streams::KeyValue<K, T>>& kvs);
template <class K, class T>
std::string text(streams::KeyValueIterator<K, T> kvs) {
  return text(std::vector<streams::KeyValue<K, T>>(kvs.begin(), kvs.end()));
}
template <class K, class T>
std::string text(const std::vector<streams::KeyValue<K, T>>& kvs) {
  std::string out;
  for (const auto& kv : kvs) {
    if (!out.empty()) out += ",";
    if constexpr (std::is_same_v<K, int64_t>)
      out += std::to_string(kv.key);
    else if constexpr (std::is_same_v<K, std::string>)
      out += kv.key;
    else
      out += kv.key.key + "@" + std::to_string(kv.key.window.start) + "@" +
             std::to_string(kv.key.window.end);
    out += "=" + text(kv.value);
  }
  return out;
}

// The window and session store commands (see the header comment); nothing for another command.
std::optional<std::string> answer_window_query(const streams::KafkaStreams& app,
                                               const std::vector<std::string>& w) {
  using Types = streams::QueryableStoreTypes;
  auto arg = [&](size_t i) { return i < w.size() ? w[i] : std::string(); };
  auto num = [&](size_t i) { return static_cast<int64_t>(std::stoll(arg(i))); };
  const std::string cmd = arg(0);
  if (cmd[0] == 'w' && cmd != "wtget" && cmd != "wtall" && cmd != "wpall") {
    auto s = store_of(app, "window-counts", Types::windowStore<std::string, int64_t>());
    if (cmd == "wget") return text(s.fetch(arg(1), num(2)));
    if (cmd == "wfetch") return text(s.fetch(arg(1), num(2), num(3)));
    if (cmd == "wbfetch") return text(s.backwardFetch(arg(1), num(2), num(3)));
    if (cmd == "wrange") return text(s.fetch(arg(1), arg(2), num(3), num(4)));
    if (cmd == "wbrange") return text(s.backwardFetch(arg(1), arg(2), num(3), num(4)));
    if (cmd == "wall") return text(s.all());
    if (cmd == "wball") return text(s.backwardAll());
    if (cmd == "wfetchall") return text(s.fetchAll(num(1), num(2)));
    if (cmd == "wbfetchall") return text(s.backwardFetchAll(num(1), num(2)));
  }
  auto timestamped = [&](std::optional<int32_t> partition = std::nullopt) {
    return store_of(app, "window-counts", Types::timestampedWindowStore<std::string, int64_t>(),
                    partition);
  };
  if (cmd == "wtget") return text(timestamped().fetch(arg(1), num(2)));
  if (cmd == "wtall") return text(timestamped().all());
  if (cmd == "wpall") return text(timestamped(static_cast<int32_t>(num(1))).all());
  if (cmd[0] == 's') {
    auto s = store_of(app, "session-counts", Types::sessionStore<std::string, int64_t>());
    if (cmd == "sfind") return text(s.findSessions(arg(1), num(2), num(3)));
    if (cmd == "sbfind") return text(s.backwardFindSessions(arg(1), num(2), num(3)));
    if (cmd == "sfindr") return text(s.findSessions(arg(1), arg(2), num(3), num(4)));
    if (cmd == "sget") return text(s.fetchSession(arg(1), num(2), num(3)));
    if (cmd == "sfetch") return text(s.fetch(arg(1)));
    if (cmd == "sbfetch") return text(s.backwardFetch(arg(1)));
    if (cmd == "srange") return text(s.fetch(arg(1), arg(2)));
    if (cmd == "sbrange") return text(s.backwardFetch(arg(1), arg(2)));
  }
  if (cmd == "window") return text(counts_store(app, "window-counts").all());
  if (cmd == "kvaswindow")
    return text(store_of(app, "counts", Types::windowStore<std::string, int64_t>()).all());
  if (cmd == "sessionaswindow")
    return text(store_of(app, "session-counts", Types::windowStore<std::string, int64_t>()).all());
  if (cmd == "windowassession")
    return text(
        store_of(app, "window-counts", Types::sessionStore<std::string, int64_t>()).fetch("x"));
  return std::nullopt;
}

// One interactive-query command (see the header comment); its answer.
std::string answer_query(const streams::KafkaStreams& app, const std::string& line) {
  std::vector<std::string> w;
  for (size_t at = 0; at < line.size();) {
    size_t end = line.find(' ', at);
    if (end == std::string::npos) end = line.size();
    if (end > at) w.push_back(line.substr(at, end - at));
    at = end + 1;
  }
  auto arg = [&](size_t i) { return i < w.size() ? w[i] : std::string(); };
  try {
    const std::string cmd = arg(0);
    if (cmd == "get") {
      auto v = counts_store(app, "counts").get(arg(1));
      return v ? std::to_string(*v) : "null";
    }
    if (cmd == "ts") {
      auto v =
          app
              .store(streams::StoreQueryParameters<>::fromNameAndType(
                  "counts",
                  streams::QueryableStoreTypes::timestampedKeyValueStore<std::string, int64_t>()))
              .get(arg(1));
      return v ? std::to_string(v->value) + "@" + std::to_string(v->timestamp) : "null";
    }
    if (cmd == "range") return joined(counts_store(app, "counts").range(arg(1), arg(2)));
    if (cmd == "rrange") return joined(counts_store(app, "counts").reverseRange(arg(1), arg(2)));
    if (cmd == "all") return joined(counts_store(app, "counts").all());
    if (cmd == "rall") return joined(counts_store(app, "counts").reverseAll());
    if (cmd == "prefix")
      return joined(counts_store(app, "counts").prefixScan(arg(1), streams::serdes::String()));
    if (cmd == "count") return std::to_string(counts_store(app, "counts").approximateNumEntries());
    if (cmd == "pget") {
      auto v = counts_store(app, "counts", std::stoi(arg(1))).get(arg(2));
      return v ? std::to_string(*v) : "null";
    }
    if (cmd == "pall") return joined(counts_store(app, "counts", std::stoi(arg(1))).all());
    if (cmd == "bad") return joined(counts_store(app, arg(1)).all());
    if (cmd == "wrongtype") {
      // The store's values are Int64: asked as strings, the store() call refuses.
      auto s = app.store(streams::StoreQueryParameters<>::fromNameAndType(
          "counts", streams::QueryableStoreTypes::keyValueStore<std::string, std::string>()));
      size_t n = 0;
      for ([[maybe_unused]] const auto& kv : s.all()) ++n;
      return std::to_string(n);
    }
    if (cmd == "meta" || cmd == "storemeta") {
      // host:port{stores}{partitions}{standby stores}{standby partitions};...
      auto list =
          cmd == "meta" ? app.metadataForAllStreamsClients() : app.streamsMetadataForStore(arg(1));
      std::string out;
      auto names = [](const std::set<std::string>& s) {
        std::string t;
        for (const auto& n : s) t += (t.empty() ? "" : ",") + n;
        return "{" + t + "}";
      };
      auto parts = [](const std::set<streams::TopicPartition>& s) {
        std::string t;
        for (const auto& p : s)
          t += (t.empty() ? "" : ",") + p.topic + "-" + std::to_string(p.partition);
        return "{" + t + "}";
      };
      for (const auto& m : list)
        out += (out.empty() ? "" : ";") + m.host() + ":" + std::to_string(m.port()) +
               names(m.stateStoreNames()) + parts(m.topicPartitions()) +
               names(m.standbyStateStoreNames()) + parts(m.standbyTopicPartitions());
      return out;
    }
    if (cmd == "staleall" || cmd == "stalepall") {
      // Active and standby copies (enableStaleStores), of one partition for stalepall.
      auto params =
          streams::StoreQueryParameters<>::fromNameAndType(
              "counts", streams::QueryableStoreTypes::keyValueStore<std::string, int64_t>())
              .enableStaleStores();
      if (cmd == "stalepall") params = params.withPartition(std::stoi(arg(1)));
      return joined(app.store(params).all());
    }
    if (cmd == "lags") {
      std::string out;
      for (const auto& [store, partitions] : app.allLocalStorePartitionLags())
        for (const auto& [p, lag] : partitions)
          out += (out.empty() ? "" : ";") + store + ":" + std::to_string(p) + "=" +
                 std::to_string(lag.currentOffsetPosition()) + "/" +
                 std::to_string(lag.endOffsetPosition());
      return out;
    }
    if (cmd == "gget" || cmd == "gpget" || cmd == "gall" || cmd == "gtget") {
      // The global table's store; gpget asks for a partition, which a global store ignores.
      std::optional<int32_t> partition;
      if (cmd == "gpget") partition = std::stoi(arg(2));
      if (cmd == "gtget") {
        auto v =
            store_of(
                app, "names",
                streams::QueryableStoreTypes::timestampedKeyValueStore<std::string, std::string>())
                .get(arg(1));
        return v ? v->value + "@" + std::to_string(v->timestamp) : "null";
      }
      auto names = store_of(app, "names",
                            streams::QueryableStoreTypes::keyValueStore<std::string, std::string>(),
                            partition);
      if (cmd == "gall") {
        std::string out;
        for (const auto& kv : names.all())
          out += (out.empty() ? "" : ",") + kv.key + "=" + kv.value;
        return out;
      }
      auto v = names.get(arg(1));
      return v ? *v : "null";
    }
    if (cmd == "keymeta") {
      auto m = app.queryMetadataForKey(arg(1), arg(2), streams::serdes::String());
      if (!m) return "null";
      std::string standbys;
      for (const auto& h : m->standbyHosts())
        standbys += (standbys.empty() ? "" : ",") + h.host() + ":" + std::to_string(h.port());
      return m->activeHost().host() + ":" + std::to_string(m->activeHost().port()) + " [" +
             standbys + "] " + std::to_string(m->partition());
    }
    if (!cmd.empty())
      if (auto answer = answer_window_query(app, w)) return *answer;
    return "ERROR unknown command";
  } catch (const streams::StreamsNotStartedException& e) {
    return std::string("ERROR StreamsNotStartedException: ") + e.what();
  } catch (const streams::UnknownStateStoreException& e) {
    return std::string("ERROR UnknownStateStoreException: ") + e.what();
  } catch (const streams::InvalidStateStorePartitionException& e) {
    return std::string("ERROR InvalidStateStorePartitionException: ") + e.what();
  } catch (const streams::InvalidStateStoreException& e) {
    return std::string("ERROR InvalidStateStoreException: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("ERROR other: ") + e.what();
  }
}

void print_answer(const std::string& what, const std::string& answer) {
  std::printf("IQ %s: %s\n", what.c_str(), answer.c_str());
  std::fflush(stdout);
}

class Punctuating
    : public streams::api::Processor<std::string, std::string, std::string, std::string> {
 public:
  void init(Context& context) override {
    context.schedule(std::chrono::milliseconds(100), streams::PunctuationType::WALL_CLOCK_TIME,
                     [this, &context](int64_t time) {
                       context.forward(streams::api::Record<std::string, std::string>(
                           "wall", std::to_string(count_), time));
                     });
    context.schedule(std::chrono::milliseconds(1000), streams::PunctuationType::STREAM_TIME,
                     [&context](int64_t time) {
                       context.forward(streams::api::Record<std::string, std::string>(
                           "stream", std::to_string(time), time));
                     });
  }
  void process(const streams::api::Record<std::string, std::string>&) override { ++count_; }

 private:
  int64_t count_ = 0;
};

streams::Topology build_topology(const Options& options) {
  const std::string& name = options.topology;
  const bool fail_once = options.fail_once;
  const std::string& fail_value = options.fail_value;
  streams::StreamsBuilder builder;
  if (name == "iq" || name == "iq-global") {
    builder.stream<std::string, std::string>("iq-input")
        .groupByKey()
        .count(streams::Materialized<std::string, int64_t>::as("counts"));
    if (name == "iq-global")
      builder.globalTable<std::string, std::string>(
          "iq-names", streams::Consumed<std::string, std::string>(),
          streams::Materialized<std::string, std::string>::as("names"));
  } else if (name == "iq-windows") {
    using std::chrono::hours;
    using std::chrono::milliseconds;
    using Counted = streams::Materialized<std::string, int64_t>;
    auto grouped = builder.stream<std::string, std::string>("iq-windows-input").groupByKey();
    grouped.count(Counted::as("counts"));
    grouped
        .windowedBy(streams::TimeWindows::ofSizeAndGrace(milliseconds(10000), hours(24))
                        .advanceBy(milliseconds(5000)))
        .count(Counted::as("window-counts").withRetention(hours(48)));
    grouped
        .windowedBy(streams::SessionWindows::ofInactivityGapAndGrace(milliseconds(3000), hours(24)))
        .count(Counted::as("session-counts").withRetention(hours(48)));
  } else if (name == "tables") {
    builder.table<std::string, std::string>("tables-input")
        .groupBy<std::string, std::string>([](const std::string& user, const std::string& region) {
          return streams::KeyValue<std::string, std::string>{region, user};
        })
        .count()
        .toStream()
        .to("tables-output");
  } else if (name == "poison") {
    auto consumed = streams::Consumed<std::string, int64_t>::with(streams::serdes::String(),
                                                                  streams::serdes::Int64());
    if (options.offset_reset == "latest")
      consumed = consumed.withOffsetResetPolicy(streams::AutoOffsetReset::kLatest);
    else if (options.offset_reset == "earliest")
      consumed = consumed.withOffsetResetPolicy(streams::AutoOffsetReset::kEarliest);
    builder.stream<std::string, int64_t>("poison-input", consumed)
        .mapValues<int64_t>([](int64_t v) { return v * 2; })
        .to("poison-output");
  } else if (name == "fail") {
    builder.stream<std::string, std::string>("fail-input")
        .mapValues<std::string>(
            [fail_once, fail_value, slow_ms = options.slow_ms](const std::string& v) {
              if (slow_ms > 0) {
                std::printf("PROCESSING %s\n", v.c_str());
                std::fflush(stdout);
                std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
              }
              if (v == fail_value && (!fail_once || !failed_once.exchange(true)))
                throw std::runtime_error(v + ": the test's mapValues failed on purpose");
              return v;
            })
        .to("fail-output");
  } else if (name == "windowed") {
    builder.stream<std::string, std::string>("windowed-input")
        .groupByKey()
        .windowedBy(streams::TimeWindows::ofSizeWithNoGrace(std::chrono::milliseconds(1000)))
        .count()
        .toStream()
        .map<std::string, int64_t>([](const streams::Windowed<std::string>& w, int64_t n) {
          return streams::KeyValue<std::string, int64_t>{
              w.key + "@" + std::to_string(w.window.start), n};
        })
        .to("windowed-output");
  } else if (name == "join" || name == "join-direct") {
    // Clicks keyed by page, re-keyed by user and enriched with the user's profile (join-direct:
    // clicks keyed by user already, joined as they come).
    auto profiles = builder.table<std::string, std::string>("join-profiles");
    auto clicks = builder.stream<std::string, std::string>("join-clicks");
    if (name == "join")
      clicks = clicks.selectKey<std::string>(
          [](const std::string&, const std::string& user) { return user; });
    clicks
        .leftJoin<std::string>(profiles,
                               [](const std::string& user, const std::optional<std::string>& p) {
                                 return user + "/" + p.value_or("unknown");
                               })
        .to("join-output");
  } else if (name == "stream-join") {
    // "sj-left" left-joined with "sj-right" (both String/String, co-partitioned): records of a
    // key at most 1 s apart, 500 ms grace; left records that found nothing come out as
    // "<left>+null" once their window closed.
    auto left = builder.stream<std::string, std::string>("sj-left");
    auto right = builder.stream<std::string, std::string>("sj-right");
    auto windows = streams::JoinWindows::ofTimeDifferenceAndGrace(std::chrono::milliseconds(1000),
                                                                  std::chrono::milliseconds(500));
    left.leftJoin<std::string>(
            right,
            [](const std::string& l, const std::optional<std::string>& r) {
              return l + "+" + r.value_or("null");
            },
            windows)
        .to("sj-output");
  } else if (name == "fk-join") {
    // "fk-left" rows ("fk|payload", or no '|': no foreign key) left-joined on that foreign key
    // with "fk-right" (KIP-213): the two topics need not be co-partitioned.
    auto left = builder.table<std::string, std::string>("fk-left");
    auto right = builder.table<std::string, std::string>("fk-right");
    left.leftJoin<std::string>(
            right,
            [](const std::string& v) {
              auto bar = v.find('|');
              return bar == std::string::npos ? std::optional<std::string>()
                                              : std::optional<std::string>(v.substr(0, bar));
            },
            [](const std::string& l, const std::optional<std::string>& r) {
              return l + "+" + r.value_or("null");
            })
        .toStream()
        .to("fk-output");
  } else if (name == "global-join") {
    // Orders whose value names a user, enriched from the global table of users (every
    // partition of it on every instance), or with "null".
    auto users = builder.globalTable<std::string, std::string>("gj-users");
    builder.stream<std::string, std::string>("gj-orders")
        .leftJoin<std::string>(
            users, [](const std::string&, const std::string& user) { return user; },
            [](const std::string& user, const std::optional<std::string>& name) {
              return user + ":" + name.value_or("null");
            })
        .to("gj-output");
  } else if (name == "punctuate") {
    // A processor counting its records and writing the count every 100 ms of wall-clock time
    // ("wall" -> count) and, every 1000 ms of stream time, the stream time ("stream" -> time).
    builder.stream<std::string, std::string>("punct-input")
        .process([] { return std::make_unique<Punctuating>(); })
        .to("punct-output");
  } else if (name == "emit-final") {
    // Counts per key and 1 s window, each window written once, when it closes (KIP-825).
    builder.stream<std::string, std::string>("ef-input")
        .groupByKey()
        .windowedBy(streams::TimeWindows::ofSizeWithNoGrace(std::chrono::milliseconds(1000)))
        .emitStrategy(streams::EmitStrategy::onWindowClose())
        .count()
        .toStream()
        .map<std::string, int64_t>([](const streams::Windowed<std::string>& w, int64_t n) {
          return streams::KeyValue<std::string, int64_t>{
              w.key + "@" + std::to_string(w.window.start), n};
        })
        .to("ef-output");
  } else if (name == "avro") {
    const std::map<std::string, std::string> registry{
        {"schema.registry.url", options.registry_url}};
    const std::string cents_schema =
        R"({"type":"record","name":"OrderCents","namespace":"test","fields":[)"
        R"({"name":"id","type":"long"},{"name":"cents","type":"long"}]})";
    builder
        .stream<std::string, nlohmann::json>(
            "avro-input",
            streams::Consumed<std::string, nlohmann::json>::with(
                streams::serdes::String(), streams::serdes::Avro(registry, "", false)))
        .filter([](const std::string&, const nlohmann::json& v) {
          return v["amount"].get<double>() > 0;
        })
        .mapValues<nlohmann::json>([](const nlohmann::json& v) {
          return nlohmann::json{{"id", v["id"]},
                                {"cents", std::llround(v["amount"].get<double>() * 100)}};
        })
        .to("avro-output",
            streams::Produced<std::string, nlohmann::json>::with(
                streams::serdes::String(), streams::serdes::Avro(registry, cents_schema, false)));
  } else {
    throw std::invalid_argument(
        "unknown topology " + name +
        " (tables, poison, fail, windowed, join, join-direct, stream-join, fk-join, global-join, "
        "punctuate, emit-final, avro)");
  }
  return builder.build();
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> config{{"bootstrap.servers", "localhost:9092"}};
  const std::map<std::string, std::string> flags{
      {"--bootstrap-server", "bootstrap.servers"},
      {"--application-id", "application.id"},
      {"--state-dir", "state.dir"},
      {"--processing-guarantee", "processing.guarantee"}};
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--fail-once") {
      options.fail_once = true;
      continue;
    }
    if (flag == "--query-stdin") {
      options.query_stdin = true;
      continue;
    }
    if (i + 1 >= argc) return usage(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--config") {
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return usage("--config needs KEY=VALUE");
      config[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (flag == "--topology") {
      options.topology = value;
    } else if (flag == "--fail-value") {
      options.fail_value = value;
    } else if (flag == "--on-error") {
      options.on_error = value;
    } else if (flag == "--registry-url") {
      options.registry_url = value;
    } else if (flag == "--offset-reset") {
      options.offset_reset = value;
    } else if (flag == "--slow-ms") {
      options.slow_ms = std::stoll(value);
    } else if (flag == "--close-timeout-ms") {
      options.close_timeout_ms = std::stoll(value);
    } else if (auto it = flags.find(flag); it != flags.end()) {
      config[it->second] = value;
    } else {
      return usage("unknown flag " + flag);
    }
  }
  if (options.topology.empty()) return usage("--topology is required");
  if (!config.count("application.id"))
    config["application.id"] = "streams-test-" + options.topology;
  const std::string& on_error = options.on_error;
  std::map<std::string, Response> responses{
      {"replace", Response::REPLACE_THREAD},
      {"shutdown-client", Response::SHUTDOWN_CLIENT},
      {"shutdown-application", Response::SHUTDOWN_APPLICATION}};
  if (!on_error.empty() && !responses.count(on_error))
    return usage("unknown --on-error " + on_error);

  // SIGTERM and SIGINT are taken synchronously below, so that the library's threads never see
  // them; the state listener raises SIGTERM to wake the main thread on ERROR.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::atomic<bool> failed{false};
  try {
    auto topology = build_topology(options);
    std::cerr << topology.describe();
    streams::KafkaStreams app(topology, config);
    app.setStateListener([&](State now, State old) {
      std::printf("STATE %s -> %s\n", streams::to_string(old), streams::to_string(now));
      std::fflush(stdout);
      // close() may not be called from the listener (a library thread): wake the main thread.
      if (now == State::ERROR && !failed.exchange(true)) kill(getpid(), SIGTERM);
    });
    if (!on_error.empty()) {
      Response response = responses.at(on_error);
      app.setUncaughtExceptionHandler([response, on_error](const std::exception& e) {
        std::printf("UNCAUGHT %s (responding %s)\n", e.what(), on_error.c_str());
        std::fflush(stdout);
        return response;
      });
    }
    // Queries answered on a thread of their own while the application runs; `app` outlives
    // them (the thread holds query_mutex while it queries; `app_gone` is set under it).
    if (options.query_stdin) {
      print_answer("prestart", answer_query(app, "get x"));
      std::thread([&app] {
        std::string line;
        while (std::getline(std::cin, line)) {
          std::lock_guard lock(query_mutex);
          if (app_gone) return;
          print_answer(line, answer_query(app, line));
        }
      }).detach();
    }
    struct Gone {
      ~Gone() {
        std::lock_guard lock(query_mutex);
        app_gone = true;
      }
    } mark_gone;
    app.start();
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    if (options.close_timeout_ms < 0) {
      app.close(std::chrono::seconds(30));
    } else {
      auto report = [&](bool closed) {
        std::printf("CLOSE %s %s\n", closed ? "true" : "false", streams::to_string(app.state()));
        std::fflush(stdout);
        return closed;
      };
      if (!report(app.close(std::chrono::milliseconds(options.close_timeout_ms))))
        report(app.close(std::chrono::milliseconds::max()));
    }
    if (options.query_stdin) print_answer("afterclose", answer_query(app, "all"));
    if (failed || app.state() == State::ERROR) {
      std::fprintf(stderr, "streams_test_app: the application failed (see the log above)\n");
      return 3;
    }
  } catch (const std::exception& e) {
    // start() throws for what it cannot start with (a missing source topic: state ERROR).
    std::fprintf(stderr, "streams_test_app: %s\n", e.what());
    return failed ? 3 : 1;
  }
  return 0;
}
