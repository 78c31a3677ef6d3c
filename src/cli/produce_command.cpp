#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "oxbow/registry/serdes.h"

namespace oxbow::cli {
namespace {

// Without a bound librdkafka retries an undeliverable record for 5 minutes.
constexpr const char* kDefaultMessageTimeoutMs = "30000";
constexpr int kMaxReportedFailures = 20;

struct ProduceOptions {
  ClientOptions client;
  std::string topic;
  int partition = RD_KAFKA_PARTITION_UA;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::optional<std::string> key_separator;
  std::vector<std::string> headers;
  std::optional<std::string> acks;
  std::optional<std::string> compression;
  // "string": the line's bytes as they are; "avro", "json", "protobuf": the line is a JSON value,
  // written in Confluent's wire format with --key-schema/--value-schema (Avro, JSON Schema or
  // .proto text), registered in the schema registry.
  std::string key_format = "string", value_format = "string";
  std::string key_schema, value_schema;
  std::string key_message, value_message;  // protobuf: the message written (default: the first)
  std::string registry_url = "http://localhost:8081";
  std::vector<std::string> registry_properties;  // Confluent's serde settings, key=value
};

struct Header {
  std::string name;
  std::string value;
};

struct DeliveryStats {
  long long delivered = 0;
  long long failed = 0;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto& stats = *static_cast<DeliveryStats*>(opaque);
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++stats.delivered;
    return;
  }
  if (++stats.failed <= kMaxReportedFailures) {
    print_error(fmt::format("{} [{}]", rd_kafka_topic_name(message->rkt), message->partition),
                message->err, rd_kafka_message_errstr(message));
  }
}

std::vector<Header> parse_headers(const std::vector<std::string>& texts) {
  std::vector<Header> headers;
  for (const auto& text : texts) {
    Header header;
    if (!split_key_value(text, header.name, header.value))
      fail(fmt::format("invalid header '{}': expected key=value", text));
    headers.push_back(std::move(header));
  }
  return headers;
}

ConfigEntries producer_overrides(const ProduceOptions& options) {
  ConfigEntries overrides;
  if (options.acks) overrides.emplace_back("acks", *options.acks);
  if (options.compression) overrides.emplace_back("compression.codec", *options.compression);
  return overrides;
}

class RecordProducer {
 public:
  explicit RecordProducer(const ProduceOptions& options)
      : options_{options}, headers_{parse_headers(options.headers)} {
    rd_kafka_conf_t* conf =
        make_kafka_conf(options.client, {{"message.timeout.ms", kDefaultMessageTimeoutMs}},
                        producer_overrides(options));
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, &stats_);
    rk_ = make_kafka_handle(RD_KAFKA_PRODUCER, conf);
    // Fail fast (bounded) when the cluster is unreachable, rather than
    // queueing every record until its message timeout.
    fetch_metadata(rk_.get());
  }

  void produce(std::string_view key, bool has_key, std::string_view value) {
    for (;;) {
      const auto err = try_produce(key, has_key, value);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) fail(options_.topic, err);
      rd_kafka_poll(rk_.get(), 100);  // let deliveries drain the queue
    }
  }

  // Waits for every outstanding delivery report.
  void flush() {
    while (rd_kafka_outq_len(rk_.get()) > 0) rd_kafka_flush(rk_.get(), 1000);
    rd_kafka_poll(rk_.get(), 0);
  }

  const DeliveryStats& stats() const { return stats_; }

 private:
  rd_kafka_resp_err_t try_produce(std::string_view key, bool has_key, std::string_view value) {
    rd_kafka_headers_t* headers = make_headers();
    const auto err = rd_kafka_producev(
        rk_.get(), RD_KAFKA_V_TOPIC(options_.topic.c_str()),
        RD_KAFKA_V_PARTITION(options_.partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(has_key ? const_cast<char*>(key.data()) : nullptr, has_key ? key.size() : 0),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
    // The headers are only taken over by a successful producev.
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && headers != nullptr) rd_kafka_headers_destroy(headers);
    rd_kafka_poll(rk_.get(), 0);
    return err;
  }

  rd_kafka_headers_t* make_headers() const {
    if (headers_.empty()) return nullptr;
    rd_kafka_headers_t* headers = rd_kafka_headers_new(headers_.size());
    for (const auto& h : headers_)
      rd_kafka_header_add(headers, h.name.data(), static_cast<ssize_t>(h.name.size()),
                          h.value.data(), static_cast<ssize_t>(h.value.size()));
    return headers;
  }

  const ProduceOptions& options_;
  std::vector<Header> headers_;
  DeliveryStats stats_;
  KafkaHandle rk_;
};

// "@path": the file's text; anything else as it is.
std::string schema_text(const std::string& option, const char* name) {
  if (option.empty() || option[0] != '@') return option;
  std::ifstream in(option.substr(1));
  if (!in) fail(fmt::format("{}: cannot read {}", name, option.substr(1)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<registry::Format> registry_format(const std::string& name) {
  if (name == "avro") return registry::Format::kAvro;
  if (name == "json") return registry::Format::kJson;
  if (name == "protobuf") return registry::Format::kProtobuf;
  return std::nullopt;
}

// Turns a key or value as typed into the bytes produced: as it is, or (--*-format avro, json or
// protobuf) a JSON value encoded in Confluent's wire format.
class FieldEncoder {
 public:
  FieldEncoder(const ProduceOptions& options, bool is_key,
               std::shared_ptr<registry::SchemaRegistryClient>& client) {
    const std::string& format_name = is_key ? options.key_format : options.value_format;
    const auto format = registry_format(format_name);
    if (!format) return;
    const std::string& message = is_key ? options.key_message : options.value_message;
    if (!message.empty() && *format != registry::Format::kProtobuf)
      fail(fmt::format("{} is only for protobuf", is_key ? "--key-message" : "--value-message"));
    const char* option = is_key ? "--key-schema" : "--value-schema";
    const std::string schema =
        schema_text(is_key ? options.key_schema : options.value_schema, option);
    const auto properties = registry_properties(options.registry_url, options.registry_properties);
    try {
      const auto config = registry::SerdeConfig::from_properties(properties);
      if (schema.empty() && !config.use_latest_version)
        fail(fmt::format("{} is required with {} (or set use.latest.version=true)", option,
                         format_name));
      if (!client) client = std::make_shared<registry::SchemaRegistryClient>(config.client);
      serializer_.emplace(client, config, *format, schema, is_key,
                          std::vector<registry::SchemaReference>{}, message);
      // Registers (or looks up) the schema now, so that a refused schema stops the command
      // before any line is read.
      (void)serializer_->schema_id(options.topic);
    } catch (const std::exception& e) {
      fail(fmt::format("{}: {}", is_key ? "key" : "value", e.what()));
    }
  }

  // The bytes, or nullopt after reporting why there are none.
  std::optional<std::string> encode(std::string_view text, const std::string& topic,
                                    const std::string& where) {
    if (!serializer_) return std::string(text);
    const auto value = nlohmann::json::parse(text, nullptr, false);
    if (value.is_discarded()) {
      fmt::print(stderr, "oxbow: error: {}: not a JSON value; skipped\n", where);
      return std::nullopt;
    }
    try {
      return serializer_->serialize(topic, value);
    } catch (const std::exception& e) {
      fmt::print(stderr, "oxbow: error: {}: {}; skipped\n", where, e.what());
      return std::nullopt;
    }
  }

 private:
  std::optional<registry::Serializer> serializer_;
};

struct Encoders {
  FieldEncoder key, value;
};

// Encodes and produces one record; false (reported) when it cannot be encoded.
bool produce_one(RecordProducer& producer, Encoders& encoders, const ProduceOptions& options,
                 std::string_view key, bool has_key, std::string_view value,
                 const std::string& where) {
  std::optional<std::string> key_bytes;
  if (has_key) {
    key_bytes = encoders.key.encode(key, options.topic, where + " key");
    if (!key_bytes) return false;
  }
  const auto value_bytes = encoders.value.encode(value, options.topic, where + " value");
  if (!value_bytes) return false;
  producer.produce(key_bytes.value_or(""), has_key, *value_bytes);
  return true;
}

// Returns the number of lines that could not be turned into a record.
long long produce_stdin_lines(RecordProducer& producer, Encoders& encoders,
                              const ProduceOptions& options) {
  const std::string fixed_key = options.key.value_or("");
  long long rejected = 0;
  long long line_number = 0;
  std::string line;
  while (!stop_requested() && std::getline(std::cin, line)) {
    ++line_number;
    const std::string where = fmt::format("stdin line {}", line_number);
    if (!options.key_separator) {
      if (!produce_one(producer, encoders, options, fixed_key, options.key.has_value(), line,
                       where))
        ++rejected;
      continue;
    }
    const auto split_at = line.find(*options.key_separator);
    if (split_at == std::string::npos) {
      fmt::print(stderr, "oxbow: error: stdin line {}: no key separator '{}'; skipped\n",
                 line_number, *options.key_separator);
      ++rejected;
      continue;
    }
    const std::string_view text{line};
    if (!produce_one(producer, encoders, options, text.substr(0, split_at), true,
                     text.substr(split_at + options.key_separator->size()), where))
      ++rejected;
  }
  return rejected;
}

void run_produce(const ProduceOptions& options) {
  if (options.key_separator && options.key_separator->empty())
    fail("--key-separator must not be empty");
  install_stop_signal_handlers();
  std::shared_ptr<registry::SchemaRegistryClient> client;
  Encoders encoders{FieldEncoder(options, true, client), FieldEncoder(options, false, client)};
  RecordProducer producer{options};
  long long rejected = 0;
  if (options.value)
    rejected = produce_one(producer, encoders, options, options.key.value_or(""),
                           options.key.has_value(), *options.value, "--value")
                   ? 0
                   : 1;
  else
    rejected = produce_stdin_lines(producer, encoders, options);
  producer.flush();

  const auto& stats = producer.stats();
  if (stats.failed > kMaxReportedFailures)
    fmt::print(stderr, "oxbow: error: {} more failed deliveries not shown\n",
               stats.failed - kMaxReportedFailures);
  fmt::print(stderr, "produced {} records\n", stats.delivered);
  if (stats.failed > 0) {
    fmt::print(stderr, "oxbow: error: {} records failed\n", stats.failed);
    throw CLI::RuntimeError(1);
  }
  if (rejected > 0) {
    fmt::print(stderr, "oxbow: error: {} records skipped\n", rejected);
    throw CLI::RuntimeError(1);
  }
}

}  // namespace

void add_produce_command(CLI::App& app) {
  auto options = std::make_shared<ProduceOptions>();
  CLI::App* cmd = app.add_subcommand("produce", "Produce records from stdin, one per line");
  add_client_options(*cmd, options->client);
  cmd->add_option("topic", options->topic, "Topic name")->required();
  cmd->add_option("-p,--partition", options->partition,
                  "Partition (default: chosen by the partitioner)");
  cmd->add_option("-k,--key", options->key, "Key for every record");
  cmd->add_option("--value", options->value, "Produce this single record instead of reading stdin");
  cmd->add_option("-H,--header", options->headers, "Header key=value on every record (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--key-separator", options->key_separator,
                  "Split each stdin line into key SEP value");
  cmd->add_option("--acks", options->acks, "Required acknowledgements")
      ->check(CLI::IsMember({"all", "-1", "0", "1"}));
  cmd->add_option("--compression", options->compression, "Compression codec")
      ->check(CLI::IsMember({"none", "gzip", "snappy", "lz4", "zstd"}));
  for (const bool key : {true, false}) {
    const char* what = key ? "key" : "value";
    cmd->add_option(
           key ? "--key-format" : "--value-format",
           key ? options->key_format : options->value_format,
           fmt::format("string: the {0} as typed; avro, json, protobuf: a JSON {0} (in Avro's "
                       "JSON encoding; the document; Protobuf's JSON mapping) written in "
                       "Confluent's wire format",
                       what))
        ->check(CLI::IsMember({"string", "avro", "json", "protobuf"}))
        ->capture_default_str();
    cmd->add_option(key ? "--key-schema" : "--value-schema",
                    key ? options->key_schema : options->value_schema,
                    fmt::format("The {}'s schema (Avro or JSON Schema JSON, or .proto text; or "
                                "@file), registered under the subject name strategy's subject; a "
                                ".proto's imports are looked up as subjects named by their path",
                                what));
    cmd->add_option(key ? "--key-message" : "--value-message",
                    key ? options->key_message : options->value_message,
                    fmt::format("protobuf: the message the {} is written as (full name, or without "
                                "the package; default: the schema's first message)",
                                what));
  }
  cmd->add_option("--schema-registry-url", options->registry_url,
                  "Schema registry URL(s), comma-separated")
      ->capture_default_str();
  cmd->add_option("--registry-property", options->registry_properties,
                  "Confluent serializer setting key=value (auto.register.schemas, "
                  "use.latest.version, value.subject.name.strategy, basic.auth.user.info, "
                  "json.fail.invalid.schema, ...)")
      ->allow_extra_args(false);
  cmd->callback([options] { run_produce(*options); });
}

}  // namespace oxbow::cli
