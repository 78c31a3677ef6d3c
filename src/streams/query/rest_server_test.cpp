// RestServer and forward() over real loopback sockets: routing, errors, concurrency, and the
// forwarding rules (one hop only, answers for targets that are down or unknown).
#include "oxbow/streams/rest_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "http/client.h"

namespace oxbow::streams::rest {
namespace {

http::Exchange call(uint16_t port, const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& via = "") {
  http::Request r;
  r.method = method;
  auto question = target.find('?');
  r.path = target.substr(0, question);
  if (question != std::string::npos) r.query = target.substr(question + 1);
  r.body = body;
  r.via = via;
  if (!body.empty()) r.content_type = "text/plain";
  return http::send_request("http://127.0.0.1:" + std::to_string(port), r, 10000);
}

// The params and what the handler saw, as a flat JSON object the tests compare as text.
std::string describe(const Request& r) {
  std::string out = "{";
  for (const auto& [k, v] : r.params) out += "\"" + k + "\":\"" + json_escape(v) + "\",";
  out += "\"query\":\"" + json_escape(r.query) + "\",\"body\":\"" + json_escape(r.body) + "\"}";
  return out;
}

TEST(RestServer, RoutesByMethodAndPathWithDecodedParams) {
  RestServer server;
  server.route("GET", "/kafka-music/charts/genre/{genre}",
               [](const Request& r) { return Response::json(describe(r)); });
  server.route("GET", "/kafka-music/charts/top-five",
               [](const Request&) { return Response::json("[]"); });
  server.route("GET", "/kafka-music/song/{id}", [](const Request& r) {
    return Response::json("{\"id\":\"" + r.param("id") + "\",\"missing\":\"" + r.param("nope") +
                          "\"}");
  });
  server.route("POST", "/echo/{a}/x/{b}", [](const Request& r) {
    return Response{201, "text/plain", r.method + " " + r.path + " " + describe(r)};
  });
  server.start("127.0.0.1", 0);
  ASSERT_NE(server.port(), 0);

  auto genre = call(server.port(), "GET", "/kafka-music/charts/genre/hip%20hop");
  ASSERT_TRUE(genre.response) << genre.error;
  EXPECT_EQ(genre.response->status, 200);
  EXPECT_EQ(genre.response->content_type, "application/json");
  EXPECT_EQ(genre.response->body, R"({"genre":"hip hop","query":"","body":""})");

  // A trailing slash (Kafka's example forwards chart requests with one) matches the same route.
  auto slash = call(server.port(), "GET", "/kafka-music/charts/top-five/");
  ASSERT_TRUE(slash.response) << slash.error;
  EXPECT_EQ(slash.response->status, 200);
  EXPECT_EQ(slash.response->body, "[]");

  auto song = call(server.port(), "GET", "/kafka-music/song/42");
  ASSERT_TRUE(song.response);
  EXPECT_EQ(song.response->body, R"({"id":"42","missing":""})");

  auto post = call(server.port(), "POST", "/echo/a%2Fb/x/%zz?k=v", "the body");
  ASSERT_TRUE(post.response);
  EXPECT_EQ(post.response->status, 201);
  EXPECT_EQ(post.response->content_type, "text/plain");
  // An encoded slash stays inside its segment; a malformed escape is kept as it is.
  EXPECT_EQ(post.response->body,
            R"(POST /echo/a%2Fb/x/%zz {"a":"a/b","b":"%zz","query":"k=v","body":"the body"})");

  auto unknown = call(server.port(), "GET", "/kafka-music/nothing/here");
  ASSERT_TRUE(unknown.response);
  EXPECT_EQ(unknown.response->status, 404);
  EXPECT_EQ(unknown.response->body,
            R"({"error_code":404,"message":"no resource at /kafka-music/nothing/here"})");

  auto wrong_method = call(server.port(), "DELETE", "/kafka-music/song/1");
  ASSERT_TRUE(wrong_method.response);
  EXPECT_EQ(wrong_method.response->status, 405);

  // Segments count: one more or one fewer is another path.
  auto longer = call(server.port(), "GET", "/kafka-music/song/1/2");
  ASSERT_TRUE(longer.response);
  EXPECT_EQ(longer.response->status, 404);
}

TEST(RestServer, QueryParametersAndDecoding) {
  Request r;
  r.query = "a=1&b=x+y%21&flag&a=2&empty=";
  EXPECT_EQ(r.query_param("a"), "1");
  EXPECT_EQ(r.query_param("b"), "x y!");
  EXPECT_EQ(r.query_param("flag"), "");
  EXPECT_EQ(r.query_param("empty"), "");
  EXPECT_EQ(r.query_param("c"), std::nullopt);
  EXPECT_EQ(percent_decode("a+b%20c"), "a+b c");
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("100%"), "100%");
  EXPECT_EQ(percent_decode("%4"), "%4");
  EXPECT_EQ(percent_decode("%C3%A9"), "\xC3\xA9");
  EXPECT_EQ(json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
  EXPECT_EQ(json_escape("\xC3\xA9 \xFF"), "\xC3\xA9 \xEF\xBF\xBD");  // not UTF-8: U+FFFD
  EXPECT_EQ(Response::error(404, "no \"x\"").body, R"({"error_code":404,"message":"no \"x\""})");
}

TEST(RestServer, ABusyPortIsRefusedAndStopClosesTheListener) {
  RestServer first;
  first.route("GET", "/", [](const Request&) { return Response::json("{}"); });
  first.start("localhost", 0);  // a name is resolved
  uint16_t port = first.port();
  ASSERT_NE(port, 0);
  ASSERT_TRUE(call(port, "GET", "/").response);

  RestServer second;
  EXPECT_THROW(second.start("127.0.0.1", port), std::runtime_error);
  EXPECT_THROW(first.start("127.0.0.1", 0), std::logic_error);
  EXPECT_THROW(first.route("GET", "/late", [](const Request&) { return Response{}; }),
               std::logic_error);

  first.stop();
  first.stop();  // twice is fine
  auto after = call(port, "GET", "/");
  EXPECT_FALSE(after.response);

  RestServer never_started;  // destroyed without start()
}

TEST(RestServer, AHandlerThatThrowsAnswers500) {
  RestServer server;
  server.route("GET", "/boom",
               [](const Request&) -> Response { throw std::runtime_error("store closed"); });
  server.start("127.0.0.1", 0);
  auto answer = call(server.port(), "GET", "/boom");
  ASSERT_TRUE(answer.response);
  EXPECT_EQ(answer.response->status, 500);
  EXPECT_EQ(answer.response->body,
            R"({"error_code":500,"message":"internal error: store closed"})");
}

// Each handler waits until all 100 are inside handlers at once: this passes only if the pool
// grows past its 4 starting threads to serve every connection concurrently.
TEST(RestServer, HundredConcurrentClientsAreServedAtTheSameTime) {
  constexpr int kClients = 100;
  std::mutex mutex;
  std::condition_variable cv;
  int inside = 0, peak = 0;
  RestServer server(4, 256);
  server.route("GET", "/wait/{n}", [&](const Request& r) {
    std::unique_lock lock(mutex);
    peak = std::max(peak, ++inside);
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return peak >= kClients; });
    --inside;
    return Response::json("{\"n\":" + r.param("n") + "}");
  });
  server.start("127.0.0.1", 0);

  std::vector<std::thread> clients;
  std::vector<int> statuses(kClients, 0);
  std::vector<std::string> bodies(kClients);
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      auto answer = call(server.port(), "GET", "/wait/" + std::to_string(i));
      if (answer.response) {
        statuses[i] = answer.response->status;
        bodies[i] = answer.response->body;
      }
    });
  for (auto& c : clients) c.join();
  EXPECT_EQ(peak, kClients);
  for (int i = 0; i < kClients; ++i) {
    EXPECT_EQ(statuses[i], 200) << i;
    EXPECT_EQ(bodies[i], "{\"n\":" + std::to_string(i) + "}");
  }
}

TEST(RestServer, ForwardRelaysTheAnswerAndMarksTheRequest) {
  std::atomic<int> b_calls{0};
  RestServer b;
  b.route("POST", "/items/{id}", [&](const Request& r) {
    ++b_calls;
    return Response{202, "text/plain",
                    "b got " + r.param("id") + " query=" + r.query + " body=" + r.body +
                        " type=" + r.content_type + " forwarded=" + (r.forwarded() ? "yes" : "no") +
                        " via=" + r.via};
  });
  b.start("127.0.0.1", 0);
  HostInfo b_host("127.0.0.1", b.port());

  RestServer a;
  a.route("POST", "/items/{id}", [&](const Request& r) { return forward(b_host, r); });
  a.start("127.0.0.1", 0);

  auto answer = call(a.port(), "POST", "/items/7?x=1", "payload");
  ASSERT_TRUE(answer.response) << answer.error;
  EXPECT_EQ(answer.response->status, 202);
  EXPECT_EQ(answer.response->content_type, "text/plain");
  EXPECT_EQ(answer.response->body,
            "b got 7 query=x=1 body=payload type=text/plain forwarded=yes via=1.1 oxbow-streams");
  EXPECT_EQ(b_calls, 1);

  // A request that came through another proxy (a cache, a load balancer) is still forwarded once,
  // its Via kept.
  auto proxied = call(a.port(), "POST", "/items/9", "p", "1.1 varnish");
  ASSERT_TRUE(proxied.response) << proxied.error;
  EXPECT_EQ(proxied.response->status, 202);
  EXPECT_EQ(proxied.response->body,
            "b got 9 query= body=p type=text/plain forwarded=yes via=1.1 varnish, 1.1 "
            "oxbow-streams");

  // A request of the handler's own making goes out the same way.
  Request lookup;
  lookup.method = "POST";
  lookup.path = "/items/8";
  auto direct = forward(b_host, lookup, std::chrono::seconds(5));
  EXPECT_EQ(direct.status, 202);
  EXPECT_EQ(direct.body.substr(0, 8), "b got 8 ");
}

TEST(RestServer, AForwardingLoopStopsAfterOneHop) {
  std::atomic<int> a_calls{0}, b_calls{0};
  RestServer a, b;
  HostInfo a_host, b_host;
  // Each believes the other holds the key (two views of an assignment during a rebalance).
  a.route("GET", "/key/{k}", [&](const Request& r) {
    ++a_calls;
    return forward(b_host, r);
  });
  b.route("GET", "/key/{k}", [&](const Request& r) {
    ++b_calls;
    return forward(a_host, r);
  });
  a.start("127.0.0.1", 0);
  b.start("127.0.0.1", 0);
  a_host = HostInfo("127.0.0.1", a.port());
  b_host = HostInfo("127.0.0.1", b.port());

  auto answer = call(a.port(), "GET", "/key/k1");
  ASSERT_TRUE(answer.response) << answer.error;
  EXPECT_EQ(answer.response->status, 508);
  EXPECT_NE(answer.response->body.find("forwarded already"), std::string::npos)
      << answer.response->body;
  EXPECT_EQ(a_calls, 1);
  EXPECT_EQ(b_calls, 1);
}

TEST(RestServer, TargetsThatAreDownOrUnknown) {
  uint16_t closed_port;
  {
    RestServer gone;
    gone.start("127.0.0.1", 0);
    closed_port = gone.port();
  }
  Request r;
  r.method = "GET";
  r.path = "/kafka-music/charts/top-five";
  auto down = forward(HostInfo("127.0.0.1", closed_port), r, std::chrono::seconds(5));
  EXPECT_EQ(down.status, 502);
  EXPECT_EQ(down.content_type, "application/json");
  EXPECT_NE(down.body.find("no answer from 127.0.0.1:" + std::to_string(closed_port)),
            std::string::npos)
      << down.body;

  auto unknown = forward(HostInfo::unavailable(), r);
  EXPECT_EQ(unknown.status, 503);

  // An instance that never answers: the timeout bounds the wait.
  std::mutex mutex;
  std::condition_variable cv;
  bool release = false;
  RestServer slow;
  slow.route("GET", "/kafka-music/charts/top-five", [&](const Request&) {
    std::unique_lock lock(mutex);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return release; });
    return Response::json("[]");
  });
  slow.start("127.0.0.1", 0);
  auto started = std::chrono::steady_clock::now();
  auto late = forward(HostInfo("127.0.0.1", slow.port()), r, std::chrono::milliseconds(300));
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(late.status, 502);
  EXPECT_LT(took, std::chrono::seconds(5));
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  cv.notify_all();
}

}  // namespace
}  // namespace oxbow::streams::rest
