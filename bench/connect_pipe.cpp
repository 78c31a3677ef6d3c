// The baselines of bench/connect.sh:
//   lines  writes the input file: N lines of SIZE bytes each (newline included), distinct
//          (a line number, then letters)
//   pipe   what a FileStreamSource and a FileStreamSink do, on librdkafka alone, in one process:
//          one thread reads the file line by line and produces each line as a record's value
//          (no key), another consumes the topic in a group and appends each value and a newline
//          to the output file; done when the output holds every line (written, not fsynced)
//   chain  the cost of a chain of transforms alone, in process: the same records as a
//          FileStreamSource makes (a STRING value) through TransformationChain::apply
// pipe and chain print one JSON object on stdout; everything else goes to stderr.
// Usage: connect_pipe lines --file F --lines N [--size S]
//        connect_pipe pipe --bootstrap-server B --topic T --group G --file IN --output OUT
//                          [--config producer.K=V|consumer.K=V]...
//        connect_pipe chain --lines N [--size S] [--config transforms...=V]...
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "oxbow/connect/schema.h"
#include "oxbow/connect/transformation.h"
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

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "connect_pipe: %s\n", what.c_str());
  std::exit(1);
}

struct Options {
  std::string mode, bootstrap = "localhost:9092", topic, group, file, output;
  long long lines = 0, size = 100;
  Config producer, consumer, other;
};

Options parse(int argc, char** argv) {
  if (argc < 2) fail("usage: connect_pipe lines|pipe|chain [--flag value]...");
  Options o;
  o.mode = argv[1];
  for (int i = 2; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 >= argc) fail(flag + " needs a value");
    std::string value = argv[i + 1];
    if (flag == "--bootstrap-server") {
      o.bootstrap = value;
    } else if (flag == "--topic") {
      o.topic = value;
    } else if (flag == "--group") {
      o.group = value;
    } else if (flag == "--file") {
      o.file = value;
    } else if (flag == "--output") {
      o.output = value;
    } else if (flag == "--lines") {
      o.lines = std::atoll(value.c_str());
    } else if (flag == "--size") {
      o.size = std::atoll(value.c_str());
    } else if (flag == "--config") {
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0) fail("--config needs KEY=VALUE");
      std::string key = value.substr(0, eq), v = value.substr(eq + 1);
      // As a Connect worker takes them: producer.* and consumer.* go to those clients.
      if (key.rfind("producer.", 0) == 0) {
        o.producer[key.substr(9)] = v;
      } else if (key.rfind("consumer.", 0) == 0) {
        o.consumer[key.substr(9)] = v;
      } else {
        o.other[key] = v;
      }
    } else {
      fail("unknown flag " + flag);
    }
  }
  return o;
}

// Buffered appends to a file descriptor, as FileStreamSink's put() buffers before write().
class Writer {
 public:
  explicit Writer(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {
    if (fd_ < 0) fail("cannot open " + path + ": " + std::strerror(errno));
  }
  ~Writer() {
    flush();
    ::close(fd_);
  }
  void append(const void* data, size_t size) {
    buffer_.append(static_cast<const char*>(data), size);
    if (buffer_.size() >= (1u << 20)) flush();
  }
  void flush() {
    for (size_t done = 0; done < buffer_.size();) {
      ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(std::string("write: ") + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    buffer_.clear();
  }

 private:
  int fd_;
  std::string buffer_;
};

int lines(const Options& o) {
  if (o.file.empty() || o.lines <= 0 || o.size < 12)
    fail("lines needs --file, --lines, --size>=12");
  Writer out(o.file);
  std::string line(static_cast<size_t>(o.size), 'x');
  uint64_t state = 88172645463325252ULL;
  for (long long i = 0; i < o.lines; ++i) {
    int n = std::snprintf(line.data(), line.size(), "%010lld ", i);
    for (size_t j = static_cast<size_t>(n); j + 1 < line.size(); ++j) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
      line[j] = static_cast<char>('a' + state % 26);
    }
    line.back() = '\n';
    out.append(line.data(), line.size());
  }
  return 0;
}

rd_kafka_t* client(rd_kafka_type_t type, const Options& o, const Config& fixed, const Config& user,
                   rd_kafka_conf_t* conf = nullptr) {
  if (!conf) conf = rd_kafka_conf_new();
  char error[512];
  auto set = [&](const std::string& k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK)
      fail(k + ": " + error);
  };
  set("bootstrap.servers", o.bootstrap);
  for (const auto& [k, v] : fixed) set(k, v);
  for (const auto& [k, v] : user) set(k, v);
  rd_kafka_t* rk = rd_kafka_new(type, conf, error, sizeof error);
  if (!rk) fail(std::string("cannot create a client: ") + error);
  return rk;
}

std::atomic<long long> delivery_errors{0};
void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  if (m->err && delivery_errors++ == 0)
    std::fprintf(stderr, "connect_pipe: delivery failed: %s\n", rd_kafka_err2str(m->err));
}

// Every line of the file as a record's value, through a topic handle; the file is read in 64 KiB
// chunks, as FileStreamSource reads it. Returns the lines produced, once all are acknowledged.
long long produce_file(const Options& o) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t* rk = client(RD_KAFKA_PRODUCER, o, {}, o.producer, conf);
  rd_kafka_topic_t* topic = rd_kafka_topic_new(rk, o.topic.c_str(), nullptr);
  int fd = ::open(o.file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open " + o.file + ": " + std::strerror(errno));
  std::string pending;
  char chunk[64 * 1024];
  long long produced = 0;
  auto send = [&](const char* data, size_t size) {
    while (auto err = rd_kafka_producev(rk, RD_KAFKA_V_RKT(topic),
                                        RD_KAFKA_V_VALUE(const_cast<char*>(data), size),
                                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END)) {
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        fail(std::string("produce: ") + rd_kafka_err2str(err));
      rd_kafka_poll(rk, 10);
    }
    if (++produced % 1000 == 0) rd_kafka_poll(rk, 0);
  };
  for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("read: ") + std::strerror(errno));
    pending.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      send(pending.data() + start, end - start);
    pending.erase(0, start);
  }
  ::close(fd);
  while (rd_kafka_outq_len(rk) > 0) rd_kafka_flush(rk, 1000);
  if (delivery_errors > 0) fail(std::to_string(delivery_errors.load()) + " deliveries failed");
  rd_kafka_topic_destroy(topic);
  rd_kafka_destroy(rk);
  return produced;
}

// Appends each value and a newline to the output until it holds `records` lines.
void consume_to_file(const Options& o, const std::atomic<long long>& expected) {
  Config fixed{
      {"group.id", o.group}, {"auto.offset.reset", "earliest"}, {"enable.auto.commit", "true"}};
  rd_kafka_t* rk = client(RD_KAFKA_CONSUMER, o, fixed, o.consumer);
  rd_kafka_poll_set_consumer(rk);
  auto* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, o.topic.c_str(), RD_KAFKA_PARTITION_UA);
  if (auto err = rd_kafka_subscribe(rk, topics)) fail(rd_kafka_err2str(err));
  rd_kafka_topic_partition_list_destroy(topics);
  Writer out(o.output);
  long long consumed = 0;
  // Streams' remedy for librdkafka 2.0.2's fetch stall, so that the baseline is the client's
  // ceiling rather than that stall's (Connect's sink task has no such remedy yet).
  oxbow::streams::detail::FetchRestarter restarter(rk);
  while (expected < 0 || consumed < expected) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, restarter.watching() ? 1 : 100);
    if (!m) {
      restarter.idle([](const char*, int32_t) { return false; });
      out.flush();  // as a sink flushes what it holds when nothing comes
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      restarter.got_record(m->len);
      out.append(m->payload, m->len);
      out.append("\n", 1);
      ++consumed;
    } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      std::fprintf(stderr, "connect_pipe: consumer: %s\n", rd_kafka_message_errstr(m));
    }
    rd_kafka_message_destroy(m);
  }
  out.flush();
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

int pipe(const Options& o) {
  if (o.topic.empty() || o.group.empty() || o.file.empty() || o.output.empty())
    fail("pipe needs --topic, --group, --file and --output");
  double t0 = now_s();
  std::atomic<long long> expected{-1};
  double produced_at = 0;
  std::thread producer([&] {
    expected = produce_file(o);
    produced_at = now_s();
  });
  consume_to_file(o, expected);
  double done = now_s();
  producer.join();
  double seconds = done - t0, cpu = cpu_seconds();
  long long records = expected;
  std::printf(
      "{\"records\": %lld, \"seconds\": %.3f, \"records_per_sec\": %.0f, \"produce_seconds\": "
      "%.3f, \"cpu_seconds\": %.3f}\n",
      records, seconds, static_cast<double>(records) / seconds, produced_at - t0, cpu);
  return 0;
}

int chain(const Options& o) {
  using namespace oxbow::connect;
  if (o.lines <= 0) fail("chain needs --lines");
  TransformationChain transforms = TransformationChain::fromConnectorConfig(o.other);
  std::string line(static_cast<size_t>(o.size - 1), 'x');
  long long kept = 0;
  double t0 = now_s();
  for (long long i = 0; i < o.lines; ++i) {
    // Made per record, as the source task makes each; its cost is measured alone with no
    // transforms configured.
    ConnectRecord record("bench", std::nullopt, nullptr, Value(), Schema::STRING_SCHEMA,
                         Value(line), 0);
    if (transforms.apply(std::move(record))) ++kept;
  }
  double seconds = now_s() - t0;
  std::printf("{\"records\": %lld, \"stages\": %zu, \"seconds\": %.3f, \"ns_per_record\": %.1f}\n",
              kept, transforms.size(), seconds, seconds * 1e9 / static_cast<double>(o.lines));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (o.mode == "lines") return lines(o);
  if (o.mode == "pipe") return pipe(o);
  if (o.mode == "chain") return chain(o);
  fail("unknown mode " + o.mode + " (lines, pipe or chain)");
}
