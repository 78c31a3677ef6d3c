// The stream server over HTTP/2: nghttp2's client session on a plain socket (so that each DATA
// frame is seen), and curl for prior knowledge and the h2c upgrade.
#include <cstdio>
#include <deque>
#include <fstream>

#include <nghttp2/nghttp2.h>

#include "http/stream_server_test_util.h"

namespace oxbow::http::testing {
namespace {

// A blocking HTTP/2 client: requests submitted, then pump_until() exchanges frames until a
// condition holds. Response bodies are kept frame by frame.
class Http2Client {
 public:
  struct Stream {
    int status = 0;
    std::vector<std::string> frames;  // one entry per DATA frame
    std::string partial;              // the DATA frame being received
    std::deque<std::string> to_send;  // request body pieces not yet sent
    bool body_ended = true, closed = false;
    uint32_t error_code = 0;
  };

  explicit Http2Client(int fd) : fd_(fd) {
    nghttp2_session_callbacks* callbacks;
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_header_callback(
        callbacks,
        [](nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_length,
           const uint8_t* value, size_t value_length, uint8_t, void* user) {
          if (std::string_view(reinterpret_cast<const char*>(name), name_length) == ":status")
            self(user).streams_[frame->hd.stream_id].status =
                std::stoi(std::string(reinterpret_cast<const char*>(value), value_length));
          return 0;
        });
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        callbacks,
        [](nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t length, void* user) {
          self(user).streams_[id].partial.append(reinterpret_cast<const char*>(data), length);
          return 0;
        });
    nghttp2_session_callbacks_set_on_frame_recv_callback(
        callbacks, [](nghttp2_session*, const nghttp2_frame* frame, void* user) {
          if (frame->hd.type == NGHTTP2_DATA && frame->hd.length > 0) {
            auto& stream = self(user).streams_[frame->hd.stream_id];
            stream.frames.push_back(std::move(stream.partial));
            stream.partial.clear();
          }
          return 0;
        });
    nghttp2_session_callbacks_set_on_stream_close_callback(
        callbacks, [](nghttp2_session*, int32_t id, uint32_t error_code, void* user) {
          auto& stream = self(user).streams_[id];
          stream.closed = true;
          stream.error_code = error_code;
          return 0;
        });
    nghttp2_session_client_new(&session_, callbacks, this);
    nghttp2_session_callbacks_del(callbacks);
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  ~Http2Client() {
    nghttp2_session_del(session_);
    ::close(fd_);
  }

  // With `streamed_body`, the body is sent later through send_body().
  // `extra` is one more header (name, value), or empty names for none.
  int32_t request(const std::string& method, const std::string& path, bool streamed_body = false,
                  const std::pair<std::string, std::string>& extra = {}) {
    const std::string scheme = "http", authority = "localhost";
    std::vector<nghttp2_nv> fields = {field(":method", method), field(":path", path),
                                      field(":scheme", scheme), field(":authority", authority)};
    if (!extra.first.empty()) fields.push_back(field(extra.first.c_str(), extra.second));
    nghttp2_data_provider provider{};
    provider.read_callback = read_body;
    int32_t id = nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(),
                                        streamed_body ? &provider : nullptr, nullptr);
    streams_[id].body_ended = !streamed_body;
    return id;
  }
  void send_body(int32_t id, std::string piece, bool last) {
    auto& stream = streams_[id];
    stream.to_send.push_back(std::move(piece));
    stream.body_ended = last;
    nghttp2_session_resume_data(session_, id);
  }
  void reset(int32_t id) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  }
  Stream& stream(int32_t id) { return streams_[id]; }

  // Sends what is queued and reads until `done` holds; false when the connection closed first.
  bool pump_until(const std::function<bool()>& done) {
    while (true) {
      flush();
      if (done()) return true;
      if (!wait_readable(fd_)) return false;
      uint8_t buffer[16 << 10];
      ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return done();
      if (nghttp2_session_mem_recv(session_, buffer, static_cast<size_t>(n)) < 0) return false;
    }
  }
  void flush() {
    const uint8_t* data;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(session_, &data)) > 0)
      ::send(fd_, data, static_cast<size_t>(n), MSG_NOSIGNAL);
  }

 private:
  static Http2Client& self(void* user) { return *static_cast<Http2Client*>(user); }
  static nghttp2_nv field(const char* name, const std::string& value) {
    return {reinterpret_cast<uint8_t*>(const_cast<char*>(name)),
            reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), std::strlen(name),
            value.size(), NGHTTP2_NV_FLAG_NONE};
  }
  static ssize_t read_body(nghttp2_session*, int32_t id, uint8_t* buffer, size_t length,
                           uint32_t* flags, nghttp2_data_source*, void* user) {
    auto& stream = self(user).streams_[id];
    if (stream.to_send.empty()) {
      if (!stream.body_ended) return NGHTTP2_ERR_DEFERRED;
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    std::string piece = std::move(stream.to_send.front());
    stream.to_send.pop_front();
    size_t n = std::min(length, piece.size());  // the tests' pieces fit a frame
    std::memcpy(buffer, piece.data(), n);
    if (stream.to_send.empty() && stream.body_ended) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  int fd_;
  nghttp2_session* session_ = nullptr;
  std::map<int32_t, Stream> streams_;
};

TEST_F(StreamServerTest, Http2EachWriteIsADataFrameBeforeTheHandlerFinishes) {
  Signal first_seen;
  HandlerThread writer;
  routes_["/stream"] = [&](std::shared_ptr<StreamExchange> exchange) {
    EXPECT_EQ(exchange->request().protocol, Protocol::http2);
    writer.start([exchange, &first_seen] {
      exchange->write("[{\"header\":1}");
      exchange->write(",{\"row\":1}");
      first_seen.wait();
      exchange->write(",{\"row\":2}]");
      exchange->finish();
    });
  };
  start();
  Http2Client client(connect_raw());
  int32_t id = client.request("POST", "/stream");
  ASSERT_TRUE(client.pump_until([&] { return client.stream(id).frames.size() >= 2; }));
  EXPECT_EQ(client.stream(id).status, 200);
  EXPECT_EQ(client.stream(id).frames,
            (std::vector<std::string>{"[{\"header\":1}", ",{\"row\":1}"}));
  EXPECT_FALSE(client.stream(id).closed);
  first_seen.raise();
  ASSERT_TRUE(client.pump_until([&] { return client.stream(id).closed; }));
  EXPECT_EQ(client.stream(id).frames.size(), 3u);
  EXPECT_EQ(client.stream(id).error_code, 0u);
}

TEST_F(StreamServerTest, Http2ConcurrentStreamsOnOneConnection) {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<StreamExchange>> open;
  auto hold = [&](std::shared_ptr<StreamExchange> exchange) {
    std::lock_guard lock(mutex);
    exchange->write("started " + exchange->request().query);
    open[exchange->request().query] = exchange;
  };
  routes_["/hold"] = hold;
  start();
  Http2Client client(connect_raw());
  int32_t a = client.request("GET", "/hold?a");
  int32_t b = client.request("GET", "/hold?b");
  // Both are being handled at once: each has its first piece out while neither is finished.
  ASSERT_TRUE(client.pump_until(
      [&] { return !client.stream(a).frames.empty() && !client.stream(b).frames.empty(); }));
  {
    std::lock_guard lock(mutex);
    open["b"]->respond(200, "text/plain", " b done");
  }
  ASSERT_TRUE(client.pump_until([&] { return client.stream(b).closed; }));
  EXPECT_FALSE(client.stream(a).closed);
  {
    std::lock_guard lock(mutex);
    open["a"]->respond(200, "text/plain", " a done");
  }
  ASSERT_TRUE(client.pump_until([&] { return client.stream(a).closed; }));
  EXPECT_EQ(client.stream(a).frames, (std::vector<std::string>{"started a", " a done"}));
  EXPECT_EQ(client.stream(b).frames, (std::vector<std::string>{"started b", " b done"}));
}

TEST_F(StreamServerTest, Http2RequestBodyStreamsInPiecesWhileTheResponseStreams) {
  StreamServerOptions options;
  options.stream_request_body = [](const StreamRequest& r) { return r.path == "/inserts"; };
  routes_["/inserts"] = [](std::shared_ptr<StreamExchange> exchange) {
    exchange->on_body([exchange](std::string piece, bool last) {
      if (!piece.empty()) exchange->write("{\"ack\":\"" + piece + "\"}");
      if (last) exchange->finish();
    });
  };
  start(options);
  Http2Client client(connect_raw());
  int32_t id = client.request("POST", "/inserts", true);
  client.send_body(id, "row1", false);
  ASSERT_TRUE(client.pump_until([&] { return client.stream(id).frames.size() == 1; }));
  EXPECT_EQ(client.stream(id).frames[0], "{\"ack\":\"row1\"}");
  client.send_body(id, "row2", false);
  ASSERT_TRUE(client.pump_until([&] { return client.stream(id).frames.size() == 2; }));
  EXPECT_EQ(client.stream(id).frames[1], "{\"ack\":\"row2\"}");
  EXPECT_FALSE(client.stream(id).closed);
  client.send_body(id, "", true);
  ASSERT_TRUE(client.pump_until([&] { return client.stream(id).closed; }));
  EXPECT_EQ(client.stream(id).frames.size(), 2u);
}

TEST_F(StreamServerTest, Http2ResetStreamIsNoticedAndOtherStreamsGoOn) {
  Signal gone;
  std::shared_ptr<StreamExchange> kept;
  routes_["/stream"] = [&](std::shared_ptr<StreamExchange> exchange) {
    kept = exchange;
    exchange->on_client_gone([&gone] { gone.raise(); });
    exchange->write("first");
  };
  routes_["/whole"] = [](std::shared_ptr<StreamExchange> e) {
    e->respond(200, "text/plain", "ok");
  };
  start();
  Http2Client client(connect_raw());
  int32_t id = client.request("GET", "/stream");
  ASSERT_TRUE(client.pump_until([&] { return !client.stream(id).frames.empty(); }));
  client.reset(id);
  client.flush();
  ASSERT_TRUE(gone.wait());
  EXPECT_FALSE(kept->write("more"));
  int32_t other = client.request("GET", "/whole");
  ASSERT_TRUE(client.pump_until([&] { return client.stream(other).closed; }));
  EXPECT_EQ(client.stream(other).frames, std::vector<std::string>{"ok"});
}

TEST_F(StreamServerTest, Http2ConnectionClosedMidStreamIsNoticed) {
  Signal gone;
  routes_["/stream"] = [&](std::shared_ptr<StreamExchange> exchange) {
    exchange->on_client_gone([&gone] { gone.raise(); });
    exchange->write("first");
  };
  start();
  {
    Http2Client client(connect_raw());
    int32_t id = client.request("GET", "/stream");
    ASSERT_TRUE(client.pump_until([&] { return !client.stream(id).frames.empty(); }));
  }
  EXPECT_TRUE(gone.wait());
}

// The client's flow-control window (64 KiB) full: writes wait in the exchange, counted.
TEST_F(StreamServerTest, Http2UnsentBytesGrowBeyondTheClientsWindow) {
  Signal backed_up;
  std::atomic<size_t> most_unsent{0};
  HandlerThread writer;
  routes_["/flood"] = flood_route(16 << 10, 1 << 20, backed_up, most_unsent, writer);
  start();
  Http2Client client(connect_raw());
  int32_t id = client.request("GET", "/flood");
  client.flush();  // the request goes out; nothing more is read
  ASSERT_TRUE(backed_up.wait());
  EXPECT_GE(most_unsent.load(), size_t{1} << 20);
  EXPECT_FALSE(client.stream(id).closed);
}

TEST_F(StreamServerTest, Http2OversizedHeadersAndBodiesAreRefusedPerStream) {
  StreamServerOptions options;
  options.max_body_bytes = 10;
  routes_["/"] = [](std::shared_ptr<StreamExchange> e) { e->respond(200, "text/plain", "ok"); };
  start(options);
  Http2Client client(connect_raw());
  int32_t big_header = client.request("GET", "/", false, {"x-big", std::string(20 << 10, 'a')});
  int32_t big_body = client.request("POST", "/", true);
  client.send_body(big_body, std::string(20, 'b'), true);
  int32_t fine = client.request("GET", "/");
  ASSERT_TRUE(client.pump_until([&] {
    return client.stream(big_header).closed && client.stream(big_body).closed &&
           client.stream(fine).closed;
  }));
  EXPECT_EQ(client.stream(big_header).status, 431);
  EXPECT_EQ(client.stream(big_body).status, 413);
  EXPECT_EQ(client.stream(fine).status, 200);
}

TEST_F(StreamServerTest, Http2GarbageAfterThePrefaceClosesTheConnection) {
  start();
  std::string answer =
      exchange_raw(std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string(64, '\xff'));
  // The server's SETTINGS and then a GOAWAY (frame type 7), and the connection closes.
  EXPECT_NE(answer.find('\x07'), std::string::npos);
}

TEST_F(StreamServerTest, CurlPriorKnowledgeAndH2cUpgrade) {
  if (run_command("curl -V").find("HTTP2") == std::string::npos)
    GTEST_SKIP() << "curl without HTTP/2";
  routes_["/info"] = [](std::shared_ptr<StreamExchange> exchange) {
    exchange->write(exchange->request().protocol == Protocol::http2 ? "h2 " : "h1 ");
    exchange->write(exchange->request().method);
    exchange->finish();
  };
  start();
  EXPECT_EQ(run_command("curl -s --max-time 30 --http2-prior-knowledge " + url("/info")), "h2 GET");
  EXPECT_EQ(run_command("curl -s --max-time 30 --http2 " + url("/info")), "h2 GET");
  EXPECT_EQ(run_command("curl -s --max-time 30 --http1.1 " + url("/info")), "h1 GET");
  // A body keeps an upgrade request on HTTP/1.1.
  EXPECT_EQ(run_command("curl -s --max-time 30 --http2 -d x=1 " + url("/info")), "h1 POST");
}

// Node's http2 client (prior knowledge, as ksqlDB's JavaScript client connects): a request body
// written in two pieces, each acknowledged before the next is sent.
TEST_F(StreamServerTest, NodeHttp2ClientStreamsBothWays) {
  if (run_command("node --version").empty()) GTEST_SKIP() << "no node";
  StreamServerOptions options;
  options.stream_request_body = [](const StreamRequest& r) { return r.path == "/inserts"; };
  routes_["/inserts"] = [](std::shared_ptr<StreamExchange> exchange) {
    exchange->set_header("content-type", "application/json");
    exchange->on_body([exchange](std::string piece, bool last) {
      if (!piece.empty()) exchange->write("{\"ack\":\"" + piece + "\"}");
      if (last) exchange->finish();
    });
  };
  start(options);
  const std::string script = R"(
const http2 = require('http2');
const session = http2.connect(process.argv[2]);
const req = session.request({':method': 'POST', ':path': '/inserts'});
const got = [];
req.write('row1');
req.on('data', d => {
  got.push(d.toString());
  if (got.length === 1) req.end('row2');
});
req.on('end', () => { console.log(got.join('|')); session.close(); });
)";
  const std::string path = ::testing::TempDir() + "stream_server_node_client.js";
  std::ofstream(path) << script;
  std::string out = run_command("node " + path + " " + url("") + " 2>&1");
  EXPECT_EQ(out, "{\"ack\":\"row1\"}|{\"ack\":\"row2\"}\n");
}

}  // namespace
}  // namespace oxbow::http::testing
