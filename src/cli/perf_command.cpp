#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"

namespace oxbow::cli {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr double kNsPerMs = 1e6;
constexpr double kBytesPerMb = 1024.0 * 1024.0;
constexpr size_t kMaxLatencySamples = 500'000;
constexpr int kMaxReportedFailures = 10;
constexpr int kConsumeBatchSize = 10'000;

struct PerfProduceOptions {
  ClientOptions client;
  std::string topic;
  long long num_records = 0;
  int record_size = 0;
  std::optional<std::string> acks;
  long long throughput = -1;
  std::optional<std::string> compression;
  std::optional<std::string> transactional_id;
  long long transaction_size = 1000;
  bool json = false;
};

struct PerfConsumeOptions {
  ClientOptions client;
  std::string topic;
  long long num_records = 0;
  int timeout_ms = 10'000;
  bool json = false;
};

double seconds_between(int64_t from_ns, int64_t to_ns) {
  return static_cast<double>(std::max<int64_t>(to_ns - from_ns, 1)) / kNsPerSecond;
}

// Delivery statistics for the whole run and for the current progress window.
// Percentiles come from every k-th latency, keeping memory bounded whatever
// the record count.
class LatencyRecorder {
 public:
  explicit LatencyRecorder(long long expected_records)
      : sampling_interval_{
            std::max<long long>(1, expected_records / static_cast<long long>(kMaxLatencySamples))} {
    samples_.reserve(static_cast<size_t>(expected_records / sampling_interval_) + 1);
  }

  void record(int64_t latency_ns) {
    if (total_.count % sampling_interval_ == 0)
      samples_.push_back(static_cast<float>(latency_ns / kNsPerMs));
    total_.add(latency_ns);
    window_.add(latency_ns);
  }

  void record_failure(const rd_kafka_message_t& message) {
    if (++failures_ <= kMaxReportedFailures)
      print_error(fmt::format("{} [{}]", rd_kafka_topic_name(message.rkt), message.partition),
                  message.err, rd_kafka_message_errstr(&message));
  }

  struct Totals {
    long long count = 0;
    int64_t sum_ns = 0;
    int64_t max_ns = 0;
    void add(int64_t latency_ns) {
      ++count;
      sum_ns += latency_ns;
      max_ns = std::max(max_ns, latency_ns);
    }
    double avg_ms() const {
      return count == 0 ? 0.0 : static_cast<double>(sum_ns) / count / kNsPerMs;
    }
    double max_ms() const { return static_cast<double>(max_ns) / kNsPerMs; }
  };

  const Totals& total() const { return total_; }
  long long failures() const { return failures_; }
  Totals take_window() { return std::exchange(window_, Totals{}); }

  // Sorts the samples; call once at the end.
  double percentile_ms(double fraction) {
    if (samples_.empty()) return 0.0;
    if (!sorted_) std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
    const auto index = static_cast<size_t>(fraction * static_cast<double>(samples_.size()));
    return samples_[std::min(index, samples_.size() - 1)];
  }

 private:
  long long sampling_interval_;
  std::vector<float> samples_;
  bool sorted_ = false;
  Totals total_;
  Totals window_;
  long long failures_ = 0;
};

void on_perf_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto& recorder = *static_cast<LatencyRecorder*>(opaque);
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    recorder.record_failure(*message);
    return;
  }
  // The message opaque carries the send time itself: no per-record bookkeeping.
  const auto sent_ns = static_cast<int64_t>(reinterpret_cast<uintptr_t>(message->_private));
  recorder.record(now_ns() - sent_ns);
}

std::string make_payload(int size) {
  std::mt19937 rng{42};
  std::uniform_int_distribution<int> letter{'A', 'Z'};
  std::string payload(static_cast<size_t>(size), ' ');
  for (auto& c : payload) c = static_cast<char>(letter(rng));
  return payload;
}

class ProgressReporter {
 public:
  ProgressReporter(LatencyRecorder& recorder, int record_size)
      : recorder_{recorder}, record_size_{record_size}, window_start_ns_{now_ns()} {}

  void maybe_report() {
    const int64_t now = now_ns();
    if (now - window_start_ns_ < kNsPerSecond) return;
    const auto window = recorder_.take_window();
    const double seconds = seconds_between(window_start_ns_, now);
    const double records_per_sec = static_cast<double>(window.count) / seconds;
    fmt::print(stderr,
               "{} records sent, {:.1f} records/sec ({:.2f} MB/sec), {:.1f} ms avg latency, {:.1f} "
               "ms max latency.\n",
               window.count, records_per_sec, records_per_sec * record_size_ / kBytesPerMb,
               window.avg_ms(), window.max_ms());
    window_start_ns_ = now;
  }

 private:
  LatencyRecorder& recorder_;
  int record_size_;
  int64_t window_start_ns_;
};

// Paces sends to --throughput records per second.
class Throttle {
 public:
  Throttle(long long records_per_sec, int64_t start_ns)
      : records_per_sec_{records_per_sec}, start_ns_{start_ns} {}

  // Milliseconds to wait before sending record number `sent`.
  int wait_ms(long long sent) const {
    if (records_per_sec_ <= 0) return 0;
    const int64_t due_ns = start_ns_ + static_cast<int64_t>(static_cast<double>(sent) *
                                                            kNsPerSecond / records_per_sec_);
    const int64_t ahead_ns = due_ns - now_ns();
    return ahead_ns > 1'000'000 ? static_cast<int>(ahead_ns / 1'000'000) : 0;
  }

 private:
  long long records_per_sec_;
  int64_t start_ns_;
};

ConfigEntries perf_producer_overrides(const PerfProduceOptions& options) {
  ConfigEntries overrides;
  if (options.acks) overrides.emplace_back("acks", *options.acks);
  if (options.compression) overrides.emplace_back("compression.codec", *options.compression);
  if (options.transactional_id)
    overrides.emplace_back("transactional.id", *options.transactional_id);
  return overrides;
}

KafkaHandle make_perf_producer(const PerfProduceOptions& options, LatencyRecorder& recorder) {
  const ConfigEntries throughput_defaults{{"linger.ms", "5"},
                                          {"batch.size", "1000000"},
                                          {"queue.buffering.max.messages", "1000000"},
                                          {"message.timeout.ms", "30000"}};
  rd_kafka_conf_t* conf =
      make_kafka_conf(options.client, throughput_defaults, perf_producer_overrides(options));
  rd_kafka_conf_set_dr_msg_cb(conf, on_perf_delivery);
  rd_kafka_conf_set_opaque(conf, &recorder);
  return make_kafka_handle(RD_KAFKA_PRODUCER, conf);
}

void send_one(rd_kafka_t* rk, rd_kafka_topic_t* topic, std::string& payload,
              ProgressReporter& progress) {
  for (;;) {
    void* send_time = reinterpret_cast<void*>(static_cast<uintptr_t>(now_ns()));
    // No copy flag: every record points at the same payload buffer,
    // which outlives the producer.
    if (rd_kafka_produce(topic, RD_KAFKA_PARTITION_UA, 0, payload.data(), payload.size(), nullptr,
                         0, send_time) == 0)
      return;
    const auto err = rd_kafka_last_error();
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) fail(rd_kafka_topic_name(topic), err);
    rd_kafka_poll(rk, 10);
    progress.maybe_report();
  }
}

void print_produce_summary(LatencyRecorder& recorder, double seconds, int record_size, bool json) {
  const auto& total = recorder.total();
  const double records_per_sec = static_cast<double>(total.count) / seconds;
  const double mb_per_sec = records_per_sec * record_size / kBytesPerMb;
  const double p50 = recorder.percentile_ms(0.5), p95 = recorder.percentile_ms(0.95),
               p99 = recorder.percentile_ms(0.99), p999 = recorder.percentile_ms(0.999);
  if (json) {
    fmt::print(
        "{{\"records\": {}, \"records_per_sec\": {:.2f}, \"mb_per_sec\": {:.4f}, \"avg_ms\": "
        "{:.3f}, "
        "\"max_ms\": {:.3f}, \"p50_ms\": {:.3f}, \"p95_ms\": {:.3f}, \"p99_ms\": {:.3f}, "
        "\"p999_ms\": {:.3f}}}\n",
        total.count, records_per_sec, mb_per_sec, total.avg_ms(), total.max_ms(), p50, p95, p99,
        p999);
  } else {
    fmt::print(
        "{} records sent, {:.1f} records/sec ({:.2f} MB/sec), {:.2f} ms avg latency, {:.2f} ms max "
        "latency, {:.0f} ms 50th, {:.0f} ms 95th, {:.0f} ms 99th, {:.0f} ms 99.9th.\n",
        total.count, records_per_sec, mb_per_sec, total.avg_ms(), total.max_ms(), p50, p95, p99,
        p999);
  }
  std::fflush(stdout);
}

void check_txn(rd_kafka_error_t* error, std::string_view what) {
  if (error == nullptr) return;
  std::string message = rd_kafka_error_string(error);
  auto code = rd_kafka_error_code(error);
  rd_kafka_error_destroy(error);
  fail(what, code, message);
}

// With --transactional-id: records go out in transactions of --transaction-size records.
class TransactionPacer {
 public:
  TransactionPacer(rd_kafka_t* rk, const PerfProduceOptions& options)
      : rk_(rk), size_(options.transactional_id ? options.transaction_size : 0) {
    if (size_ == 0) return;
    check_txn(rd_kafka_init_transactions(rk_, kRequestTimeoutMs), "init transactions");
    check_txn(rd_kafka_begin_transaction(rk_), "begin transaction");
  }
  // Called after each record is handed to the producer.
  void after_send(long long sent) {
    if (size_ == 0 || sent % size_ != 0) return;
    check_txn(rd_kafka_commit_transaction(rk_, -1), "commit transaction");
    check_txn(rd_kafka_begin_transaction(rk_), "begin transaction");
  }
  void finish() {
    if (size_ > 0) check_txn(rd_kafka_commit_transaction(rk_, -1), "commit transaction");
  }

 private:
  rd_kafka_t* rk_;
  long long size_;
};

void run_perf_produce(const PerfProduceOptions& options) {
  install_stop_signal_handlers();
  LatencyRecorder recorder{options.num_records};
  const KafkaHandle rk = make_perf_producer(options, recorder);
  fetch_metadata(rk.get());  // fail fast when the cluster is unreachable
  const TopicHandle topic{rd_kafka_topic_new(rk.get(), options.topic.c_str(), nullptr)};
  if (!topic) fail(options.topic, rd_kafka_last_error());
  std::string payload = make_payload(options.record_size);

  ProgressReporter progress{recorder, options.record_size};
  TransactionPacer transactions{rk.get(), options};
  const int64_t start_ns = now_ns();
  const Throttle throttle{options.throughput, start_ns};
  for (long long sent = 0; sent < options.num_records && !stop_requested(); ++sent) {
    if (const int wait = throttle.wait_ms(sent); wait > 0) rd_kafka_poll(rk.get(), wait);
    send_one(rk.get(), topic.get(), payload, progress);
    if ((sent & 0x3ff) == 0) {
      rd_kafka_poll(rk.get(), 0);
      progress.maybe_report();
    }
    transactions.after_send(sent + 1);
  }
  transactions.finish();
  while (rd_kafka_outq_len(rk.get()) > 0) {
    rd_kafka_poll(rk.get(), 100);
    progress.maybe_report();
  }
  const double seconds = seconds_between(start_ns, now_ns());

  print_produce_summary(recorder, seconds, options.record_size, options.json);
  if (recorder.failures() > 0) {
    fmt::print(stderr, "oxbow: error: {} records failed\n", recorder.failures());
    throw CLI::RuntimeError(1);
  }
}

struct ConsumeTally {
  long long records = 0;
  long long bytes = 0;
  int64_t last_record_ns = 0;
};

// Reads every partition from the start, without a consumer group.
ConsumeTally consume_from_beginning(rd_kafka_t* rk, const PerfConsumeOptions& options,
                                    int64_t start_ns) {
  const int partitions = topic_partition_count(rk, options.topic);
  const TopicHandle topic{rd_kafka_topic_new(rk, options.topic.c_str(), nullptr)};
  const QueueHandle queue{rd_kafka_queue_new(rk)};
  for (int p = 0; p < partitions; ++p)
    if (rd_kafka_consume_start_queue(topic.get(), p, RD_KAFKA_OFFSET_BEGINNING, queue.get()) == -1)
      fail(fmt::format("{} [{}]", options.topic, p), rd_kafka_last_error());

  ConsumeTally tally{.last_record_ns = start_ns};
  std::vector<rd_kafka_message_t*> batch(kConsumeBatchSize);
  while (tally.records < options.num_records && !stop_requested()) {
    rd_kafka_poll(rk, 0);  // serves the error callback
    const ssize_t n = rd_kafka_consume_batch_queue(queue.get(), 100, batch.data(), batch.size());
    if (n < 0) fail(options.topic, rd_kafka_last_error());
    for (ssize_t i = 0; i < n; ++i) {
      const rd_kafka_message_t& message = *batch[static_cast<size_t>(i)];
      if (message.err == RD_KAFKA_RESP_ERR_NO_ERROR && tally.records < options.num_records) {
        ++tally.records;
        tally.bytes += static_cast<long long>(message.len + message.key_len);
      }
      rd_kafka_message_destroy(batch[static_cast<size_t>(i)]);
    }
    const int64_t now = now_ns();
    if (n > 0) tally.last_record_ns = now;
    if (now - tally.last_record_ns > options.timeout_ms * 1'000'000LL) break;
  }
  for (int p = 0; p < partitions; ++p) rd_kafka_consume_stop(topic.get(), p);
  return tally;
}

void run_perf_consume(const PerfConsumeOptions& options) {
  install_stop_signal_handlers();
  const KafkaHandle rk = make_kafka_handle(
      RD_KAFKA_CONSUMER,
      make_kafka_conf(options.client,
                      {{"enable.auto.commit", "false"},
                       {"enable.auto.offset.store", "false"},
                       // Throughput defaults, as perf produce has its own; -X overrides.
                       {"max.partition.fetch.bytes", "8388608"},
                       {"queued.max.messages.kbytes", "262144"},
                       // librdkafka 2.0 stops fetching once its queue holds this many
                       // records and looks again only up to a second later: at the
                       // default of 100,000 (one 8 MB fetch of small records) a
                       // consumer stalls for a third of its run.
                       {"queued.min.messages", "1000000"}}));
  const int64_t start_ns = now_ns();
  const ConsumeTally tally = consume_from_beginning(rk.get(), options, start_ns);

  const double seconds = seconds_between(start_ns, tally.last_record_ns);
  const double records_per_sec = static_cast<double>(tally.records) / seconds;
  const double mb_per_sec = static_cast<double>(tally.bytes) / kBytesPerMb / seconds;
  if (options.json)
    fmt::print(
        "{{\"records\": {}, \"records_per_sec\": {:.2f}, \"mb_per_sec\": {:.4f}, \"seconds\": "
        "{:.3f}}}\n",
        tally.records, records_per_sec, mb_per_sec, seconds);
  else
    fmt::print("{} records consumed, {:.1f} records/sec ({:.2f} MB/sec) in {:.2f} s\n",
               tally.records, records_per_sec, mb_per_sec, seconds);
  std::fflush(stdout);
  if (tally.records < options.num_records) {
    fmt::print(stderr, "oxbow: error: {}: only {} of {} records before the {} ms timeout\n",
               options.topic, tally.records, options.num_records, options.timeout_ms);
    throw CLI::RuntimeError(1);
  }
}

void add_perf_produce(CLI::App& perf) {
  auto options = std::make_shared<PerfProduceOptions>();
  CLI::App* cmd = perf.add_subcommand("produce", "Measure producer throughput and latency");
  add_client_options(*cmd, options->client);
  cmd->add_option("-t,--topic", options->topic, "Topic name")->required();
  cmd->add_option("--num-records", options->num_records, "Number of records to send")
      ->required()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--record-size", options->record_size, "Value size in bytes")
      ->required()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--acks", options->acks, "Required acknowledgements")
      ->check(CLI::IsMember({"all", "-1", "0", "1"}));
  cmd->add_option("--throughput", options->throughput, "Cap in records/sec (-1: unlimited)")
      ->capture_default_str();
  cmd->add_option("--compression", options->compression, "Compression codec")
      ->check(CLI::IsMember({"none", "gzip", "snappy", "lz4", "zstd"}));
  cmd->add_option("--transactional-id", options->transactional_id,
                  "Produce in transactions with this transactional.id");
  cmd->add_option("--transaction-size", options->transaction_size, "Records per transaction")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", options->json, "Print the summary as one JSON object");
  cmd->callback([options] { run_perf_produce(*options); });
}

void add_perf_consume(CLI::App& perf) {
  auto options = std::make_shared<PerfConsumeOptions>();
  CLI::App* cmd =
      perf.add_subcommand("consume", "Measure consumer throughput from the start of a topic");
  add_client_options(*cmd, options->client);
  cmd->add_option("-t,--topic", options->topic, "Topic name")->required();
  cmd->add_option("--num-records", options->num_records, "Number of records to consume")
      ->required()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--timeout-ms", options->timeout_ms,
                  "Give up when no record arrives for this long")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", options->json, "Print the summary as one JSON object");
  cmd->callback([options] { run_perf_consume(*options); });
}

}  // namespace

void add_perf_command(CLI::App& app) {
  CLI::App* perf = app.add_subcommand("perf", "Producer and consumer benchmarks");
  perf->require_subcommand(1);
  add_perf_produce(*perf);
  add_perf_consume(*perf);
}

}  // namespace oxbow::cli
