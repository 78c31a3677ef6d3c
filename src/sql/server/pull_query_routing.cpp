#include "sql/server/pull_query_routing.h"

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "http/client.h"
#include "oxbow/streams/kafka_streams.h"
#include "sql/serde/row_serde.h"
#include "sql/server/pull_query_reader.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr const char* kInternal = "request.ksql.internal.request";
constexpr const char* kSkipForwarding = "request.ksql.query.pull.skip.forwarding";
constexpr int kForwardTimeoutMs = 10'000;

bool is_true(const json& object, const char* name) {
  auto v = object.find(name);
  if (v == object.end()) return false;
  return (v->is_boolean() && v->get<bool>()) || (v->is_string() && v->get<std::string>() == "true");
}

std::string endpoint(const streams::HostInfo& host) {
  return host.host() + ":" + std::to_string(host.port());
}

// The servers other than this one whose active tasks hold partitions of the plan's store.
std::set<std::string> other_owners(const streams::KafkaStreams& streams, const PullPlan& plan,
                                   const std::string& self) {
  std::set<std::string> owners;
  for (const auto& m : streams.streamsMetadataForStore(plan.store))
    if (m.stateStoreNames().count(plan.store) && m.port() >= 0 && endpoint(m.hostInfo()) != self)
      owners.insert(endpoint(m.hostInfo()));
  return owners;
}

// Asks `owner` for its rows; each one goes to `take` (as the plan's columns) until it says stop.
bool read_remote(const std::string& owner, const PullPlan& plan, const std::string& statement,
                 const std::function<bool(const Row&)>& take) {
  http::Request request;
  request.method = "POST";
  request.path = "/query";
  request.accept = "application/vnd.ksql.v1+json";
  request.content_type = "application/vnd.ksql.v1+json";
  request.body = json{{"ksql", statement},
                      {"streamsProperties", json::object()},
                      {"requestProperties", {{kInternal, true}, {kSkipForwarding, true}}}}
                     .dump();
  auto answer = http::send_request("http://" + owner, request, kForwardTimeoutMs);
  if (!answer.response) throw std::runtime_error("forwarding to " + owner + ": " + answer.error);
  json parsed = json::parse(answer.response->body, nullptr, false);
  if (answer.response->status != 200 || !parsed.is_array())
    throw std::runtime_error("forwarding to " + owner + ": " +
                             std::to_string(answer.response->status) + " " +
                             (parsed.is_object() ? parsed.value("message", answer.response->body)
                                                 : answer.response->body));
  Formats formats;
  formats.value_format = "JSON";
  formats.wrap_single_value = true;
  auto serde = row_serde(formats, plan.columns, false);
  for (const auto& item : parsed) {
    if (auto error = item.find("errorMessage"); error != item.end())
      throw std::runtime_error("forwarding to " + owner + ": " + error->value("message", ""));
    auto row = item.find("row");
    if (row == item.end()) continue;
    const json& values = (*row)["columns"];
    json object = json::object();
    for (size_t i = 0; i < plan.column_names.size() && i < values.size(); ++i)
      object[plan.column_names[i]] = values[i];
    if (!take(serde.deserialize("", object.dump()))) return false;
  }
  return true;
}

}  // namespace

bool forwarded_request(std::string_view body) {
  json request = json::parse(body, nullptr, false);
  if (!request.is_object()) return false;
  auto properties = request.find("requestProperties");
  return properties != request.end() && properties->is_object() &&
         (is_true(*properties, kInternal) || is_true(*properties, kSkipForwarding));
}

void read_routed_rows(const streams::KafkaStreams& streams, const std::string& topology,
                      PullPlan& plan, const PullRoute& route,
                      const std::function<bool(const Row&)>& emit) {
  // Looked up first: the owners as the group's assignment had them when the query began.
  const auto owners =
      route.forward ? other_owners(streams, plan, route.self) : std::set<std::string>{};
  int64_t count = 0;
  bool stopped = false;
  auto take = [&](const Row& row) {
    ++count;
    stopped = !emit(row) || (plan.limit && count >= *plan.limit);
    return !stopped;
  };
  read_pull_rows(streams, topology, plan, take);
  for (const auto& owner : owners)
    if (stopped || !read_remote(owner, plan, route.statement, take)) return;
}

}  // namespace oxbow::sql::server
