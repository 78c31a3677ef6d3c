#include "sql/server/ws_query.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "http/stream_server.h"
#include "http/websocket_session.h"
#include "sql/engine/pull_query.h"
#include "sql/parser/parser.h"
#include "sql/serde/row_serde.h"
#include "sql/server/entities.h"
#include "sql/server/ksql_resource.h"
#include "sql/server/print_resource.h"
#include "sql/server/pull_query_reader.h"
#include "sql/server/pull_query_resource.h"
#include "sql/server/pull_query_routing.h"
#include "sql/server/push_query_resource.h"
#include "sql/server/query_runner.h"
#include "sql/server/server_status.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr size_t kMaxCloseReason = 123;  // a Close frame's room for its reason

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A query string's component: %XX escapes decoded and '+' as a space, as HTML forms (and
// URLSearchParams, and Python's urlencode) write them.
std::string form_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    int high = i + 2 < text.size() && text[i] == '%' ? hex_value(text[i + 1]) : -1;
    int low = high >= 0 ? hex_value(text[i + 2]) : -1;
    if (low >= 0) {
      out += static_cast<char>(high * 16 + low);
      i += 2;
    } else {
      out += text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

std::map<std::string, std::string> query_parameters(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    out.emplace(form_decode(pair.substr(0, eq)),
                eq == std::string_view::npos ? "" : form_decode(pair.substr(eq + 1)));
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
  }
  return out;
}

// ksqlDB's way of ending a session: the reason as a last message, then the Close frame.
void end_session(http::WebSocketSession& session, uint16_t code, const std::string& message) {
  session.send(json_text({{"error", message}}));
  session.close(code, close_reason(message));
}

// The result's columns as ksqlDB's first message: FieldInfo of its value columns (a push query's
// key columns are values in its rows too, so none is marked KEY).
std::string schema_message(std::vector<FieldInfo> fields) {
  json out = json::array();
  for (auto& f : fields) {
    f.field_type.reset();
    out.push_back(field_json(f));
  }
  return json_text(out);
}

// A pull query's result columns as ksqlDB's first message: its key columns marked KEY.
std::string pull_schema_message(const PullPlan& plan) {
  std::vector<FieldInfo> fields;
  for (size_t i = 0; i < plan.columns.size(); ++i) {
    FieldInfo f{plan.columns[i].name, plan.columns[i].type, std::nullopt, std::nullopt};
    if (i < plan.key_columns.size() && plan.key_columns[i])
      f.field_type = FieldInfo::FieldType::kKey;
    fields.push_back(std::move(f));
  }
  json out = json::array();
  for (const auto& f : fields) out.push_back(field_json(f));
  return json_text(out);
}

// Reads a planned pull query's rows into `session`, on the calling thread, and ends it: a
// table's from this server's partitions and, as on /query, the other servers holding its store.
void send_pull_rows(const std::shared_ptr<http::WebSocketSession>& session, PullPlan& plan,
                    const QueryStreams& streams, const ClientConfig& client,
                    const PullRoute& route) {
  // The values as ksqlDB's JSON writes them: through the JSON format's serde, by name.
  Formats formats;
  formats.value_format = "JSON";
  formats.wrap_single_value = true;
  auto serde = row_serde(formats, plan.columns, false);
  std::string failure;
  auto emit = [&](const Row& row) {
    if (session->unsent_bytes() > kMaxUnsentBytes) {
      failure = "the client reads too slowly";
      return false;
    }
    json object = json::parse(serde.serialize("", row), nullptr, false);
    json values = json::array();
    for (const auto& c : plan.columns)
      values.push_back(object.is_object() ? object.value(c.name, json()) : json());
    return session->send(json_text({{"row", {{"columns", values}}}}));
  };
  try {
    if (plan.stream)
      read_stream_rows(client, plan, emit);
    else
      read_routed_rows(*streams.streams, streams.topology, plan, route, emit);
  } catch (const std::exception& e) {
    failure = std::string("Failed to get value from materialized table, reason: ") + e.what();
  }
  if (failure.empty())
    end_session(*session, kWsNormalClosure, "done");
  else
    end_session(*session, kWsInternalServerError, failure);
}

}  // namespace

WsQueryRequest parse_ws_query(std::string_view query_string,
                              const std::vector<std::string>& denied_properties) {
  WsQueryRequest out;
  auto params = query_parameters(query_string);
  // The API version: 1 is the only one.
  if (auto version = params.find("version"); version != params.end() && version->second != "1") {
    out.error = "Received invalid api version: " + version->second;
    return out;
  }
  auto fail = [&](const std::string& why) {
    out.error = "Error parsing request: " + why;
    return out;
  };
  auto text = params.find("request");
  if (text == params.end() || text->second.empty()) return fail("missing request parameter");
  json request = json::parse(text->second, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    return fail("the request parameter is not a JSON object");
  auto ksql = request.find("ksql");
  if (ksql == request.end() || !ksql->is_string() || ksql->get<std::string>().empty())
    return fail("\"ksql\" field of \"request\" must be populated");
  out.properties = text_fields(request, "streamsProperties");
  if (auto denied = denied_overrides(denied_properties, out.properties)) return fail(*denied);
  out.statement = ksql->get<std::string>();
  out.request = text->second;
  return out;
}

std::string close_reason(const std::string& message) {
  if (message.size() <= kMaxCloseReason) return message;
  size_t cut = kMaxCloseReason - 3;
  // Back to the start of a UTF-8 character.
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  return message.substr(0, cut) + "...";
}

void WsQueryEndpoint::handle(const std::shared_ptr<http::StreamExchange>& exchange) {
  if (!exchange->websocket_requested()) {
    RestResponse r = generic_error(400, 40000, "/ws/query is served over a WebSocket only");
    return exchange->respond(r.status, "application/json", std::move(r.body));
  }
  WsQueryRequest request = parse_ws_query(exchange->request().query, denied_);
  if (auto session = exchange->accept_websocket()) run(session, request);
}

void WsQueryEndpoint::run(const std::shared_ptr<http::WebSocketSession>& session,
                          const WsQueryRequest& request) {
  if (!request.error.empty()) return end_session(*session, kWsInvalidMessageType, request.error);
  // As ksqlDB: a command not executed here within the timeout closes with 1013 (try again later).
  if (auto waited = ksql_.wait_for_command(request.request)) {
    json body = json::parse(waited->body, nullptr, false);
    return end_session(*session, kWsTryAgainLater,
                       body.is_object() ? body.value("message", waited->body) : waited->body);
  }
  const std::string body = json_text({{"ksql", request.statement}});
  if (auto printed = PrintTopics::request_of(body)) {
    try {
      print_.handle(session, *printed, [session](const std::string& error) {
        if (error.empty()) return end_session(*session, kWsNormalClosure, "done");
        end_session(*session, kWsInternalServerError, error);
      });
    } catch (const std::exception& e) {
      end_session(*session, kWsInvalidMessageType, e.what());
    }
    return;
  }
  if (PullQueries::is_pull_query(PushEndpoint::kQuery, body))
    return run_pull(session, request.statement);
  std::string id;
  try {
    session->send(schema_message(ksql_.push_query_columns(request.statement)));
    id = push_.start(request.statement, request.properties, [session](const TransientPlan&) {
      RowSink sink;
      sink.row = [session](const json& row, bool tombstone) -> std::string {
        if (session->unsent_bytes() > kMaxUnsentBytes)
          return "the client reads too slowly: more than " + std::to_string(kMaxUnsentBytes) +
                 " bytes of rows wait for it";
        json data = {{"columns", row}};
        if (tombstone) data["tombstone"] = true;
        if (!session->send(json_text({{"row", data}}))) return "the client is gone";
        return "";
      };
      sink.end = [session](const std::string& error) {
        if (error.empty())
          end_session(*session, kWsNormalClosure, "done");
        else
          end_session(*session, kWsInternalServerError, error);
      };
      return sink;
    });
  } catch (const std::exception& e) {
    return end_session(*session, kWsInvalidMessageType, e.what());
  }
  spdlog::info("sql-server: push query {} started over /ws/query: {}", id, request.statement);
  session->on_client_gone([this, id] { push_.close(json_text({{"queryId", id}})); });
}

void WsQueryEndpoint::run_pull(const std::shared_ptr<http::WebSocketSession>& session,
                               const std::string& statement) {
  auto plan = std::make_shared<PullPlan>();
  try {
    auto statements = parser::parse(statement);
    const auto& query = std::get<std::unique_ptr<parser::Query>>(statements.front().body);
    ksql_.read_engine([&](const Engine& engine) { *plan = plan_pull_query(engine, *query); });
  } catch (const std::exception& e) {
    return end_session(*session, kWsInvalidMessageType, e.what());
  }
  auto streams = plan->stream ? QueryStreams{} : runner_.query_streams(plan->materializing_query);
  if (!plan->stream && !streams.streams)
    return end_session(*session, kWsInvalidMessageType, "Materializing query has been stopped");
  session->send(pull_schema_message(*plan));
  {
    std::lock_guard lock(mutex_);
    ++reading_;
  }
  // A scan may be long: never on the server's handler threads.
  std::thread([this, reader = session, plan, streams,
               route = PullRoute{runner_.endpoint(), true, statement}]() mutable {
    send_pull_rows(reader, *plan, streams, client_, route);
    // Nothing of the query outlives the count: the destructor may go on once it drops.
    reader.reset();
    plan.reset();
    streams = {};
    std::lock_guard lock(mutex_);
    --reading_;
    idle_.notify_all();
  }).detach();
}

WsQueryEndpoint::~WsQueryEndpoint() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return reading_ == 0; });
}

}  // namespace oxbow::sql::server
