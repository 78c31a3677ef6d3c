// InitProducerId: ids and epochs for idempotent producers, and for transactional ones from the
// transaction coordinator. DescribeProducers: the producer state each partition keeps.
#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/producer_ids.h"
#include "broker/topics/topic_registry.h"
#include "protocol/errors.h"
#include "protocol/messages/describe_producers.h"
#include "protocol/messages/init_producer_id.h"
#include "storage/partition_log.h"
#include "txn/transaction_coordinator.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

void handle_init_producer_id(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::InitProducerIdRequest request;
  request.decode(body, v);
  pr::InitProducerIdResponse response;
  response.producer_epoch = -1;
  if (request.transactional_id &&
      !authorized(ctx, AclOperation::kWrite, ResourceType::kTransactionalId,
                  *request.transactional_id)) {
    response.error_code = pr::code(ErrorCode::kTransactionalIdAuthorizationFailed);
    response.producer_id = -1;
  } else if (!request.transactional_id && !may_produce_idempotently(ctx)) {
    response.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
    response.producer_id = -1;
  } else if (request.transactional_id) {
    auto result = ctx.broker.transactions().init_producer(
        *request.transactional_id, request.transaction_timeout_ms, request.producer_id,
        request.producer_epoch);
    ErrorCode error = result.error;
    if (error == ErrorCode::kProducerFenced && v < 4)
      error = ErrorCode::kInvalidProducerEpoch;  // KIP-588
    response.error_code = pr::code(error);
    response.producer_id = result.producer_id;
    response.producer_epoch = result.producer_epoch;
  } else {
    // Like Kafka, an idempotent producer gets a fresh id even when it names its old one.
    int64_t id = ctx.broker.producer_ids().next();
    if (id < 0) {
      response.error_code = pr::code(ErrorCode::kKafkaStorageError);
    } else {
      response.producer_id = id;
      response.producer_epoch = 0;
    }
  }
  response.encode(out, v);
}

void handle_describe_producers(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeProducersRequest request;
  request.decode(body, v);
  pr::DescribeProducersResponse response;
  for (const auto& topic : request.topics) {
    auto& topic_out = response.topics.emplace_back();
    topic_out.name = topic.name;
    bool allowed = authorized(ctx, AclOperation::kRead, ResourceType::kTopic, topic.name);
    for (int32_t index : topic.partition_indexes) {
      auto& part = topic_out.partitions.emplace_back();
      part.partition_index = index;
      if (!allowed) {
        part.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      auto log = ctx.broker.topics().partition(topic.name, index);
      if (!log) {
        part.error_code = pr::code(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      const auto state = log->producer_state();
      for (const auto& [id, entry] : state.producers()) {
        int32_t last_sequence = entry.batches.empty() ? -1 : entry.batches.back().last_seq;
        part.active_producers.push_back({id, entry.epoch, last_sequence, entry.last_timestamp,
                                         entry.coordinator_epoch, entry.txn_first_offset});
      }
    }
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
