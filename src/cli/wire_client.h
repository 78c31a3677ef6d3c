#pragma once
// The CLI's protocol connection for the admin requests librdkafka has no API for
// (DescribeTransactions, ListTransactions, the SCRAM credential and client quota APIs, ACLs on
// transactional ids): client::Connection to the first reachable bootstrap server, secured and
// authenticated by the tool's -X properties.
#include "client/connection.h"

namespace oxbow::cli {

struct ClientOptions;

using client::error_text;

class WireClient : public client::Connection {
 public:
  explicit WireClient(const ClientOptions& options);
};

}  // namespace oxbow::cli
