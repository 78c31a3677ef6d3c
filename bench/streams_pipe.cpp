// The baselines of bench/streams.sh, on librdkafka alone:
//   load     writes the input: lines of ~10 lowercase words (or, with --distinct, distinct keys);
//            with --keys K, keyed events of about the lines' size instead: keys key-000000 ...
//            drawn uniformly from K (or, with --table, each key once in order, a table's rows),
//            and with --events-per-ms E event timestamps that advance 1 ms every E records and
//            end a second before the load started
//   pipe     consumes a topic in a group and produces every record unchanged to another, with the
//            clients configured as an oxbow-streams thread configures its own, so that the ratio
//            of a Streams app to this is the cost of the library and not of the client settings
//   consume  reads every partition of a topic from the beginning to its end, as the library's
//            restore consumer reads a changelog
// pipe and consume print one JSON object on stdout; everything else goes to stderr.
// Usage: streams_pipe load|pipe|consume [--bootstrap-server B] [--topic T] [--input T]
//        [--output T] [--group G] [--records N] [--distinct] [--keys K] [--table]
//        [--events-per-ms E] [--config KEY=VALUE]...
#include <librdkafka/rdkafka.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "streams/runtime/fetch_restarter.h"

namespace {

using Config = std::map<std::string, std::string>;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "streams_pipe: %s\n", what.c_str());
  std::exit(1);
}

struct Options {
  std::string mode, bootstrap = "localhost:9092", topic, input, output, group;
  long long records = 0, keys = 0, events_per_ms = 0;
  bool distinct = false, table = false;
  // As an oxbow-streams application takes them: consumer.* and producer.* go to those clients
  // (without the prefix), commit.interval.ms is the pipe's commit interval, and other Streams
  // settings do not apply here, so that bench/streams.sh can give both the same --config list.
  Config consumer, producer;
  long long commit_interval_ms = 30000;
};

Options parse(int argc, char** argv) {
  if (argc < 2) fail("usage: streams_pipe load|pipe|consume [--flag value]...");
  Options o;
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--distinct" || flag == "--table") {
      (flag == "--distinct" ? o.distinct : o.table) = true;
      continue;
    }
    if (i + 1 >= argc) fail(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--bootstrap-server") {
      o.bootstrap = value;
    } else if (flag == "--topic") {
      o.topic = value;
    } else if (flag == "--input") {
      o.input = value;
    } else if (flag == "--output") {
      o.output = value;
    } else if (flag == "--group") {
      o.group = value;
    } else if (flag == "--records") {
      o.records = std::atoll(value.c_str());
    } else if (flag == "--keys") {
      o.keys = std::atoll(value.c_str());
    } else if (flag == "--events-per-ms") {
      o.events_per_ms = std::atoll(value.c_str());
    } else if (flag == "--config") {
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0) fail("--config needs KEY=VALUE");
      std::string key = value.substr(0, eq), v = value.substr(eq + 1);
      if (key.rfind("consumer.", 0) == 0) {
        o.consumer[key.substr(9)] = v;
      } else if (key.rfind("producer.", 0) == 0) {
        o.producer[key.substr(9)] = v;
      } else if (key == "commit.interval.ms") {
        o.commit_interval_ms = std::atoll(v.c_str());
      } else {
        std::fprintf(stderr, "streams_pipe: %s is a Streams setting, not used here\n", key.c_str());
      }
    } else {
      fail("unknown flag " + flag);
    }
  }
  return o;
}

// The fixed settings go last, as the library applies them: a --config cannot change what the
// library does not let users change either (acks, idempotence, assignor, ...).
rd_kafka_t* client(rd_kafka_type_t type, const std::string& bootstrap, const Config& user,
                   const Config& fixed, rd_kafka_conf_t* conf = nullptr) {
  if (!conf) conf = rd_kafka_conf_new();
  char error[512];
  auto set = [&](const std::string& k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK)
      fail(k + ": " + error);
  };
  set("bootstrap.servers", bootstrap);
  // The library's consumer defaults, which an application (and so a --config here) may change.
  if (type == RD_KAFKA_CONSUMER) set("queued.min.messages", "200000");
  for (const auto& [k, v] : user) set(k, v);
  for (const auto& [k, v] : fixed) set(k, v);
  rd_kafka_t* rk = rd_kafka_new(type, conf, error, sizeof error);
  if (!rk) fail(std::string("cannot create a client: ") + error);
  return rk;
}

// What a stream thread of oxbow-streams sets (src/streams/runtime/stream_thread.cpp), at least
// once: the producer acks=all and idempotent, the consumer committing by hand.
const Config kProducer{{"partitioner", "murmur2_random"},
                       {"acks", "all"},
                       {"enable.idempotence", "true"},
                       {"linger.ms", "5"},
                       {"allow.auto.create.topics", "false"}};
const Config kConsumer{{"enable.auto.commit", "false"},
                       {"auto.offset.reset", "earliest"},
                       {"partition.assignment.strategy", "range"},
                       {"isolation.level", "read_uncommitted"}};

std::atomic<long long> delivery_errors{0};
void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  if (m->err && delivery_errors++ == 0)
    std::fprintf(stderr, "streams_pipe: delivery failed: %s\n", rd_kafka_err2str(m->err));
}

rd_kafka_t* producer(const Options& o, const Config& fixed) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  return client(RD_KAFKA_PRODUCER, o.bootstrap, o.producer, fixed, conf);
}

// Through a topic handle, as oxbow-streams' sinks produce: naming the topic on every message
// costs librdkafka a lookup under its client-wide lock each time.
void produce(rd_kafka_t* rk, rd_kafka_topic_t* topic, const void* key, size_t key_size,
             const void* value, size_t value_size, int64_t timestamp) {
  while (true) {
    auto err = rd_kafka_producev(rk, RD_KAFKA_V_RKT(topic), RD_KAFKA_V_KEY(key, key_size),
                                 RD_KAFKA_V_VALUE(const_cast<void*>(value), value_size),
                                 RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                 RD_KAFKA_V_TIMESTAMP(timestamp), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk, 10);
      continue;
    }
    if (err)
      fail(std::string("produce to ") + rd_kafka_topic_name(topic) + ": " + rd_kafka_err2str(err));
    return;
  }
}

void flush(rd_kafka_t* rk) {
  while (rd_kafka_outq_len(rk) > 0) rd_kafka_flush(rk, 1000);
  if (delivery_errors > 0) fail(std::to_string(delivery_errors.load()) + " deliveries failed");
}

// Text with a word-frequency curve like a natural language's (Zipf over a fixed vocabulary), so
// that word count keeps a few thousand hot keys in its cache, as it would on real text, and not
// millions of one-off words.
class TextGenerator {
 public:
  explicit TextGenerator(uint64_t seed) : rng_(seed) {
    std::uniform_int_distribution<int> length(2, 10), letter('a', 'z');
    double total = 0;
    for (int i = 0; i < kVocabulary; ++i) {
      std::string word(static_cast<size_t>(length(rng_)), ' ');
      for (auto& c : word) c = static_cast<char>(letter(rng_));
      vocabulary_.push_back(std::move(word));
      total += 1.0 / (i + 1);
      cdf_.push_back(total);
    }
    for (auto& c : cdf_) c /= total;
  }
  std::string line() {
    std::uniform_int_distribution<int> count(8, 12);
    std::uniform_real_distribution<double> u(0, 1);
    std::string out;
    for (int n = count(rng_), i = 0; i < n; ++i) {
      auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u(rng_));
      size_t index = std::min(static_cast<size_t>(it - cdf_.begin()), vocabulary_.size() - 1);
      if (i > 0) out += ' ';
      out += vocabulary_[index];
    }
    return out;
  }

 private:
  static constexpr int kVocabulary = 10000;
  std::mt19937_64 rng_;
  std::vector<std::string> vocabulary_;
  std::vector<double> cdf_;
};

int load(const Options& o) {
  if (o.topic.empty() || o.records <= 0) fail("load needs --topic and --records");
  if (o.table && o.keys <= 0) fail("--table needs --keys");
  // Not measured: larger batches than the pipe's, acks=1, so that loading takes little of the run.
  // Keyed records go where a Streams application writes a key (Java's partitioner), so that a
  // table and a stream loaded here are co-partitioned as the library's join expects.
  Config fixed{{"acks", "1"}, {"linger.ms", "20"}, {"batch.size", "1000000"}};
  if (o.keys > 0) fixed["partitioner"] = "murmur2_random";
  rd_kafka_t* rk = producer(o, fixed);
  rd_kafka_topic_t* topic = rd_kafka_topic_new(rk, o.topic.c_str(), nullptr);
  TextGenerator text(42);
  std::mt19937_64 rng(o.table ? 7 : 43);
  std::uniform_int_distribution<long long> any_key(0, std::max(o.keys, 1LL) - 1);
  std::uniform_int_distribution<int> number(0, 9999999);
  // Event time: 1 ms every events_per_ms records, the last a second before now (librdkafka's 0
  // is "now", the create time of the lines).
  int64_t first_ms = 0;
  if (o.events_per_ms > 0) {
    auto wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    first_ms = wall_ms - 1000 - (o.records + o.events_per_ms - 1) / o.events_per_ms;
  }
  double t0 = now_s();
  char key[32], value[128];
  for (long long i = 0; i < o.records; ++i) {
    int64_t timestamp = o.events_per_ms > 0 ? first_ms + i / o.events_per_ms : 0;
    if (o.keys > 0) {
      long long k = o.table ? i % o.keys : any_key(rng);
      int key_size = std::snprintf(key, sizeof key, "key-%06lld", k);
      // About the size of a line: a bid's fields, or a table row's.
      int value_size =
          o.table
              ? std::snprintf(value, sizeof value, "name=person-%06lld,city=city-%04d,state=%02d",
                              k, number(rng) % 10000, number(rng) % 50)
              : std::snprintf(value, sizeof value,
                              "bidder=%07d,price=%07d,channel=%d,url=/item/%07d", number(rng),
                              number(rng), number(rng) % 10, number(rng));
      produce(rk, topic, key, static_cast<size_t>(key_size), value, static_cast<size_t>(value_size),
              timestamp);
    } else if (o.distinct) {
      int n = std::snprintf(key, sizeof key, "key-%010lld", i);
      produce(rk, topic, nullptr, 0, key, static_cast<size_t>(n), timestamp);
    } else {
      std::string line = text.line();
      produce(rk, topic, nullptr, 0, line.data(), line.size(), timestamp);
    }
    if (i % 1000 == 0) rd_kafka_poll(rk, 0);
  }
  flush(rk);
  rd_kafka_topic_destroy(topic);
  rd_kafka_destroy(rk);
  std::fprintf(stderr, "loaded %lld records into %s in %.1f s\n", o.records, o.topic.c_str(),
               now_s() - t0);
  return 0;
}

int partition_count(rd_kafka_t* rk, const std::string& topic) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  auto err = rd_kafka_metadata(rk, 0, t, &md, 10000);
  rd_kafka_topic_destroy(t);
  if (err) fail("metadata of " + topic + ": " + rd_kafka_err2str(err));
  int partitions = md->topic_cnt == 1 && !md->topics[0].err ? md->topics[0].partition_cnt : 0;
  rd_kafka_metadata_destroy(md);
  return partitions;
}

void print_result(const char* mode, long long records, double seconds, double extra_seconds) {
  double cpu = cpu_seconds();
  std::printf(
      "{\"mode\": \"%s\", \"records\": %lld, \"seconds\": %.3f, \"records_per_sec\": %.0f, "
      "\"close_ms\": %.0f, \"cpu_seconds\": %.3f, \"records_per_cpu_sec\": %.0f, "
      "\"max_rss_mb\": %ld}\n",
      mode, records, seconds, static_cast<double>(records) / seconds, extra_seconds * 1000, cpu,
      static_cast<double>(records) / cpu, max_rss_mb());
}

int pipe(const Options& o) {
  if (o.input.empty() || o.output.empty() || o.group.empty() || o.records <= 0)
    fail("pipe needs --input, --output, --group and --records");
  rd_kafka_t* out = producer(o, kProducer);
  // librdkafka 2.0 asks for a new topic's metadata only on its 1 s timer and holds what is
  // produced to it until then, so a producer that starts by writing stalls for up to a second
  // (oxbow-streams' sinks do, today). The baseline asks up front, as Java's producer does in its
  // first send().
  if (partition_count(out, o.output) == 0) fail("no topic " + o.output);
  rd_kafka_topic_t* output = rd_kafka_topic_new(out, o.output.c_str(), nullptr);
  Config cfixed = kConsumer;
  cfixed["group.id"] = o.group;
  rd_kafka_t* in = client(RD_KAFKA_CONSUMER, o.bootstrap, o.consumer, cfixed);
  rd_kafka_poll_set_consumer(in);
  auto* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, o.input.c_str(), RD_KAFKA_PARTITION_UA);
  if (auto err = rd_kafka_subscribe(in, topics)) fail(rd_kafka_err2str(err));
  rd_kafka_topic_partition_list_destroy(topics);

  // As a stream thread at least once: every commit.interval.ms, and at the end, the output is
  // acknowledged first and the input offsets committed after.
  auto commit = [&] {
    flush(out);
    auto err = rd_kafka_commit(in, nullptr, 0);
    if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
      fail(std::string("commit: ") + rd_kafka_err2str(err));
  };
  long long piped = 0;
  int unserved = 0;
  double first = 0, last_commit = now_s(), last_served = last_commit;
  // The stream threads' remedy for librdkafka 2.0.2's fetch stall, so that the baseline is the
  // client's ceiling rather than that stall's.
  oxbow::streams::detail::FetchRestarter restarter(in);
  while (piped < o.records) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(in, restarter.watching() ? 1 : 100);
    if (!m) restarter.idle([](const char*, int32_t) { return false; });
    if (m) {
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        restarter.got_record(m->key_len + m->len);
        if (piped++ == 0) first = now_s();
        produce(out, output, m->key, m->key_len, m->payload, m->len,
                rd_kafka_message_timestamp(m, nullptr));
      } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        std::fprintf(stderr, "streams_pipe: consumer: %s\n", rd_kafka_message_errstr(m));
      }
      rd_kafka_message_destroy(m);
    }
    // Delivery reports as a stream thread serves them: every 64 records, when idle, every 10 ms.
    double now = now_s();
    if (!m || ++unserved >= 64 || now - last_served >= 0.01) {
      rd_kafka_poll(out, 0);
      unserved = 0;
      last_served = now;
    }
    if ((now - last_commit) * 1000 >= static_cast<double>(o.commit_interval_ms)) {
      commit();
      last_commit = now_s();
    }
  }
  double done = now_s();
  commit();
  rd_kafka_consumer_close(in);
  rd_kafka_destroy(in);
  rd_kafka_topic_destroy(output);
  rd_kafka_destroy(out);
  double closed = now_s();
  print_result("pipe", piped, closed - first, closed - done);
  return 0;
}

int consume(const Options& o) {
  if (o.topic.empty()) fail("consume needs --topic");
  double t0 = now_s();
  // As the library's restore consumer (stream_thread.cpp, restore()).
  rd_kafka_t* rk = client(RD_KAFKA_CONSUMER, o.bootstrap, o.consumer,
                          {{"group.id", o.topic + "-bench-consume"},
                           {"enable.auto.commit", "false"},
                           {"enable.partition.eof", "true"},
                           {"isolation.level", "read_committed"}});
  rd_kafka_poll_set_consumer(rk);
  int partitions = partition_count(rk, o.topic);
  if (partitions == 0) fail("no topic " + o.topic);
  auto* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p)
    rd_kafka_topic_partition_list_add(list, o.topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  long long records = 0;
  int at_end = 0;
  oxbow::streams::detail::FetchRestarter restarter(rk);  // as the restore consumer has
  while (at_end < partitions) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, restarter.watching() ? 1 : 500);
    if (!m) {
      restarter.idle([](const char*, int32_t) { return false; });
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      ++at_end;
    } else if (m->err) {
      fail(std::string("consume: ") + rd_kafka_message_errstr(m));
    } else {
      ++records;
      restarter.got_record(m->key_len + m->len);
    }
    rd_kafka_message_destroy(m);
  }
  double done = now_s();
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  print_result("consume", records, done - t0, now_s() - done);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (o.mode == "load") return load(o);
  if (o.mode == "pipe") return pipe(o);
  if (o.mode == "consume") return consume(o);
  fail("unknown mode " + o.mode + " (load, pipe or consume)");
}
