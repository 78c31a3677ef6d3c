// Fetch: serve each partition's bytes from its segment files (sent with sendfile), long-polling
// until min_bytes are available or max_wait_ms passes. Incremental fetch sessions (KIP-227,
// broker/handlers/fetch_session.h) let a client name only what changed, and hear only what is new.
// With isolation_level read_committed, partitions are read up to their last stable offset and the
// aborted transactions in range are listed, for the client to drop their records. Fetch v0-v3 get
// the records converted to their message formats (protocol/legacy_messages.h).
#include <deque>

#include "broker/async_waiter.h"
#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/fetch_session.h"
#include "broker/handlers/handlers.h"
#include "broker/probe.h"
#include "broker/topics/topic_registry.h"
#include "common/clock.h"
#include "protocol/compression.h"
#include "protocol/errors.h"
#include "protocol/legacy_messages.h"
#include "protocol/messages/fetch.h"
#include "storage/file.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

struct Target {
  std::string topic;
  std::shared_ptr<storage::PartitionLog> log;  // nullptr: unknown
  std::shared_ptr<TopicStats> stats;
  ErrorCode unknown_error = ErrorCode::kUnknownTopicOrPartition;
  // What the topic's configs say to a fetch of this version, read once per request.
  bool zstd_for_old_fetch = false;  // compression.type=zstd and a version before v10
  bool no_downconversion = false;   // message.downconversion.enable=false
  size_t bytes_read = 0;            // record bytes of the final read, counted once sent
};

// The config checks for fetch versions that predate zstd or record batches; none from v10.
void read_version_checks(Target& target, int16_t v) {
  if (!target.log || v >= 10) return;
  auto config = target.log->config();
  target.zstd_for_old_fetch = config.compression_codec == pr::kZstdCodec;
  target.no_downconversion = pr::fetch_magic(v) < 2 && !config.message_downconversion;
}

// Resolves the request's topics (by name, or by id from v13) once.
std::vector<std::vector<Target>> resolve(const RequestContext& ctx, const pr::FetchRequest& request,
                                         int16_t v) {
  auto& broker = ctx.broker;
  std::vector<std::vector<Target>> targets;
  for (const auto& topic : request.topics) {
    auto& row = targets.emplace_back();
    std::string name = topic.topic;
    ErrorCode missing = ErrorCode::kUnknownTopicOrPartition;
    if (v >= 13) {
      auto info = broker.topics().find_by_id(topic.topic_id);
      name = info ? info->name : "";
      missing = ErrorCode::kUnknownTopicId;
    }
    if (!name.empty() && !authorized(ctx, AclOperation::kRead, ResourceType::kTopic, name)) {
      row.assign(topic.partitions.size(),
                 {name, nullptr, nullptr, ErrorCode::kTopicAuthorizationFailed});
      continue;
    }
    auto stats = name.empty() ? nullptr : broker.topics().stats(name);
    for (const auto& p : topic.partitions) {
      row.push_back({name, name.empty() ? nullptr : broker.topics().partition(name, p.partition),
                     stats, missing});
      read_version_checks(row.back(), v);
    }
  }
  return targets;
}

// A partition answered with an error alone, as Kafka's FetchResponse.partitionResponse.
void fail_partition(pr::FetchResponse::PartitionData& out, ErrorCode error) {
  out.error_code = pr::code(error);
  out.high_watermark = -1;
  out.last_stable_offset = -1;
  out.log_start_offset = -1;
  out.aborted_transactions.reset();
  out.records.bytes = {};
  out.records.slices.clear();
}

// Fetch v0-v3 predate record batches: what was read goes out converted to the version's message
// format (Kafka's down-conversion), unless the topic has message.downconversion.enable=false.
void downconvert(const Target& target, int8_t magic, int64_t fetch_offset, int32_t max_bytes,
                 const pr::FileSlice& slice, pr::FetchResponse::PartitionData& out,
                 std::deque<std::vector<uint8_t>>& held) {
  if (target.no_downconversion) {
    fail_partition(out, ErrorCode::kUnsupportedVersion);
    return;
  }
  std::vector<uint8_t> batches(slice.length);
  if (storage::read_at(slice.fd, batches.data(), batches.size(), slice.offset) !=
      static_cast<int64_t>(batches.size())) {
    fail_partition(out, ErrorCode::kKafkaStorageError);
    return;
  }
  auto& converted = held.emplace_back();
  auto error = pr::downconvert_batches(batches, magic, fetch_offset,
                                       static_cast<size_t>(std::max(max_bytes, 0)), converted);
  if (error != ErrorCode::kNone) {
    fail_partition(out, error);
    return;
  }
  out.records.bytes = converted;
  probe().fetch_down_conversions.add();
}

// Fills the response from the logs; returns the number of record bytes it carries. Converted
// records (Fetch v0-v3) live in `held`.
size_t read_all(const pr::FetchRequest& request, int16_t v,
                const std::vector<std::vector<Target>>& targets, pr::FetchResponse& response,
                std::deque<std::vector<uint8_t>>& held) {
  response.responses.clear();
  held.clear();
  int8_t magic = pr::fetch_magic(v);
  bool read_committed = request.isolation_level == 1;
  int64_t budget = request.max_bytes;
  size_t total = 0;
  for (size_t t = 0; t < request.topics.size(); ++t) {
    auto& topic_out = response.responses.emplace_back();
    topic_out.topic = request.topics[t].topic;
    topic_out.topic_id = request.topics[t].topic_id;
    for (size_t p = 0; p < request.topics[t].partitions.size(); ++p) {
      const auto& part = request.topics[t].partitions[p];
      auto& out = topic_out.partitions.emplace_back();
      out.partition_index = part.partition;
      const auto& target = targets[t][p];
      if (!target.log) {
        out.error_code = pr::code(target.unknown_error);
        out.high_watermark = -1;
        out.records.is_null = false;
        continue;
      }
      // As Kafka: a zstd topic is not served to fetch versions from before zstd (v10).
      if (target.zstd_for_old_fetch) {
        fail_partition(out, ErrorCode::kUnsupportedCompressionType);
        continue;
      }
      int32_t max_bytes = static_cast<int32_t>(
          std::min<int64_t>(part.partition_max_bytes, std::max<int64_t>(budget, 0)));
      // KIP-74: the first batch of the response goes out whole even past the limits, so that a
      // consumer can always make progress.
      auto read = target.log->read(part.fetch_offset, max_bytes, total == 0, read_committed);
      out.error_code = pr::code(read.error);
      out.high_watermark = read.high_watermark;
      out.last_stable_offset = read.last_stable_offset;
      out.log_start_offset = read.log_start_offset;
      auto& aborted = out.aborted_transactions.emplace();
      for (const auto& a : read.aborted) aborted.push_back({a.producer_id, a.first_offset});
      out.records.is_null = false;
      if (read.slice.length == 0) continue;
      total += read.slice.length;
      budget -= read.slice.length;
      if (magic < 2) {
        downconvert(target, magic, part.fetch_offset, max_bytes, read.slice, out, held);
      } else {
        out.records.slices.push_back(std::move(read.slice));
      }
    }
  }
  return total;
}

// A fetch over the client's quota is answered empty with the throttle time, and its bytes are
// taken back off the quota, since they are not sent (Kafka's way). One exception: a response
// larger than the quota ever allows (a first batch that KIP-74 sends whole) would be refused the
// same way on every retry, so it goes out, and its throttle time pays for it.
// Returns whether the response was emptied.
bool throttle_if_over_quota(RequestContext& ctx, pr::FetchResponse& response, int16_t v) {
  Writer sized;
  response.encode(sized, v);
  size_t bytes = sized.total_size() + 4;  // and the correlation id, as Kafka counts it
  int32_t throttle = record_fetch_bytes(ctx, bytes);
  response.throttle_time_ms = throttle;
  if (throttle == 0 || bytes > static_cast<size_t>(fetch_bytes_allowed(ctx))) return false;
  unrecord_fetch_bytes(ctx, bytes);
  response.responses.clear();
  response.error_code = 0;
  return true;
}

bool has_error(const pr::FetchResponse& response) {
  for (const auto& t : response.responses) {
    for (const auto& p : t.partitions) {
      if (p.error_code != 0) return true;
    }
  }
  return false;
}

}  // namespace

asio::awaitable<void> handle_fetch(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::FetchRequest request;
  request.decode(body, v);
  if (v < 3) request.max_bytes = INT32_MAX;
  bool quotas = quotas_active(ctx);
  if (quotas) {
    // As Kafka: no response may carry more than the quota allows over its measuring span.
    request.max_bytes = std::min(request.max_bytes, fetch_bytes_allowed(ctx));
    request.min_bytes = std::min(request.min_bytes, request.max_bytes);
  }
  auto& sessions = ctx.broker.fetch_sessions();
  auto session = sessions.begin(request, v, steady_now_ms());
  pr::FetchResponse response;
  if (session.session_id != 0) probe().incremental_fetches.add();
  if (session.error != ErrorCode::kNone) {
    probe().fetch_session_errors.add();
    sessions.select(session, response);
    response.encode(out, v);
    co_return;
  }
  auto targets = resolve(ctx, request, v);

  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(std::max(request.max_wait_ms, 0));
  std::shared_ptr<AsyncWaiter> waiter;
  std::deque<std::vector<uint8_t>> held;  // converted records the response points into
  while (true) {
    // Register before reading so that an append between the read and the wait still wakes us.
    if (waiter) {
      for (const auto& row : targets) {
        for (const auto& target : row) {
          if (target.log) target.log->wait_for_data(waiter);
        }
      }
    }
    size_t bytes = read_all(request, v, targets, response, held);
    bool enough =
        static_cast<int64_t>(bytes) >= std::max(request.min_bytes, 1) || has_error(response);
    if (enough || std::chrono::steady_clock::now() >= deadline) break;
    if (!waiter) {
      waiter = std::make_shared<AsyncWaiter>(co_await asio::this_coro::executor);
      continue;  // register, then read again
    }
    auto parked_from = std::chrono::steady_clock::now();
    co_await waiter->wait_until(deadline);
    ctx.parked += std::chrono::steady_clock::now() - parked_from;
  }
  // Count what is sent, once, after the long poll: a session leaves out partitions with neither
  // records nor errors, and a quota that empties the response sends nothing.
  size_t errors = 0;
  for (size_t t = 0; t < response.responses.size(); ++t) {
    for (size_t p = 0; p < response.responses[t].partitions.size(); ++p) {
      const auto& part = response.responses[t].partitions[p];
      if (part.error_code != 0) ++errors;
      targets[t][p].bytes_read = part.records.size();
    }
  }
  sessions.select(session, response);
  bool throttled = quotas && throttle_if_over_quota(ctx, response, v);
  sessions.commit(session, request, response, throttled, steady_now_ms());
  if (!throttled) {
    if (errors > 0) probe().apis[1].errors.add(errors);
    for (const auto& row : targets) {
      for (const auto& target : row) {
        if (target.stats) target.stats->bytes_out.add(target.bytes_read);
      }
    }
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
