#pragma once
// A Connect worker's REST API on `listeners`, and a distributed worker with it: what `oxbow
// connect standalone|distributed` and `oxbow platform` run.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <thread>

#include "common/properties.h"
#include "connect/runtime/herder.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::http {
class AdminServer;
}
namespace oxbow::connect::runtime {
class ConnectRestApi;
namespace distributed {
class DistributedHerder;
}
}  // namespace oxbow::connect::runtime

namespace oxbow::cli {

// Connect's REST API over `worker`, listening on `listeners`' first http:// URL (default
// http://127.0.0.1:8083) and known to others as `rest.advertised.host.name`:
// `rest.advertised.port` (by default the listener's own address). ConnectException when it
// cannot listen.
class ConnectRestServer {
 public:
  ConnectRestServer(connect::runtime::Herder& worker, const Properties& props);
  ~ConnectRestServer();
  // "host:port", as statuses and the group name the worker.
  const std::string& workerId() const { return workerId_; }

 private:
  boost::asio::io_context context_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      context_.get_executor()};
  std::shared_ptr<connect::runtime::ConnectRestApi> api_;
  std::unique_ptr<http::AdminServer> server_;
  std::thread thread_;
  std::string workerId_;
};

// A distributed worker serving its REST API, started by the constructor (ConnectException for a
// bad config or a port it cannot listen on).
class DistributedWorker {
 public:
  DistributedWorker(const Properties& props, connect::ConnectorPlugins plugins);
  ~DistributedWorker();
  const std::string& workerId() const { return rest_->workerId(); }
  // Why the worker cannot go on (its group refused it); empty while it can.
  std::string fatalError() const;
  // The REST API first, as Kafka stops its REST server before its herder.
  void stop();

 private:
  std::unique_ptr<connect::runtime::distributed::DistributedHerder> herder_;
  std::unique_ptr<ConnectRestServer> rest_;
};

}  // namespace oxbow::cli
