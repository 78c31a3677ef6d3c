// InitProducerId: ids and epochs for idempotent producers. Transactional ids need the transaction
// coordinator, which does not exist yet: they are told it is not available.
#include "broker/broker.h"
#include "broker/handlers.h"
#include "broker/producer_ids.h"
#include "protocol/errors.h"
#include "protocol/messages/init_producer_id.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

void handle_init_producer_id(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::InitProducerIdRequest request;
  request.decode(body, v);
  pr::InitProducerIdResponse response;
  response.producer_epoch = -1;
  if (request.transactional_id) {
    response.error_code = pr::code(ErrorCode::kCoordinatorNotAvailable);
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

}  // namespace oxbow::broker
