#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "oxbow/registry/serdes.h"

namespace oxbow::cli {
namespace {

constexpr int kBatchSize = 1000;
constexpr int kPollIntervalMs = 200;

struct ConsumeOptions {
  ClientOptions client;
  std::string topic;
  std::optional<int> partition;
  bool from_beginning = false;
  std::optional<int64_t> offset;
  std::optional<int64_t> from_timestamp;
  long long max_messages = 0;  // 0: no limit
  std::optional<int> timeout_ms;
  std::string format = "%s\\n";
  std::string key_deserializer = "string", value_deserializer = "string";
  // "avro", "json", "protobuf": %k / %s print the key / value decoded from Confluent's wire
  // format, as JSON.
  std::string key_format = "string", value_format = "string";
  std::string registry_url = "http://localhost:8081";
  std::vector<std::string> registry_properties;
};

// How %k and %s print a record's bytes: as they are, or as one of Kafka's fixed-width
// big-endian number serdes (the console consumer's --key-deserializer/--value-deserializer, e.g.
// the word-count demo's LongDeserializer values).
enum class Decoding { kString, kLong, kInteger, kShort, kDouble, kFloat };

struct DecodingName {
  const char* name;
  const char* kafka_class;  // Kafka's deserializer of that name, for messages
  Decoding decoding;
  size_t width;  // 0: any
};
constexpr DecodingName kDecodings[] = {{"string", "StringDeserializer", Decoding::kString, 0},
                                       {"long", "LongDeserializer", Decoding::kLong, 8},
                                       {"integer", "IntegerDeserializer", Decoding::kInteger, 4},
                                       {"short", "ShortDeserializer", Decoding::kShort, 2},
                                       {"double", "DoubleDeserializer", Decoding::kDouble, 8},
                                       {"float", "FloatDeserializer", Decoding::kFloat, 4}};

// "long", or Kafka's class name (org.apache.kafka.common.serialization.LongDeserializer).
std::optional<DecodingName> find_decoding(std::string name) {
  if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
  if (name.ends_with("Deserializer")) name.resize(name.size() - std::strlen("Deserializer"));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (name == "int") name = "integer";
  for (const auto& d : kDecodings)
    if (name == d.name) return d;
  return std::nullopt;
}

struct Decodings {
  DecodingName key = kDecodings[0], value = kDecodings[0];
  // Set for --key-format / --value-format avro, json or protobuf.
  std::shared_ptr<registry::Deserializer> key_registry, value_registry;
};

// Thrown for bytes of the wrong width for their decoding; the command stops, as Kafka's does.
struct UndecodableRecord : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown for a record that is not in the wire format or does not decode with its schema: it is
// reported, counted and skipped, and consumption goes on.
struct SkippedRecord : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void append_registry(std::string& out, const rd_kafka_message_t& message, bool key,
                     registry::Deserializer& deserializer) {
  const void* data = key ? message.key : message.payload;
  if (data == nullptr) {
    out += "null";
    return;
  }
  try {
    out += deserializer
               .deserialize_ordered(
                   rd_kafka_topic_name(message.rkt),
                   {static_cast<const char*>(data), key ? message.key_len : message.len})
               .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  } catch (const std::exception& e) {
    throw SkippedRecord(fmt::format("{}: {}", key ? "key" : "value", e.what()));
  }
}

// One piece of a --format template: a literal run of text, or one field.
struct FormatPiece {
  char field = 0;  // 0 for a literal
  std::string literal;
};

char unescape(char c) {
  switch (c) {
    case 'n':
      return '\n';
    case 't':
      return '\t';
    case 'r':
      return '\r';
    case '0':
      return '\0';
    default:
      return c;
  }
}

std::vector<FormatPiece> compile_format(std::string_view format) {
  static constexpr std::string_view kFields = "tpokKsSTh";
  std::vector<FormatPiece> pieces;
  auto append_literal = [&](char c) {
    if (pieces.empty() || pieces.back().field != 0) pieces.emplace_back();
    pieces.back().literal += c;
  };
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    const bool has_next = i + 1 < format.size();
    if (c == '\\' && has_next) {
      append_literal(unescape(format[++i]));
    } else if (c == '%' && has_next && format[i + 1] == '%') {
      append_literal(format[++i]);
    } else if (c == '%') {
      if (!has_next || kFields.find(format[i + 1]) == std::string_view::npos)
        fail(fmt::format("invalid --format token '{}' (known: %t %p %o %k %K %s %S %T %h %%)",
                         format.substr(i, 2)));
      pieces.push_back({format[++i], {}});
    } else {
      append_literal(c);
    }
  }
  return pieces;
}

void append_headers(std::string& out, const rd_kafka_message_t& message) {
  rd_kafka_headers_t* headers = nullptr;
  // rd_kafka_message_headers is declared for a non-const message but only reads it.
  if (rd_kafka_message_headers(const_cast<rd_kafka_message_t*>(&message), &headers) !=
      RD_KAFKA_RESP_ERR_NO_ERROR)
    return;
  const char* name = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  for (size_t i = 0;
       rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    if (i > 0) out += ',';
    out += name;
    out += '=';
    if (value != nullptr) out.append(static_cast<const char*>(value), size);
  }
}

void append_decoded(std::string& out, const void* data, size_t size, const DecodingName& d,
                    const char* what) {
  if (d.decoding == Decoding::kString) {
    if (data != nullptr) out.append(static_cast<const char*>(data), size);
    return;
  }
  if (data == nullptr) {
    out += "null";
    return;
  }
  if (size != d.width)
    throw UndecodableRecord(
        fmt::format("{} is {} bytes; {} reads {}", what, size, d.kafka_class, d.width));
  uint64_t bits = 0;
  for (size_t i = 0; i < size; ++i) bits = bits << 8 | static_cast<const uint8_t*>(data)[i];
  switch (d.decoding) {
    case Decoding::kLong:
      out += std::to_string(static_cast<int64_t>(bits));
      break;
    case Decoding::kInteger:
      out += std::to_string(static_cast<int32_t>(static_cast<uint32_t>(bits)));
      break;
    case Decoding::kShort:
      out += std::to_string(static_cast<int16_t>(static_cast<uint16_t>(bits)));
      break;
    case Decoding::kDouble:
      out += fmt::format("{}", std::bit_cast<double>(bits));
      break;
    case Decoding::kFloat:
      out += fmt::format("{}", std::bit_cast<float>(static_cast<uint32_t>(bits)));
      break;
    case Decoding::kString:
      break;
  }
}

void append_field(std::string& out, char field, const rd_kafka_message_t& message,
                  const Decodings& decodings) {
  switch (field) {
    case 't':
      out += rd_kafka_topic_name(message.rkt);
      break;
    case 'p':
      out += std::to_string(message.partition);
      break;
    case 'o':
      out += std::to_string(message.offset);
      break;
    case 'k':
      if (decodings.key_registry)
        append_registry(out, message, true, *decodings.key_registry);
      else
        append_decoded(out, message.key, message.key_len, decodings.key, "key");
      break;
    case 'K':
      out += std::to_string(message.key == nullptr ? -1 : static_cast<long long>(message.key_len));
      break;
    case 's':
      if (decodings.value_registry)
        append_registry(out, message, false, *decodings.value_registry);
      else
        append_decoded(out, message.payload, message.len, decodings.value, "value");
      break;
    case 'S':
      out += std::to_string(message.payload == nullptr ? -1 : static_cast<long long>(message.len));
      break;
    case 'T':
      out += std::to_string(rd_kafka_message_timestamp(&message, nullptr));
      break;
    case 'h':
      append_headers(out, message);
      break;
  }
}

// errno of the first write to stdout that failed; 0 while it takes everything.
int stdout_error = 0;

void write_stdout(const std::string& bytes) {
  if (stdout_error == 0 && std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
    stdout_error = errno ? errno : EIO;
}

void flush_stdout() {
  if (stdout_error == 0 && std::fflush(stdout) != 0) stdout_error = errno ? errno : EIO;
}

// Its reader going away (`| head`) ends the command quietly, as the end of what was wanted; any
// other write failure is an error.
int stdout_exit_code() {
  if (stdout_error == 0 || stdout_error == EPIPE) return 0;
  fmt::print(stderr, "oxbow: error: cannot write to stdout: {}\n", std::strerror(stdout_error));
  return 1;
}

void print_message(const std::vector<FormatPiece>& format, const Decodings& decodings,
                   const rd_kafka_message_t& message, std::string& buffer) {
  buffer.clear();
  for (const auto& piece : format) {
    if (piece.field == 0)
      buffer += piece.literal;
    else
      append_field(buffer, piece.field, message, decodings);
  }
  write_stdout(buffer);
}

// Errors a consumer reports while the cluster is briefly unavailable; it
// recovers from them on its own.
bool is_transient(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
      return true;
    default:
      return false;
  }
}

std::vector<int32_t> partitions_to_consume(rd_kafka_t* rk, const ConsumeOptions& options) {
  const int count = topic_partition_count(rk, options.topic);
  if (options.partition) {
    if (*options.partition < 0 || *options.partition >= count)
      fail(fmt::format("{} [{}]", options.topic, *options.partition),
           RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, fmt::format("topic has {} partitions", count));
    return {*options.partition};
  }
  std::vector<int32_t> partitions(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) partitions[static_cast<size_t>(i)] = i;
  return partitions;
}

std::vector<int64_t> offsets_for_timestamp(rd_kafka_t* rk, const ConsumeOptions& options,
                                           const std::vector<int32_t>& partitions) {
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  for (const int32_t p : partitions)
    rd_kafka_topic_partition_list_add(list, options.topic.c_str(), p)->offset =
        *options.from_timestamp;
  const auto err = rd_kafka_offsets_for_times(rk, list, kRequestTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_topic_partition_list_destroy(list);
    fail(options.topic, err, "could not look up offsets for --from-timestamp");
  }
  std::vector<int64_t> offsets;
  for (int i = 0; i < list->cnt; ++i) {
    const auto& entry = list->elems[i];
    if (entry.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const std::string subject = fmt::format("{} [{}]", options.topic, entry.partition);
      rd_kafka_topic_partition_list_destroy(list);
      fail(subject, entry.err);
    }
    // -1 means no record at or after the timestamp, i.e. the end.
    offsets.push_back(entry.offset < 0 ? RD_KAFKA_OFFSET_END : entry.offset);
  }
  rd_kafka_topic_partition_list_destroy(list);
  return offsets;
}

std::vector<int64_t> start_offsets(rd_kafka_t* rk, const ConsumeOptions& options,
                                   const std::vector<int32_t>& partitions) {
  if (options.from_timestamp) return offsets_for_timestamp(rk, options, partitions);
  int64_t offset = RD_KAFKA_OFFSET_END;
  if (options.from_beginning) offset = RD_KAFKA_OFFSET_BEGINNING;
  if (options.offset)
    offset = *options.offset >= 0 ? *options.offset : RD_KAFKA_OFFSET_TAIL(-*options.offset);
  return std::vector<int64_t>(partitions.size(), offset);
}

class PartitionReader {
 public:
  PartitionReader(rd_kafka_t* rk, const std::string& topic)
      : rk_{rk}, queue_{rd_kafka_queue_new(rk)} {
    topic_.reset(rd_kafka_topic_new(rk, topic.c_str(), nullptr));
    if (!topic_) fail(topic, rd_kafka_last_error());
  }

  ~PartitionReader() {
    for (const int32_t p : started_) rd_kafka_consume_stop(topic_.get(), p);
  }

  void start(int32_t partition, int64_t offset) {
    if (rd_kafka_consume_start_queue(topic_.get(), partition, offset, queue_.get()) == -1)
      fail(fmt::format("{} [{}]", rd_kafka_topic_name(topic_.get()), partition),
           rd_kafka_last_error());
    started_.push_back(partition);
  }

  // Fills `batch`; returns how many messages the caller now owns.
  size_t poll(int timeout_ms, rd_kafka_message_t** batch, size_t capacity) {
    rd_kafka_poll(rk_, 0);  // serves the error callback
    const ssize_t n = rd_kafka_consume_batch_queue(queue_.get(), timeout_ms, batch, capacity);
    if (n < 0) fail(rd_kafka_topic_name(topic_.get()), rd_kafka_last_error());
    return static_cast<size_t>(n);
  }

 private:
  rd_kafka_t* rk_;
  TopicHandle topic_;
  QueueHandle queue_;
  std::vector<int32_t> started_;
};

std::optional<registry::Format> registry_format(const std::string& name) {
  if (name == "avro") return registry::Format::kAvro;
  if (name == "json") return registry::Format::kJson;
  if (name == "protobuf") return registry::Format::kProtobuf;
  return std::nullopt;
}

Decodings make_decodings(const ConsumeOptions& options) {
  Decodings decodings{*find_decoding(options.key_deserializer),
                      *find_decoding(options.value_deserializer), nullptr, nullptr};
  const auto key_format = registry_format(options.key_format);
  const auto value_format = registry_format(options.value_format);
  if (!key_format && !value_format) return decodings;
  const auto properties = registry_properties(options.registry_url, options.registry_properties);
  try {
    const auto config = registry::SerdeConfig::from_properties(properties);
    auto client = std::make_shared<registry::SchemaRegistryClient>(config.client);
    if (key_format)
      decodings.key_registry =
          std::make_shared<registry::Deserializer>(client, config, *key_format, true);
    if (value_format)
      decodings.value_registry =
          std::make_shared<registry::Deserializer>(client, config, *value_format, false);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return decodings;
}

// Returns the exit code.
int consume_loop(PartitionReader& reader, const ConsumeOptions& options) {
  const auto format = compile_format(options.format);
  const Decodings decodings = make_decodings(options);
  long long skipped = 0;
  std::string buffer;
  rd_kafka_message_t* batch[kBatchSize];
  long long consumed = 0;
  int64_t last_activity_ns = now_ns();
  int exit_code = 0;

  auto done = [&] { return options.max_messages > 0 && consumed >= options.max_messages; };
  while (!done() && !stop_requested() && exit_code == 0 && stdout_error == 0) {
    const size_t n = reader.poll(kPollIntervalMs, batch, kBatchSize);
    if (n == 0) {
      flush_stdout();
      if (options.timeout_ms && now_ns() - last_activity_ns >= *options.timeout_ms * 1'000'000LL)
        break;
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      const rd_kafka_message_t& message = *batch[i];
      if (message.err == RD_KAFKA_RESP_ERR_NO_ERROR && !done() && exit_code == 0) {
        try {
          print_message(format, decodings, message, buffer);
        } catch (const SkippedRecord& e) {
          flush_stdout();
          fmt::print(stderr, "oxbow: error: {} [{}] offset {}: {}; skipped\n",
                     rd_kafka_topic_name(message.rkt), message.partition, message.offset, e.what());
          ++skipped;
          ++consumed;
          last_activity_ns = now_ns();
          rd_kafka_message_destroy(batch[i]);
          continue;
        } catch (const UndecodableRecord& e) {
          flush_stdout();
          fmt::print(stderr, "oxbow: error: {} [{}] offset {}: {}\n",
                     rd_kafka_topic_name(message.rkt), message.partition, message.offset, e.what());
          exit_code = 1;
          rd_kafka_message_destroy(batch[i]);
          continue;
        }
        ++consumed;
        last_activity_ns = now_ns();
      } else if (message.err != RD_KAFKA_RESP_ERR_NO_ERROR && exit_code == 0) {
        const auto subject =
            fmt::format("{} [{}]", rd_kafka_topic_name(message.rkt), message.partition);
        if (!is_transient(message.err)) {
          print_error(subject, message.err, rd_kafka_message_errstr(&message));
          exit_code = 1;
        }
      }
      rd_kafka_message_destroy(batch[i]);
    }
  }
  flush_stdout();
  if (skipped > 0) {
    fmt::print(stderr, "oxbow: error: {} records could not be decoded\n", skipped);
    if (exit_code == 0) exit_code = 1;
  }
  return exit_code != 0 ? exit_code : stdout_exit_code();
}

void run_consume(const ConsumeOptions& options) {
  compile_format(options.format);  // rejects a bad template before connecting
  install_stop_signal_handlers();
  // No consumer group: partitions are read directly with the legacy
  // consumer, and offsets are never committed.
  const KafkaHandle rk = make_kafka_handle(
      RD_KAFKA_CONSUMER, make_kafka_conf(options.client, {{"enable.auto.commit", "false"},
                                                          {"enable.auto.offset.store", "false"}}));
  const auto partitions = partitions_to_consume(rk.get(), options);
  const auto offsets = start_offsets(rk.get(), options, partitions);

  int exit_code = 0;
  {
    PartitionReader reader{rk.get(), options.topic};
    for (size_t i = 0; i < partitions.size(); ++i) reader.start(partitions[i], offsets[i]);
    exit_code = consume_loop(reader, options);
  }
  if (exit_code != 0) throw CLI::RuntimeError(exit_code);
}

}  // namespace

void add_consume_command(CLI::App& app) {
  auto options = std::make_shared<ConsumeOptions>();
  CLI::App* cmd = app.add_subcommand("consume", "Print records of a topic to stdout");
  add_client_options(*cmd, options->client);
  cmd->add_option("topic", options->topic, "Topic name")->required();
  cmd->add_option("-p,--partition", options->partition, "Partition (default: all partitions)");
  auto* beginning =
      cmd->add_flag("--from-beginning", options->from_beginning, "Start at the earliest offset");
  auto* offset = cmd->add_option("-o,--offset", options->offset,
                                 "Start offset; negative: that many records before the end");
  auto* timestamp =
      cmd->add_option("--from-timestamp", options->from_timestamp,
                      "Start at the first record with a timestamp >= this (ms since epoch)");
  beginning->excludes(offset)->excludes(timestamp);
  offset->excludes(timestamp);
  cmd->add_option("-n,--max-messages", options->max_messages,
                  "Exit after this many records (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeout-ms", options->timeout_ms, "Exit when no record arrives for this long")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "-f,--format", options->format,
         "Output template: %t topic, %p partition, %o offset, %k key, %K key length, %s value, "
         "%S value length, %T timestamp (ms), %h headers, \\n \\t escapes")
      ->capture_default_str();
  auto decoding = [](const std::string& name) -> std::string {
    return find_decoding(name) ? ""
                               : "unknown deserializer '" + name +
                                     "' (string, long, integer, short, double, float, or Kafka's "
                                     "class name such as LongDeserializer)";
  };
  cmd->add_option("--key-deserializer", options->key_deserializer,
                  "How %k prints the key: string (its bytes), or a big-endian number: long, "
                  "integer, short, double, float (Kafka's class names work too)")
      ->check(decoding)
      ->capture_default_str();
  cmd->add_option("--value-deserializer", options->value_deserializer,
                  "How %s prints the value, as --key-deserializer")
      ->check(decoding)
      ->capture_default_str();
  cmd->add_option("--key-format", options->key_format,
                  "avro, json, protobuf: %k prints the key decoded from Confluent's wire format "
                  "as JSON (Avro's JSON encoding; the document; Protobuf's JSON mapping, every "
                  "field); string: as --key-deserializer says")
      ->check(CLI::IsMember({"string", "avro", "json", "protobuf"}))
      ->capture_default_str();
  cmd->add_option("--value-format", options->value_format,
                  "How %s prints the value, as --key-format")
      ->check(CLI::IsMember({"string", "avro", "json", "protobuf"}))
      ->capture_default_str();
  cmd->add_option("--schema-registry-url", options->registry_url,
                  "Schema registry URL(s) for avro, json and protobuf, comma-separated")
      ->capture_default_str();
  cmd->add_option("--registry-property", options->registry_properties,
                  "Confluent deserializer setting key=value (basic.auth.user.info, "
                  "json.fail.invalid.schema, ...)")
      ->allow_extra_args(false);
  cmd->callback([options] { run_consume(*options); });
}

}  // namespace oxbow::cli
