// bench/registry.sh's load: requests against a running registry from C clients, each on its own
// keep-alive connection and thread, and the serdes' cost per record in process.
//
//   registry_load http URL CLIENTS SECONDS {root|register|lookup}
//     root: GET / (the HTTP round trip, the baseline); register: POST a new schema each time
//     (a record with a name of its own, compatibility NONE set first); lookup: GET
//     /schemas/ids/{id} over ids 1..the registered ones, uncached (the server is asked each time).
//     Prints one JSON line: requests/s, p50 and p99 latency in microseconds, errors.
//   registry_load serde URL RECORDS
//     The Avro Serializer and Deserializer (include/oxbow/registry/serdes.h) on an
//     impressions-like record, the schema's id cached after the first; beside them the same
//     record as compact JSON text (nlohmann dump and parse), and the client's cached id lookup.
//     Prints one JSON line of microseconds per record.
#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "oxbow/registry/serdes.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using Clock = std::chrono::steady_clock;

namespace {

struct Url {
  std::string host, port;
};

Url parse_url(const std::string& url) {
  std::string rest = url.substr(url.find("://") + 3);
  auto colon = rest.rfind(':');
  return {rest.substr(0, colon), rest.substr(colon + 1)};
}

class Connection {
 public:
  explicit Connection(const Url& url) : url_(url), stream_(context_) {
    asio::ip::tcp::resolver resolver(context_);
    stream_.connect(resolver.resolve(url.host, url.port));
  }
  int request(bhttp::verb verb, const std::string& target, const std::string& body = {}) {
    bhttp::request<bhttp::string_body> req{verb, target, 11};
    req.set(bhttp::field::host, url_.host);
    req.set(bhttp::field::content_type, "application/vnd.schemaregistry.v1+json");
    req.keep_alive(true);
    req.body() = body;
    req.prepare_payload();
    bhttp::write(stream_, req);
    bhttp::response<bhttp::string_body> res;
    bhttp::read(stream_, buffer_, res);
    return res.result_int();
  }

 private:
  Url url_;
  asio::io_context context_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

std::string schema_body(long n) {
  return R"({"schema":"{\"type\":\"record\",\"name\":\"Load)" + std::to_string(n) +
         R"(\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}"})";
}

int http_load(const std::string& url, int clients, double seconds, const std::string& mode) {
  Url u = parse_url(url);
  if (mode == "register")
    Connection(u).request(bhttp::verb::put, "/config", R"({"compatibility":"NONE"})");
  long max_id = 0;
  if (mode == "lookup") {
    Connection c(u);  // ids to look up: register a thousand first
    for (long n = 0; n < 1000; ++n)
      c.request(bhttp::verb::post, "/subjects/lookup-" + std::to_string(n % 10) + "/versions",
                schema_body(1000000000 + n));
    max_id = 1000;
  }
  std::atomic<long> next{static_cast<long>(Clock::now().time_since_epoch().count() % 1000000000)};
  std::atomic<long> errors{0};
  std::mutex mutex;
  std::vector<double> latencies;
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t)
    threads.emplace_back([&, t] {
      Connection c(u);
      std::vector<double> mine;
      long i = t;
      while (Clock::now() < deadline) {
        auto start = Clock::now();
        int status;
        if (mode == "root") {
          status = c.request(bhttp::verb::get, "/");
        } else if (mode == "register") {
          long n = next++;
          status =
              c.request(bhttp::verb::post, "/subjects/load-" + std::to_string(n % 50) + "/versions",
                        schema_body(n));
        } else {
          status = c.request(bhttp::verb::get,
                             "/schemas/ids/" + std::to_string(1 + (i++ * 7919) % max_id));
        }
        if (status != 200) ++errors;
        mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
      std::lock_guard lock(mutex);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  for (auto& t : threads) t.join();
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) {
    return latencies.empty() ? 0 : latencies[size_t(p * (latencies.size() - 1))];
  };
  std::printf(
      "{\"mode\":\"%s\",\"clients\":%d,\"requests_per_sec\":%.0f,\"p50_us\":%.0f,\"p99_us\":%.0f,"
      "\"errors\":%ld}\n",
      mode.c_str(), clients, latencies.size() / seconds, pct(0.5), pct(0.99), errors.load());
  return errors ? 1 : 0;
}

template <class F>
double micros_per(long n, F&& f) {
  auto start = Clock::now();
  for (long i = 0; i < n; ++i) f(i);
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / n;
}

int serde_cost(const std::string& url, long records) {
  using namespace oxbow::registry;
  const std::string schema = R"({"type":"record","name":"Impression","namespace":"bench","fields":[
    {"name":"impressionid","type":"string"},{"name":"userid","type":"string"},
    {"name":"adid","type":"string"},{"name":"viewtime","type":"long"},
    {"name":"country","type":["null","string"],"default":null}]})";
  nlohmann::json value = {{"impressionid", "impression_4711"},
                          {"userid", "user_42"},
                          {"adid", "ad_1337"},
                          {"viewtime", 1700000000123LL},
                          {"country", {{"string", "NZ"}}}};
  SerdeConfig config;
  config.client.urls = {url};
  auto client = std::make_shared<SchemaRegistryClient>(config.client);
  Serializer serializer(client, config, Format::kAvro, schema, false);
  Deserializer deserializer(client, config, Format::kAvro, false);
  std::string bytes = serializer.serialize("impressions", value);
  size_t sink = 0;
  double avro_ser =
      micros_per(records, [&](long) { sink += serializer.serialize("impressions", value).size(); });
  double avro_de = micros_per(
      records, [&](long) { sink += deserializer.deserialize("impressions", bytes).size(); });
  std::string text = value.dump();
  double json_ser = micros_per(records, [&](long) { sink += value.dump().size(); });
  double json_de = micros_per(records, [&](long) { sink += nlohmann::json::parse(text).size(); });
  int id = wire::parse(bytes).schema_id;
  double cached =
      micros_per(records, [&](long) { sink += client->schema_by_id(id).schema.size(); });
  std::printf(
      "{\"records\":%ld,\"avro_serialize_us\":%.3f,\"avro_deserialize_us\":%.3f,"
      "\"json_serialize_us\":%.3f,\"json_deserialize_us\":%.3f,\"cached_id_lookup_us\":%.3f,"
      "\"avro_bytes\":%zu,\"json_bytes\":%zu,\"sink\":%zu}\n",
      records, avro_ser, avro_de, json_ser, json_de, cached, bytes.size(), text.size(), sink % 10);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string what = argc > 1 ? argv[1] : "";
    if (what == "http" && argc == 6)
      return http_load(argv[2], std::stoi(argv[3]), std::stod(argv[4]), argv[5]);
    if (what == "serde" && argc == 4) return serde_cost(argv[2], std::stol(argv[3]));
  } catch (const std::exception& e) {
    std::cerr << "registry_load: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: registry_load http URL CLIENTS SECONDS {root|register|lookup}\n"
               "       registry_load serde URL RECORDS\n";
  return 2;
}
