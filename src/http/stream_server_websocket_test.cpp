// WebSocket sessions of the stream server against Beast's websocket client, and raw sockets for
// bad upgrades.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include "http/stream_server_test_util.h"
#include "http/websocket_session.h"

namespace oxbow::http::testing {
namespace {

namespace websocket = boost::beast::websocket;
using asio::ip::tcp;

// Beast's synchronous websocket client on its own io_context.
class WebSocketClient {
 public:
  explicit WebSocketClient(uint16_t port) : ws_(context_) {
    ws_.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  // The handshake's error; `response` holds the server's answer either way (the asynchronous
  // handshake: Beast 1.74's synchronous one drops a refusal's response).
  boost::system::error_code handshake(const std::string& target) {
    boost::system::error_code ec;
    ws_.async_handshake(response, "127.0.0.1", target,
                        [&ec](boost::system::error_code result) { ec = result; });
    context_.run();
    context_.restart();
    return ec;
  }
  // The next message, or empty with `error` set.
  std::string read() {
    boost::beast::flat_buffer buffer;
    ws_.read(buffer, error);
    return error ? std::string() : boost::beast::buffers_to_string(buffer.data());
  }
  void write(const std::string& text) { ws_.write(asio::buffer(text)); }

  websocket::response_type response;
  boost::system::error_code error;
  asio::io_context context_;
  websocket::stream<tcp::socket> ws_;
};

class WebSocketTest : public StreamServerTest {
 protected:
  void start_offering(std::string path) {
    StreamServerOptions options;
    options.offer_websocket = [path](const StreamRequest& request) { return request.path == path; };
    start(std::move(options));
  }
  // Starts a server that accepts every upgrade on /ws (raising accepted_, and gone_ when its
  // client leaves) and returns a client that has done the handshake.
  std::unique_ptr<WebSocketClient> start_watched(StreamServerOptions options) {
    routes_["/ws"] = [this](std::shared_ptr<StreamExchange> exchange) {
      auto session = exchange->accept_websocket();
      session->on_client_gone([this] { gone_.raise(); });
      {
        std::lock_guard lock(session_mutex_);
        session_ = session;
      }
      accepted_.raise();
    };
    options.offer_websocket = [](const StreamRequest& request) { return request.path == "/ws"; };
    start(std::move(options));
    auto client = std::make_unique<WebSocketClient>(server_->port());
    EXPECT_FALSE(client->handshake("/ws"));
    return client;
  }
  std::shared_ptr<WebSocketSession> session() {
    EXPECT_TRUE(accepted_.wait());
    std::lock_guard lock(session_mutex_);
    return session_;
  }

  Signal accepted_, gone_;
  std::mutex session_mutex_;
  std::shared_ptr<WebSocketSession> session_;
};

TEST_F(WebSocketTest, MessagesFlowBothWaysWhileTheServerStreams) {
  Signal echo_seen;
  HandlerThread sender;
  std::string query_seen;
  std::shared_ptr<WebSocketSession> kept;
  routes_["/ws/query"] = [&](std::shared_ptr<StreamExchange> exchange) {
    ASSERT_TRUE(exchange->websocket_requested());
    query_seen = exchange->request().query;
    exchange->set_header("X-Query-Id", "q1");
    auto session = exchange->accept_websocket();
    ASSERT_TRUE(session);
    EXPECT_FALSE(exchange->write("ignored")) << "the exchange is done once upgraded";
    kept = session;
    session->on_message([session](std::string message) { session->send("echo:" + message); });
    sender.start([session, &echo_seen] {
      session->send("row1");
      echo_seen.wait();
      session->send("row2");
    });
  };
  start_offering("/ws/query");
  WebSocketClient client(server_->port());
  ASSERT_FALSE(client.handshake("/ws/query?request=%7B%7D"));
  EXPECT_EQ(client.response.result_int(), 101);
  EXPECT_EQ(client.response["X-Query-Id"], "q1");
  EXPECT_EQ(query_seen, "request=%7B%7D");
  EXPECT_EQ(client.read(), "row1");

  // The server answers pings (Beast does): the pong comes before the echo of what follows.
  bool pong_seen = false;
  client.ws_.control_callback([&](websocket::frame_type kind, boost::beast::string_view) {
    if (kind == websocket::frame_type::pong) pong_seen = true;
  });
  client.ws_.ping("are you there");
  client.write("hello");
  EXPECT_EQ(client.read(), "echo:hello");
  EXPECT_TRUE(pong_seen);
  echo_seen.raise();
  EXPECT_EQ(client.read(), "row2");
  EXPECT_FALSE(kept->client_gone());
}

TEST_F(WebSocketTest, RefusedUpgradeGetsTheHandlersStatus) {
  routes_["/ws/query"] = [](std::shared_ptr<StreamExchange> exchange) {
    exchange->respond(401, "application/json", "{\"message\":\"no\"}");
    EXPECT_FALSE(exchange->accept_websocket()) << "answered already";
  };
  start_offering("/ws/query");
  WebSocketClient client(server_->port());
  EXPECT_EQ(client.handshake("/ws/query"), websocket::error::upgrade_declined);
  EXPECT_EQ(client.response.result_int(), 401);
}

TEST_F(WebSocketTest, UpgradeOnAPathNotOfferedIsAnOrdinaryRequest) {
  routes_["/plain"] = [](std::shared_ptr<StreamExchange> exchange) {
    EXPECT_FALSE(exchange->websocket_requested());
    EXPECT_FALSE(exchange->accept_websocket());
    exchange->respond(200, "text/plain", "plain");
  };
  start_offering("/ws/query");
  WebSocketClient client(server_->port());
  EXPECT_EQ(client.handshake("/plain"), websocket::error::upgrade_declined);
  EXPECT_EQ(client.response.result_int(), 200);
}

TEST_F(WebSocketTest, ClientLeavingIsNoticed) {
  auto client = start_watched({});
  ASSERT_TRUE(accepted_.wait());
  client->ws_.next_layer().close();  // no Close frame: the connection just ends
  ASSERT_TRUE(gone_.wait());
  EXPECT_TRUE(session()->client_gone());
  EXPECT_FALSE(session()->client_close_code());
  EXPECT_FALSE(session()->send("late"));
}

TEST_F(WebSocketTest, ClientCloseFrameIsNoticedWithItsCode) {
  auto client = start_watched({});
  client->ws_.close(websocket::close_reason(websocket::close_code::going_away));
  ASSERT_TRUE(gone_.wait());
  EXPECT_EQ(session()->client_close_code(), uint16_t{1001});
}

TEST_F(WebSocketTest, ServerCloseReachesTheClientWithItsCode) {
  routes_["/ws"] = [](std::shared_ptr<StreamExchange> exchange) {
    auto session = exchange->accept_websocket();
    session->send("last row");
    session->close(4000, "query done");
    EXPECT_FALSE(session->send("after close"));
  };
  start_offering("/ws");
  WebSocketClient client(server_->port());
  ASSERT_FALSE(client.handshake("/ws"));
  EXPECT_EQ(client.read(), "last row");
  EXPECT_EQ(client.read(), "");
  EXPECT_EQ(client.error, websocket::error::closed);
  EXPECT_EQ(client.ws_.reason().code, 4000);
  EXPECT_EQ(client.ws_.reason().reason, "query done");
}

TEST_F(WebSocketTest, UnsentBytesGrowForAClientThatDoesNotRead) {
  Signal backed_up;
  std::atomic<size_t> most_unsent{0};
  HandlerThread sender;
  const size_t target = 4 << 20;
  routes_["/ws"] = [&](std::shared_ptr<StreamExchange> exchange) {
    auto session = exchange->accept_websocket();
    sender.start([session, target, &backed_up, &most_unsent] {
      const std::string message(64 << 10, 'x');
      for (int i = 0; i < 4096 && session->unsent_bytes() < target; ++i) {
        session->send(message);
        most_unsent = std::max<size_t>(most_unsent, session->unsent_bytes());
      }
      backed_up.raise();
    });
  };
  start_offering("/ws");
  WebSocketClient client(server_->port());
  ASSERT_FALSE(client.handshake("/ws"));
  ASSERT_TRUE(backed_up.wait());
  EXPECT_GE(most_unsent.load(), target);
}

TEST_F(WebSocketTest, MalformedUpgradesGet400Or426AndNoHandler) {
  bool handled = false;
  routes_["/ws"] = [&](std::shared_ptr<StreamExchange> exchange) {
    handled = true;
    exchange->respond(200, "text/plain", "");
  };
  start_offering("/ws");
  const std::string head = "Host: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n";
  const std::string key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
  EXPECT_TRUE(exchange_raw("GET /ws HTTP/1.1\r\n" + head + "Sec-WebSocket-Version: 13\r\n\r\n")
                  .starts_with("HTTP/1.1 400 "));
  EXPECT_TRUE(exchange_raw("POST /ws HTTP/1.1\r\n" + head + key +
                           "Sec-WebSocket-Version: 13\r\nContent-Length: 2\r\n\r\n{}")
                  .starts_with("HTTP/1.1 400 "));
  EXPECT_TRUE(
      exchange_raw("GET /ws HTTP/1.0\r\n" + head + key + "Sec-WebSocket-Version: 13\r\n\r\n")
          .starts_with("HTTP/1.1 400 "));
  std::string old_version =
      exchange_raw("GET /ws HTTP/1.1\r\n" + head + key + "Sec-WebSocket-Version: 8\r\n\r\n");
  EXPECT_TRUE(old_version.starts_with("HTTP/1.1 426 ")) << old_version;
  EXPECT_NE(old_version.find("Sec-WebSocket-Version: 13\r\n"), std::string::npos);
  EXPECT_FALSE(handled);
}

TEST_F(WebSocketTest, GarbageAfterTheHandshakeEndsTheSession) {
  auto client = start_watched({});
  // A whole frame header with a reserved opcode (3), masked and empty: a protocol error.
  const std::string garbage("\x83\x80\0\0\0\0", 6);
  asio::write(client->ws_.next_layer(), asio::buffer(garbage));
  // Beast fails the connection with a Close frame and waits for the client's end of it.
  EXPECT_EQ(client->read(), "");
  EXPECT_EQ(client->error, websocket::error::closed);
  EXPECT_EQ(client->ws_.reason().code, websocket::close_code::protocol_error);
  ASSERT_TRUE(gone_.wait());
  EXPECT_TRUE(session()->client_gone());
}

TEST_F(WebSocketTest, ServerShutdownEndsOpenSessions) {
  auto client = start_watched({});
  ASSERT_TRUE(accepted_.wait());
  server_->close();
  ASSERT_TRUE(gone_.wait());
  EXPECT_EQ(client->read(), "");
  EXPECT_TRUE(client->error);
}

TEST_F(WebSocketTest, ClientThatAnswersNoPingIsDroppedAfterTheIdleTimeout) {
  StreamServerOptions options;
  options.idle_timeout = std::chrono::milliseconds(100);
  auto client = start_watched(std::move(options));
  // The client never reads, so the server's ping goes unanswered.
  ASSERT_TRUE(gone_.wait());
}

TEST_F(WebSocketTest, MessageOverTheBodyLimitFailsTheSessionWith1009) {
  StreamServerOptions options;
  options.max_body_bytes = 1024;
  auto client = start_watched(std::move(options));
  client->write(std::string(2048, 'x'));
  EXPECT_EQ(client->read(), "");
  // Usually `closed`; now and then Beast's client teardown reports ENOTCONN instead. Either way
  // the Close frame came first.
  EXPECT_TRUE(client->error);
  EXPECT_EQ(client->ws_.reason().code, websocket::close_code::too_big);
  ASSERT_TRUE(gone_.wait());
}

// Node's WebSocket (undici's; behind --experimental-websocket before Node 22), a client that
// shares no code with Beast.
TEST_F(WebSocketTest, NodeClientExchangesMessagesAndSeesTheServersClose) {
  const std::string node = "node --experimental-websocket --no-warnings ";
  if (run_command(node + "-e 'process.stdout.write(typeof WebSocket)' 2>/dev/null") != "function")
    GTEST_SKIP() << "no node with a WebSocket client";
  routes_["/ws/query"] = [](std::shared_ptr<StreamExchange> exchange) {
    auto session = exchange->accept_websocket();
    session->on_message([session](std::string message) {
      session->send("echo:" + message);
      session->close(4000, "done");
    });
    session->send("row1");
  };
  start_offering("/ws/query");
  const std::string script =
      "const ws = new WebSocket(process.argv[1]); const seen = [];"
      "ws.onmessage = (e) => { seen.push(e.data); if (e.data === \"row1\") ws.send(\"hello\"); };"
      "ws.onclose = (e) => console.log(JSON.stringify({seen, code: e.code, reason: e.reason}));";
  std::string target = "ws://127.0.0.1:" + std::to_string(server_->port()) + "/ws/query?request=x";
  EXPECT_EQ(run_command("timeout 30 " + node + "-e '" + script + "' " + target),
            "{\"seen\":[\"row1\",\"echo:hello\"],\"code\":4000,\"reason\":\"done\"}\n");
}

}  // namespace
}  // namespace oxbow::http::testing
