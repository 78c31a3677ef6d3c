// Interactive-query lookups, for bench/streams_iq.sh. One process:
//   1. writes --keys distinct keys (k0 ... kN-1) to --input with Java's partitioner, and counts
//      them with stream -> groupByKey -> count(Materialized.as("counts")) (RocksDB);
//   2. store API: random get()s from 1 and 4 threads for --seconds each, against the baseline of
//      the same gets on a plain RocksDB database holding the same keys (the store's floor);
//   3. HTTP (oxbow/streams/rest_server.h): GET /counts/{key} answered from the store, from 8
//      client threads, against the baseline of GET /ping answered with a constant by the same
//      server (a connection per request, as the project's HTTP client makes).
// Prints one JSON object on stdout (the line starting with '{'): per part, lookups/s, p50 and p99
// in microseconds, and the ratio to its baseline.
// Usage: streams_iq --bootstrap-server B --input T --state-dir DIR [--keys N] [--seconds S]
#include <librdkafka/rdkafka.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "http/client.h"
#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/rest_server.h"
#include "oxbow/streams/streams_builder.h"

namespace streams = oxbow::streams;
using Clock = std::chrono::steady_clock;

namespace {

struct Figures {
  double per_second = 0, p50_us = 0, p99_us = 0;
};

// Runs `op(thread, random)` in `threads` threads for `seconds`, timing each call.
Figures measure(int threads, double seconds, const std::function<void(std::mt19937_64&)>& op) {
  std::vector<std::vector<float>> latencies(threads);
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  auto start = Clock::now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937_64 random(t + 1);
      auto& mine = latencies[t];
      mine.reserve(1 << 20);
      while (!stop.load(std::memory_order_relaxed)) {
        auto before = Clock::now();
        op(random);
        mine.push_back(std::chrono::duration<float, std::micro>(Clock::now() - before).count());
      }
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : pool) t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<float> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  Figures f;
  f.per_second = static_cast<double>(all.size()) / elapsed;
  if (!all.empty()) {
    f.p50_us = all[all.size() / 2];
    f.p99_us = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  return f;
}

void produce_keys(const std::string& bootstrap, const std::string& topic, int64_t keys) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), error, sizeof error);
  rd_kafka_conf_set(conf, "partitioner", "murmur2_random", error, sizeof error);
  rd_kafka_conf_set(conf, "linger.ms", "20", error, sizeof error);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  for (int64_t i = 0; i < keys; ++i) {
    std::string key = "k" + std::to_string(i);
    while (rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic.c_str()),
                             RD_KAFKA_V_KEY(key.data(), key.size()),
                             RD_KAFKA_V_VALUE(const_cast<char*>("x"), 1),
                             RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                             RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
      rd_kafka_poll(producer, 10);
  }
  rd_kafka_flush(producer, 60000);
  rd_kafka_destroy(producer);
}

std::string json_figures(const char* name, const Figures& f, const Figures& base) {
  char out[400];
  std::snprintf(out, sizeof out,
                "\"%s\": {\"per_second\": %.0f, \"p50_us\": %.1f, \"p99_us\": %.1f, "
                "\"baseline_per_second\": %.0f, \"baseline_p99_us\": %.1f, \"ratio\": %.3f}",
                name, f.per_second, f.p50_us, f.p99_us, base.per_second, base.p99_us,
                base.per_second > 0 ? f.per_second / base.per_second : 0.0);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args{{"--keys", "100000"}, {"--seconds", "5"}};
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  for (const char* required : {"--bootstrap-server", "--input", "--state-dir"})
    if (!args.count(required)) {
      std::fprintf(stderr,
                   "usage: streams_iq --bootstrap-server B --input T --state-dir DIR "
                   "[--keys N] [--seconds S]\n");
      return 2;
    }
  int64_t keys = std::stoll(args["--keys"]);
  double seconds = std::stod(args["--seconds"]);
  produce_keys(args["--bootstrap-server"], args["--input"], keys);

  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>(args["--input"])
      .groupByKey()
      .count(streams::Materialized<std::string, int64_t>::as("counts"));
  streams::KafkaStreams app(builder.build(), {{"application.id", "iq-bench"},
                                              {"bootstrap.servers", args["--bootstrap-server"]},
                                              {"state.dir", args["--state-dir"]},
                                              {"commit.interval.ms", "100"}});
  app.start();
  auto counts = [&] {
    return app.store(streams::StoreQueryParameters<>::fromNameAndType(
        "counts", streams::QueryableStoreTypes::keyValueStore<std::string, int64_t>()));
  };
  auto deadline = Clock::now() + std::chrono::minutes(5);
  while (Clock::now() < deadline) {
    try {
      if (counts().approximateNumEntries() >= keys && counts().get("k" + std::to_string(keys - 1)))
        break;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto key_of = [keys](std::mt19937_64& r) {
    return "k" + std::to_string(static_cast<int64_t>(r() % static_cast<uint64_t>(keys)));
  };
  auto store = counts();
  std::atomic<int64_t> misses{0};
  auto lookup = [&](std::mt19937_64& r) {
    if (!store.get(key_of(r))) ++misses;
  };

  // The floor: the same keys in a plain RocksDB database, read with Get().
  std::string raw_path = args["--state-dir"] + "/raw-rocksdb";
  std::filesystem::remove_all(raw_path);
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options;
  options.create_if_missing = true;
  if (!rocksdb::DB::Open(options, raw_path, &raw).ok()) return 1;
  for (int64_t i = 0; i < keys; ++i)
    raw->Put(rocksdb::WriteOptions(), "k" + std::to_string(i), std::string(16, 'v'));
  raw->Flush(rocksdb::FlushOptions());
  auto raw_get = [&](std::mt19937_64& r) {
    std::string value;
    raw->Get(rocksdb::ReadOptions(), key_of(r), &value);
  };

  std::string out = "{";
  for (int threads : {1, 4}) {
    Figures base = measure(threads, seconds, raw_get);
    Figures f = measure(threads, seconds, lookup);
    out +=
        json_figures(("store_get_" + std::to_string(threads) + "_threads").c_str(), f, base) + ", ";
  }
  delete raw;

  streams::rest::RestServer server;
  server.route("GET", "/ping",
               [](const streams::rest::Request&) { return streams::rest::Response::json("{}"); });
  server.route("GET", "/counts/{key}", [&](const streams::rest::Request& r) {
    auto n = store.get(r.param("key"));
    if (!n) return streams::rest::Response::error(404, "no such key");
    return streams::rest::Response::json("{\"count\":" + std::to_string(*n) + "}");
  });
  server.start("127.0.0.1", 0);
  std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  std::atomic<int64_t> failed{0};
  auto get = [&](const std::string& path) {
    oxbow::http::Request request;
    request.method = "GET";
    request.path = path;
    auto answer = oxbow::http::send_request(url, request, 10000);
    if (!answer.response || answer.response->status != 200) ++failed;
  };
  Figures base = measure(8, seconds, [&](std::mt19937_64&) { get("/ping"); });
  Figures f = measure(8, seconds, [&](std::mt19937_64& r) { get("/counts/" + key_of(r)); });
  out += json_figures("http_get_8_clients", f, base);
  out += ", \"keys\": " + std::to_string(keys) + ", \"misses\": " + std::to_string(misses.load()) +
         ", \"http_failures\": " + std::to_string(failed.load()) + "}";
  server.stop();
  app.close();
  std::printf("%s\n", out.c_str());
  return 0;
}
