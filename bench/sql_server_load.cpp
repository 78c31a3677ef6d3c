// The SQL server's queries under load, for bench/sql_server.sh, against a running broker and
// `oxbow sql-server`. One process:
//   1. pull: CREATE TABLE counts AS SELECT id, COUNT(*) ... GROUP BY id over --keys distinct keys
//      (4 partitions), then random key lookups `SELECT * FROM counts WHERE id = 'kN';` on POST
//      /query from 1, 10 and 100 clients, against the baseline of the same lookups answered by
//      the same count written by hand in the Streams DSL, served by the Streams REST helper
//      (oxbow/streams/rest_server.h) in this process. Both through the same HTTP client, a
//      connection per request.
//   2. push: records produced at --rate per second carrying their send time, read back by a push
//      query `SELECT sent FROM push_input EMIT CHANGES;` streaming from POST /query, against the
//      baseline of a hand-written Streams foreach over the same records at the same time.
//      Latency: from the producer's send to the row read by the client (or the foreach).
// Prints one JSON object on stdout (the line starting with '{'): lookups/s, p50 and p99 in
// microseconds and the ratio to the baseline per concurrency; push latency p50/p99 in ms for
// both and their ratio.
// Usage: sql_server_load --bootstrap-server B --sql-url URL --state-dir DIR [--keys N]
//   [--seconds S] [--rate R]
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/client.h"
#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/rest_server.h"
#include "oxbow/streams/streams_builder.h"

namespace streams = oxbow::streams;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

struct Figures {
  double per_second = 0, p50 = 0, p99 = 0;
};

Figures figures_of(std::vector<float> all, double elapsed) {
  std::sort(all.begin(), all.end());
  Figures f;
  f.per_second = elapsed > 0 ? static_cast<double>(all.size()) / elapsed : 0;
  if (!all.empty()) {
    f.p50 = all[all.size() / 2];
    f.p99 = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  return f;
}

// Runs `op` in `threads` threads for `seconds`, timing each call in microseconds.
Figures measure(int threads, double seconds, const std::function<void(std::mt19937_64&)>& op) {
  std::vector<std::vector<float>> latencies(threads);
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  auto start = Clock::now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937_64 random(t + 1);
      while (!stop.load(std::memory_order_relaxed)) {
        auto before = Clock::now();
        op(random);
        latencies[t].push_back(
            std::chrono::duration<float, std::micro>(Clock::now() - before).count());
      }
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : pool) t.join();
  std::vector<float> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return figures_of(std::move(all), std::chrono::duration<double>(Clock::now() - start).count());
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class Producer {
 public:
  explicit Producer(const std::string& bootstrap) {
    char error[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), error, sizeof error);
    rd_kafka_conf_set(conf, "partitioner", "murmur2_random", error, sizeof error);
    rd_kafka_conf_set(conf, "linger.ms", "1", error, sizeof error);
    producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  }
  ~Producer() {
    rd_kafka_flush(producer_, 60000);
    rd_kafka_destroy(producer_);
  }
  void send(const std::string& topic, const std::string& key, const std::string& value) {
    while (rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(topic.c_str()),
                             RD_KAFKA_V_KEY(key.data(), key.size()),
                             RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                             RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                             RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
      rd_kafka_poll(producer_, 10);
    rd_kafka_poll(producer_, 0);
  }
  void flush() { rd_kafka_flush(producer_, 60000); }

 private:
  rd_kafka_t* producer_;
};

class SqlServer {
 public:
  explicit SqlServer(std::string url) : url_(std::move(url)) {}
  // POST /query's answer, or "" when it failed.
  std::string query(const std::string& sql) const { return post("/query", sql, json::object()); }
  // Queries started by statements read their sources from the beginning.
  void statement(const std::string& sql) const {
    if (post("/ksql", sql, {{"ksql.streams.auto.offset.reset", "earliest"}}).empty())
      throw std::runtime_error("refused: " + sql);
  }
  const std::string& url() const { return url_; }

 private:
  std::string post(const std::string& path, const std::string& sql, const json& properties) const {
    json body = {{"ksql", sql}, {"streamsProperties", properties}};
    oxbow::http::Request request{"POST",
                                 path,
                                 "",
                                 body.dump(),
                                 "application/vnd.ksql.v1+json",
                                 "application/vnd.ksql.v1+json",
                                 ""};
    auto answer = oxbow::http::send_request(url_, request, 60000);
    if (!answer.response || answer.response->status != 200) return "";
    return answer.response->body;
  }
  std::string url_;
};

std::string key_of(int64_t i) {
  return "k" + std::to_string(i);
}

template <typename Ready>
void wait_until(Ready ready, const char* what) {
  auto deadline = Clock::now() + std::chrono::minutes(10);
  while (!ready()) {
    if (Clock::now() > deadline) throw std::runtime_error(std::string("timed out: ") + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

std::string pull_part(const SqlServer& sql, const std::string& bootstrap,
                      const std::string& state_dir, int64_t keys, double seconds) {
  sql.statement(
      "CREATE STREAM pull_input (id STRING KEY, v INT) WITH (kafka_topic='pull-input', "
      "value_format='JSON', partitions=4);");
  sql.statement("CREATE TABLE counts AS SELECT id, COUNT(*) AS n FROM pull_input GROUP BY id;");
  {
    Producer producer(bootstrap);
    for (int64_t i = 0; i < keys; ++i) producer.send("pull-input", key_of(i), "{\"V\":1}");
  }
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("pull-input")
      .groupByKey()
      .count(streams::Materialized<std::string, int64_t>::as("counts"));
  streams::KafkaStreams app(builder.build(), {{"application.id", "sql-server-bench-hand"},
                                              {"bootstrap.servers", bootstrap},
                                              {"state.dir", state_dir},
                                              {"auto.offset.reset", "earliest"},
                                              {"commit.interval.ms", "100"}});
  app.start();
  auto store = [&] {
    return app.store(streams::StoreQueryParameters<>::fromNameAndType(
        "counts", streams::QueryableStoreTypes::keyValueStore<std::string, int64_t>()));
  };
  // Records go out in key order: each partition's last keys counted means all of it was.
  auto last_keys_counted = [&](const std::function<bool(const std::string&)>& has) {
    for (int64_t i = std::max<int64_t>(0, keys - 64); i < keys; ++i)
      if (!has(key_of(i))) return false;
    return true;
  };
  wait_until(
      [&] {
        try {
          auto s = store();
          return last_keys_counted([&](const std::string& k) { return s.get(k).has_value(); });
        } catch (const std::exception&) {
          return false;
        }
      },
      "the hand-written count");
  wait_until(
      [&] {
        return last_keys_counted([&](const std::string& k) {
          return sql.query("SELECT * FROM counts WHERE id = '" + k + "';").find("\"row\"") !=
                 std::string::npos;
        });
      },
      "the SQL table");

  auto counts = store();
  streams::rest::RestServer server;
  server.route("GET", "/counts/{key}", [&](const streams::rest::Request& r) {
    auto n = counts.get(r.param("key"));
    if (!n) return streams::rest::Response::error(404, "no such key");
    return streams::rest::Response::json("{\"count\":" + std::to_string(*n) + "}");
  });
  server.start("127.0.0.1", 0);
  std::string hand_url = "http://127.0.0.1:" + std::to_string(server.port());
  std::atomic<int64_t> failed{0};
  auto random_key = [keys](std::mt19937_64& r) {
    return key_of(static_cast<int64_t>(r() % static_cast<uint64_t>(keys)));
  };
  auto hand_lookup = [&](std::mt19937_64& r) {
    oxbow::http::Request request{"GET", "/counts/" + random_key(r), "", "", "", "", ""};
    auto answer = oxbow::http::send_request(hand_url, request, 10000);
    if (!answer.response || answer.response->status != 200) ++failed;
  };
  auto sql_lookup = [&](std::mt19937_64& r) {
    if (sql.query("SELECT * FROM counts WHERE id = '" + random_key(r) + "';").find("\"row\"") ==
        std::string::npos)
      ++failed;
  };
  std::string out;
  for (int clients : {1, 10, 100}) {
    Figures hand = measure(clients, seconds, hand_lookup);
    Figures f = measure(clients, seconds, sql_lookup);
    char line[400];
    std::snprintf(line, sizeof line,
                  "\"pull_%d_clients\": {\"per_second\": %.0f, \"p50_us\": %.0f, \"p99_us\": %.0f, "
                  "\"hand_per_second\": %.0f, \"hand_p50_us\": %.0f, \"hand_p99_us\": %.0f, "
                  "\"ratio\": %.3f}, ",
                  clients, f.per_second, f.p50, f.p99, hand.per_second, hand.p50, hand.p99,
                  hand.per_second > 0 ? f.per_second / hand.per_second : 0.0);
    out += line;
  }
  server.stop();
  app.close();
  return out + "\"pull_failures\": " + std::to_string(failed.load()) + ", ";
}

// Latencies in ms of the rows whose send time is at or after `from_us`.
struct Latencies {
  std::mutex mutex;
  std::vector<float> ms;
  void add(int64_t sent_us, int64_t from_us) {
    if (sent_us < from_us) return;
    std::lock_guard lock(mutex);
    ms.push_back(static_cast<float>(now_us() - sent_us) / 1000.0f);
  }
};

std::string push_part(const SqlServer& sql, const std::string& bootstrap,
                      const std::string& state_dir, double seconds, int rate) {
  sql.statement(
      "CREATE STREAM push_input (id STRING KEY, sent BIGINT) WITH (kafka_topic='push-input', "
      "value_format='JSON', partitions=4);");
  std::atomic<int64_t> measure_from{INT64_MAX};
  Latencies sql_latency, hand_latency;
  std::atomic<int64_t> hand_rows{0}, sql_rows{0};

  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("push-input")
      .foreach([&](const std::string&, const std::string& value) {
        ++hand_rows;
        auto colon = value.find(':');
        if (colon != std::string::npos)
          hand_latency.add(std::stoll(value.substr(colon + 1)), measure_from.load());
      });
  streams::KafkaStreams app(builder.build(), {{"application.id", "sql-server-bench-push"},
                                              {"bootstrap.servers", bootstrap},
                                              {"state.dir", state_dir},
                                              {"auto.offset.reset", "latest"}});
  app.start();

  oxbow::http::StreamingRequest push;
  std::thread reader([&] {
    std::string pending;
    oxbow::http::Request request{"POST",
                                 "/query",
                                 "",
                                 json{{"ksql", "SELECT sent FROM push_input EMIT CHANGES;"}}.dump(),
                                 "application/vnd.ksql.v1+json",
                                 "application/vnd.ksql.v1+json",
                                 ""};
    push.run(sql.url(), request, 60000, [&](std::string_view piece) {
      // Each row is {"row":{"columns":[<sent>]}}: taken once its ']' is in.
      pending += piece;
      const std::string columns = "\"columns\":[";
      size_t row, end;
      while ((row = pending.find(columns)) != std::string::npos &&
             (end = pending.find(']', row)) != std::string::npos) {
        ++sql_rows;
        sql_latency.add(std::stoll(pending.substr(row + columns.size())), measure_from.load());
        pending.erase(0, end + 1);
      }
    });
  });

  // Warm up until both read what is produced, then measure what is sent from then on.
  Producer producer(bootstrap);
  int64_t sent = 0;
  auto send_one = [&] {
    producer.send("push-input", key_of(sent++ % 1000),
                  "{\"SENT\":" + std::to_string(now_us()) + "}");
  };
  wait_until(
      [&] {
        send_one();
        producer.flush();
        return sql_rows.load() > 0 && hand_rows.load() > 0;
      },
      "the push query and the foreach reading");
  measure_from = now_us();
  auto start = Clock::now();
  auto interval = std::chrono::duration<double>(1.0 / rate);
  for (int64_t i = 0; Clock::now() - start < std::chrono::duration<double>(seconds); ++i) {
    std::this_thread::sleep_until(start +
                                  std::chrono::duration_cast<Clock::duration>(interval * i));
    send_one();
  }
  producer.flush();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the last rows' way to both readers
  push.cancel();
  reader.join();
  app.close();
  Figures s = figures_of(sql_latency.ms, 1), h = figures_of(hand_latency.ms, 1);
  char line[400];
  std::snprintf(line, sizeof line,
                "\"push\": {\"rate\": %d, \"rows\": %zu, \"p50_ms\": %.2f, \"p99_ms\": %.2f, "
                "\"hand_rows\": %zu, \"hand_p50_ms\": %.2f, \"hand_p99_ms\": %.2f, "
                "\"p99_ratio\": %.2f}",
                rate, sql_latency.ms.size(), s.p50, s.p99, hand_latency.ms.size(), h.p50, h.p99,
                h.p99 > 0 ? s.p99 / h.p99 : 0.0);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args{
      {"--keys", "1000000"}, {"--seconds", "10"}, {"--rate", "10000"}};
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  for (const char* required : {"--bootstrap-server", "--sql-url", "--state-dir"})
    if (!args.count(required)) {
      std::fprintf(stderr,
                   "usage: sql_server_load --bootstrap-server B --sql-url URL --state-dir DIR "
                   "[--keys N] [--seconds S] [--rate R]\n");
      return 2;
    }
  try {
    SqlServer sql(args["--sql-url"]);
    sql.statement("SET 'auto.offset.reset' = 'earliest';");
    std::string out = "{" +
                      pull_part(sql, args["--bootstrap-server"], args["--state-dir"] + "/pull",
                                std::stoll(args["--keys"]), std::stod(args["--seconds"])) +
                      push_part(sql, args["--bootstrap-server"], args["--state-dir"] + "/push",
                                std::stod(args["--seconds"]), std::stoi(args["--rate"])) +
                      ", \"keys\": " + args["--keys"] + "}";
    std::printf("%s\n", out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sql_server_load: %s\n", e.what());
    return 1;
  }
  return 0;
}
