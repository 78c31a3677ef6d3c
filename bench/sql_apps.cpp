// What bench/sql.sh measures: a query of the SQL engine (oxbow-sql) against the same query written
// by hand in the Streams DSL, on the same input, in JSON or DELIMITED values.
//   load      writes --records orders (key: customer c<n> of --keys; value ITEM, QTY, PRICE) to
//             --input, and with --table the --keys customers (key c<n>; value REGION)
//   sql       runs the query through the engine's topology
//   hand      runs the hand-written topology
// Queries (--query): project (SELECT customer, item, qty * price AS total WHERE qty > 1),
// tumbling (COUNT(*) per customer in 1 s windows, no grace), join (orders joined with the
// customers table by key). Each run ends when the application's committed offsets reach the end
// of its input topics (commit.interval.ms is 100 for both), and prints one JSON object: input
// records/s from RUNNING to then, CPU seconds and records per CPU-second.
// Usage: sql_apps load|sql|hand --bootstrap-server B [--query Q] [--format json|delimited]
//        [--input T] [--table T] [--output T] [--records N] [--keys K] [--pad N] [--state-dir D]
// (--pad N: N more characters in each order's item, for larger records)
#include <librdkafka/rdkafka.h>
#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "oxbow/streams/json_serde.h"
#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/windowed_kstream.h"
#include "sql/engine/engine.h"

namespace streams = oxbow::streams;
using nlohmann::json;

namespace {

struct Options {
  std::string mode, bootstrap = "localhost:9092", query = "project", format = "json";
  std::string input = "sql-orders", table = "sql-customers", output = "sql-output";
  std::string state_dir = "/tmp/sql-bench";
  int64_t records = 1'000'000, keys = 10'000, pad = 0;
};

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

bool delimited(const Options& o) {
  return o.format == "delimited";
}

// ---- load ----------------------------------------------------------------------------------

std::string order_value(const Options& o, int64_t i) {
  std::string item =
      "item-" + std::to_string(i % 977) + std::string(static_cast<size_t>(o.pad), 'x');
  int qty = static_cast<int>(i % 5);
  double price = 1.25 * static_cast<double>(i % 40);
  if (delimited(o)) return item + "," + std::to_string(qty) + "," + std::to_string(price);
  return json{{"ITEM", item}, {"QTY", qty}, {"PRICE", price}}.dump();
}

int load(const Options& o) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", o.bootstrap.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "linger.ms", "20", err, sizeof err);
  rd_kafka_conf_set(conf, "partitioner", "murmur2_random", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) return std::fprintf(stderr, "sql_apps: %s\n", err), 1;
  const int64_t base = 1'700'000'000'000;
  int64_t order_bytes = 0;
  auto send = [&](const std::string& topic, const std::string& key, const std::string& value,
                  int64_t ts) {
    while (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                             RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
                             RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                             RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                             RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
      rd_kafka_poll(rk, 10);
  };
  if (o.query == "join")
    for (int64_t k = 0; k < o.keys; ++k)
      send(o.table, "c" + std::to_string(k),
           delimited(o) ? "region-" + std::to_string(k % 7)
                        : json{{"REGION", "region-" + std::to_string(k % 7)}}.dump(),
           base);
  for (int64_t i = 0; i < o.records; ++i) {
    std::string key = "c" + std::to_string(i % o.keys), value = order_value(o, i);
    order_bytes += static_cast<int64_t>(key.size() + value.size());
    send(o.input, key, value, base + 1 + i / 10);
  }
  rd_kafka_flush(rk, 60000);
  rd_kafka_destroy(rk);
  std::printf("{\"orders\": %lld, \"order_bytes\": %lld}\n", static_cast<long long>(o.records),
              static_cast<long long>(order_bytes));
  return 0;
}

// ---- the SQL engine's topology ----------------------------------------------------------------

std::string sql_statements(const Options& o) {
  std::string format = delimited(o) ? "DELIMITED" : "JSON";
  std::string s =
      "CREATE STREAM orders (customer STRING KEY, item STRING, qty INT, price DOUBLE) "
      "WITH (kafka_topic='" +
      o.input + "', value_format='" + format + "');\n";
  if (o.query == "project")
    return s + "CREATE STREAM out WITH (kafka_topic='" + o.output +
           "') AS SELECT customer, item, qty * price AS total FROM orders WHERE qty > 1;";
  if (o.query == "tumbling")
    return s + "CREATE TABLE out WITH (kafka_topic='" + o.output +
           "') AS SELECT customer, COUNT(*) AS n FROM orders WINDOW TUMBLING (SIZE 1 SECOND, "
           "GRACE PERIOD 0 SECONDS) GROUP BY customer;";
  return s + "CREATE TABLE customers (id STRING PRIMARY KEY, region STRING) WITH (kafka_topic='" +
         o.table + "', value_format='" + format + "');\nCREATE STREAM out WITH (kafka_topic='" +
         o.output +
         "') AS SELECT o.customer, item, region FROM orders o JOIN customers c ON o.customer = "
         "c.id;";
}

// ---- the same queries by hand -----------------------------------------------------------------

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line)
    if (c == ',')
      out.emplace_back();
    else
      out.back() += c;
  return out;
}

streams::Topology hand_delimited(const Options& o) {
  streams::StreamsBuilder builder;
  auto orders = builder.stream<std::string, std::string>(o.input);
  if (o.query == "project") {
    orders
        .filter([](const std::string&, const std::string& v) {
          auto f = fields(v);
          return f.size() == 3 && std::atoi(f[1].c_str()) > 1;
        })
        .mapValues([](const std::string& v) {
          auto f = fields(v);
          return f[0] + "," + std::to_string(std::atoi(f[1].c_str()) * std::atof(f[2].c_str()));
        })
        .to(o.output);
  } else if (o.query == "tumbling") {
    orders.groupByKey()
        .windowedBy(streams::TimeWindows::ofSizeWithNoGrace(std::chrono::seconds(1)))
        .count()
        .toStream()
        .mapValues([](int64_t n) { return std::to_string(n); })
        .to(o.output, streams::Produced<streams::Windowed<std::string>, std::string>::with(
                          streams::serdes::TimeWindowed(streams::serdes::String(), 1000),
                          streams::serdes::String()));
  } else {
    auto customers = builder.table<std::string, std::string>(o.table);
    orders
        .join<std::string>(customers,
                           [](const std::string& order, const std::string& region) {
                             return fields(order)[0] + "," + region;
                           })
        .to(o.output);
  }
  return builder.build();
}

streams::Topology hand_json(const Options& o) {
  streams::StreamsBuilder builder;
  auto orders = builder.stream<std::string, json>(o.input);
  if (o.query == "project") {
    orders.filter([](const std::string&, const json& v) { return v.value("QTY", 0) > 1; })
        .mapValues([](const json& v) {
          return json{{"ITEM", v["ITEM"]}, {"TOTAL", v.value("QTY", 0) * v.value("PRICE", 0.0)}};
        })
        .to(o.output);
  } else if (o.query == "tumbling") {
    orders.groupByKey()
        .windowedBy(streams::TimeWindows::ofSizeWithNoGrace(std::chrono::seconds(1)))
        .count()
        .toStream()
        .mapValues([](int64_t n) {
          return json{{"N", n}};
        })
        .to(o.output, streams::Produced<streams::Windowed<std::string>, json>::with(
                          streams::serdes::TimeWindowed(streams::serdes::String(), 1000),
                          streams::serdes::Json()));
  } else {
    auto customers = builder.table<std::string, json>(o.table);
    orders
        .join<json>(customers,
                    [](const json& order, const json& customer) {
                      return json{{"ITEM", order["ITEM"]}, {"REGION", customer["REGION"]}};
                    })
        .to(o.output);
  }
  return builder.build();
}

// ---- running and timing -----------------------------------------------------------------------

// Whether the group's committed offsets have reached the end of every partition of `topics`.
bool caught_up(rd_kafka_t* rk, const std::vector<std::string>& topics, int partitions) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(16);
  for (const auto& t : topics)
    for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list, t.c_str(), p);
  bool done = rd_kafka_committed(rk, list, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int i = 0; done && i < list->cnt; ++i) {
    int64_t low = 0, high = 0;
    rd_kafka_query_watermark_offsets(rk, list->elems[i].topic, list->elems[i].partition, &low,
                                     &high, 5000);
    done = high == 0 || list->elems[i].offset == high;
  }
  rd_kafka_topic_partition_list_destroy(list);
  return done;
}

int run(const Options& o, const streams::Topology& topology,
        std::map<std::string, std::string> config) {
  config["bootstrap.servers"] = o.bootstrap;
  config["state.dir"] = o.state_dir;
  config["commit.interval.ms"] = "100";
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", o.bootstrap.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", config["application.id"].c_str(), err, sizeof err);
  rd_kafka_t* probe = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  std::vector<std::string> inputs = {o.input};
  if (o.query == "join") inputs.push_back(o.table);
  std::atomic<int64_t> running_ns{0};
  streams::KafkaStreams app(topology, config);
  app.setStateListener([&](streams::KafkaStreams::State now, streams::KafkaStreams::State) {
    if (now == streams::KafkaStreams::State::RUNNING && running_ns == 0) running_ns = now_ns();
  });
  app.start();
  int64_t deadline = now_ns() + 600'000'000'000;
  while (now_ns() < deadline && !(running_ns && caught_up(probe, inputs, 3)))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  int64_t done_ns = now_ns();
  double cpu = cpu_seconds();
  app.close(std::chrono::seconds(60));
  rd_kafka_destroy(probe);
  if (!running_ns || done_ns >= deadline) return std::fprintf(stderr, "sql_apps: timed out\n"), 1;
  double seconds = static_cast<double>(done_ns - running_ns) / 1e9;
  std::printf(
      "{\"mode\": \"%s\", \"query\": \"%s\", \"format\": \"%s\", \"records\": %lld, "
      "\"seconds\": %.3f, \"records_per_sec\": %.0f, \"cpu_seconds\": %.3f, "
      "\"records_per_cpu_sec\": %.0f}\n",
      o.mode.c_str(), o.query.c_str(), o.format.c_str(), static_cast<long long>(o.records), seconds,
      static_cast<double>(o.records) / seconds, cpu, static_cast<double>(o.records) / cpu);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: sql_apps load|sql|hand [flags]\n"), 2;
  Options o;
  o.mode = argv[1];
  std::map<std::string, std::string*> text = {{"--bootstrap-server", &o.bootstrap},
                                              {"--query", &o.query},
                                              {"--format", &o.format},
                                              {"--input", &o.input},
                                              {"--table", &o.table},
                                              {"--output", &o.output},
                                              {"--state-dir", &o.state_dir}};
  std::map<std::string, int64_t*> numbers = {
      {"--records", &o.records}, {"--keys", &o.keys}, {"--pad", &o.pad}};
  for (int i = 2; i + 1 < argc; i += 2) {
    if (auto t = text.find(argv[i]); t != text.end())
      *t->second = argv[i + 1];
    else if (auto n = numbers.find(argv[i]); n != numbers.end())
      *n->second = std::atoll(argv[i + 1]);
    else
      return std::fprintf(stderr, "sql_apps: unknown flag %s\n", argv[i]), 2;
  }
  try {
    if (o.mode == "load") return load(o);
    std::string app_id = "sql-bench-" + o.mode + "-" + o.query + "-" + o.format;
    if (o.mode == "hand")
      return run(o, delimited(o) ? hand_delimited(o) : hand_json(o), {{"application.id", app_id}});
    oxbow::sql::Engine engine;
    engine.execute(sql_statements(o));
    const auto& q = engine.queries().front();
    auto config = q.streams_config;
    config["application.id"] = app_id;
    return run(o, q.topology, config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sql_apps: %s\n", e.what());
    return 1;
  }
}
