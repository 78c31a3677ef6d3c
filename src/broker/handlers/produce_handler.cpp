// Produce: validate and append each partition's batches, then answer per the acks and the flush
// policy (an append the policy wants durable is answered after the flusher's fdatasync).
#include <spdlog/spdlog.h>

#include "broker/async_waiter.h"
#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/probe.h"
#include "broker/topics/internal_topic.h"
#include "broker/topics/topic_registry.h"
#include "common/clock.h"
#include "protocol/batch_builder.h"
#include "protocol/errors.h"
#include "protocol/legacy_messages.h"
#include "protocol/messages/produce.h"
#include "protocol/record_batch.h"
#include "storage/log_manager.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

using PartitionResponse = pr::ProduceResponse::PartitionProduceResponse;

struct PendingFlush {
  std::shared_ptr<storage::PartitionLog> log;
  int64_t last_offset;
  PartitionResponse* response;
};

constexpr int32_t kInSyncReplicas = 1;  // a single node: the leader is the only replica
constexpr int16_t kFirstBatchOnlyVersion = 3;
constexpr int16_t kFirstZstdVersion = 7;

// What Produce v3+ demands of a partition's records before they are looked at, as Kafka's
// ProduceRequest.validateRecords: exactly one batch, of magic 2, zstd only from v7. Older versions
// carry message sets of any magic.
ErrorCode check_records_for_version(std::span<const uint8_t> records, int16_t version,
                                    std::string& message) {
  if (version < kFirstBatchOnlyVersion) return ErrorCode::kNone;
  auto refuse = [&](const char* what) {
    message = fmt::format("Produce requests with version {} {}", version, what);
    return ErrorCode::kInvalidRecord;
  };
  if (records.size() < pr::kBatchHeaderSize)
    return refuse("must have at least one record batch per partition");
  auto header = pr::read_batch_header(records.data());
  if (header.magic != 2)
    return refuse("are only allowed to contain record batches with magic version 2");
  if (header.batch_length > 0 && header.total_size() < records.size()) {
    return refuse("are only allowed to contain exactly one record batch per partition");
  }
  if (header.codec() == pr::kZstdCodec && version < kFirstZstdVersion) {
    message = fmt::format(
        "Produce requests with version {} are not allowed to use ZStandard compression", version);
    return ErrorCode::kUnsupportedCompressionType;
  }
  return ErrorCode::kNone;
}

// Refusals made before the records are validated, in Kafka's order: the request's form, then the
// replicas. acks=all with fewer in-sync replicas than min.insync.replicas writes nothing, so that
// no acknowledgement promises more copies than exist.
ErrorCode check_before_append(const storage::LogConfig& config, std::span<const uint8_t> records,
                              int16_t version, int16_t acks, std::string& message) {
  if (auto error = check_records_for_version(records, version, message); error != ErrorCode::kNone)
    return error;
  if (acks != -1) return ErrorCode::kNone;
  int32_t min_insync = config.min_insync_replicas;
  if (min_insync <= kInSyncReplicas) return ErrorCode::kNone;
  message = fmt::format("{} in-sync replica(s), fewer than min.insync.replicas={}", kInSyncReplicas,
                        min_insync);
  return ErrorCode::kNotEnoughReplicas;
}

// As Kafka, a topic whose compression.type is a codec stores every batch in that codec. A batch
// that fails validation is left for the append to refuse.
std::span<uint8_t> apply_topic_compression(int codec, int level, std::span<uint8_t> records,
                                           std::vector<uint8_t>& recompressed) {
  if (codec == storage::kProducerCompression || !pr::needs_recompression(records, codec))
    return records;
  pr::BatchesSummary summary;
  if (pr::validate_batches(records, summary) != ErrorCode::kNone) return records;
  if (!pr::recompress_batches(records, codec, recompressed, level)) return records;
  return recompressed;
}

void append_partition(Broker& broker, const std::string& topic, TopicStats* stats,
                      pr::ProduceRequest::PartitionProduceData& data, int16_t version, int16_t acks,
                      PartitionResponse& out, std::vector<PendingFlush>& flushes) {
  out.index = data.index;
  auto log = broker.topics().partition(topic, data.index);
  if (!log) {
    out.error_code = pr::code(ErrorCode::kUnknownTopicOrPartition);
    return;
  }
  std::span<uint8_t> records = data.records.bytes;
  if (data.records.is_null) records = {};
  auto config = log->config();
  std::string refusal;
  if (auto error = check_before_append(config, records, version, acks, refusal);
      error != ErrorCode::kNone) {
    out.error_code = pr::code(error);
    out.base_offset = -1;
    out.error_message = std::move(refusal);
    return;
  }
  if (records.empty()) {
    out.error_code = pr::code(ErrorCode::kCorruptMessage);
    return;
  }
  std::vector<uint8_t> converted;
  storage::AppendResult result;
  if (pr::is_legacy_message_set(records)) {
    // A pre-0.11 client's messages, kept as one v2 batch as Kafka 3 does.
    result.error = pr::upconvert_legacy_message_set(records, converted);
    records = converted;
  }
  std::vector<uint8_t> recompressed;
  if (result.error == ErrorCode::kNone) {
    records = apply_topic_compression(config.compression_codec, config.compression_level(), records,
                                      recompressed);
    result = log->append(records, now_ms());
  }
  out.error_code = pr::code(result.error);
  if (result.error != ErrorCode::kNone) {
    out.base_offset = -1;
    if (!result.record_errors.empty()) {
      // As Kafka: the client fails these records and the rest of their batch apart.
      for (auto& e : result.record_errors) out.record_errors.push_back({e.index, e.message});
      const auto& first = result.record_errors.front();
      out.error_message = fmt::format("{} record(s) rejected; record {}: {}",
                                      result.record_errors.size(), first.index, first.message);
    } else if (!result.message.empty()) {
      out.error_message = std::move(result.message);
    } else if (result.error == ErrorCode::kCorruptMessage ||
               result.error == ErrorCode::kInvalidRecord ||
               result.error == ErrorCode::kUnsupportedForMessageFormat) {
      out.error_message = std::string("record batch rejected: ") + pr::error_name(result.error);
    }
    return;
  }
  if (stats) {
    stats->bytes_in.add(records.size());
    stats->records_in.add(static_cast<uint64_t>(result.last_offset - result.base_offset + 1));
  }
  out.base_offset = result.base_offset;
  out.log_append_time_ms = result.log_append_time_ms;
  out.log_start_offset = result.log_start_offset;
  if (result.wait_for_flush) {
    broker.logs().request_flush(log);
    if (acks != 0) flushes.push_back({log, result.last_offset, &out});
  }
}

asio::awaitable<void> wait_for_flushes(std::vector<PendingFlush>& flushes, int32_t timeout_ms) {
  auto executor = co_await asio::this_coro::executor;
  auto waiter = std::make_shared<AsyncWaiter>(executor);
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  while (true) {
    bool all_durable = true;
    for (auto& f : flushes) {
      if (f.log->flushed_offset() <= f.last_offset) {
        all_durable = false;
        f.log->wait_flushed(f.last_offset, waiter);
      }
    }
    if (all_durable) co_return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    co_await waiter->wait_until(deadline);
  }
  for (auto& f : flushes) {
    if (f.log->flushed_offset() <= f.last_offset) {
      f.response->error_code = pr::code(ErrorCode::kRequestTimedOut);
    }
  }
}

// Does any batch carry the transactional flag? Only magic 2 has one (a v0/v1 message set has other
// fields there); malformed data and older magics are left to the log's validation.
bool has_transactional_batches(const pr::ProduceRequest& request) {
  for (const auto& topic : request.topic_data) {
    for (const auto& partition : topic.partition_data) {
      std::span<const uint8_t> bytes = partition.records.bytes;
      for (size_t pos = 0; pos + pr::kBatchHeaderSize <= bytes.size();) {
        auto header = pr::read_batch_header(bytes.data() + pos);
        if (header.magic != 2) break;
        if (header.is_transactional()) return true;
        if (header.batch_length <= 0) break;
        pos += pr::kBatchLogOverhead + static_cast<size_t>(header.batch_length);
      }
    }
  }
  return false;
}

bool is_internal_topic(const std::string& name) {
  return name == kOffsetsTopic || name == kTransactionStateTopic;
}

}  // namespace

asio::awaitable<void> handle_produce(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ProduceRequest request;
  request.decode(body, v);
  bool valid_acks = request.acks == -1 || request.acks == 0 || request.acks == 1;
  // Transactional batches need WRITE on the request's transactional id (which they must name), or
  // none of the request is written: as Kafka, so that topic WRITE alone cannot join a transaction.
  bool txn_allowed = true;
  if (!authorization_off(ctx) && (request.transactional_id || has_transactional_batches(request))) {
    txn_allowed = request.transactional_id &&
                  authorized(ctx, AclOperation::kWrite, ResourceType::kTransactionalId,
                             *request.transactional_id);
  }
  pr::ProduceResponse response;
  std::vector<PendingFlush> flushes;
  response.responses.reserve(request.topic_data.size());
  for (auto& topic : request.topic_data) {
    auto& topic_out = response.responses.emplace_back();
    topic_out.name = topic.name;
    topic_out.partition_responses.resize(topic.partition_data.size());
    auto stats = ctx.broker.topics().stats(topic.name);
    // Only the coordinators write the internal topics (Kafka answers clients
    // INVALID_TOPIC_EXCEPTION).
    ErrorCode refusal = !valid_acks    ? ErrorCode::kInvalidRequiredAcks
                        : !txn_allowed ? ErrorCode::kTransactionalIdAuthorizationFailed
                        : is_internal_topic(topic.name) ? ErrorCode::kInvalidTopicException
                        : !authorized(ctx, AclOperation::kWrite, ResourceType::kTopic, topic.name)
                            ? ErrorCode::kTopicAuthorizationFailed
                            : ErrorCode::kNone;
    for (size_t i = 0; i < topic.partition_data.size(); ++i) {
      auto& part_out = topic_out.partition_responses[i];
      if (refusal != ErrorCode::kNone) {
        part_out.index = topic.partition_data[i].index;
        part_out.error_code = pr::code(refusal);
        part_out.base_offset = -1;
        continue;
      }
      append_partition(ctx.broker, topic.name, stats.get(), topic.partition_data[i], v,
                       request.acks, part_out, flushes);
      if (part_out.error_code != 0) probe().apis[0].errors.add();
    }
  }
  if (request.acks == 0) {
    ctx.respond = false;
    record_produce_bytes(ctx, ctx.request_bytes);  // no answer: the throttle only mutes
    co_return;
  }
  if (!flushes.empty()) {
    auto waiting_from = std::chrono::steady_clock::now();
    co_await wait_for_flushes(flushes, request.timeout_ms);
    ctx.waited += std::chrono::steady_clock::now() - waiting_from;
  }
  // As Kafka, counted once the append is done, whatever its outcome.
  response.throttle_time_ms = record_produce_bytes(ctx, ctx.request_bytes);
  response.encode(out, v);
}

}  // namespace oxbow::broker
