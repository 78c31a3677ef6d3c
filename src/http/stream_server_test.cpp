// The stream server over HTTP/1.1 against Beast's client reading chunks, and raw sockets for bad
// input.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "http/stream_server_test_util.h"

namespace oxbow::http::testing {
namespace {

namespace bhttp = boost::beast::http;
using asio::ip::tcp;

// --- HTTP/1.1 ---

// Beast's client reading a chunked response, chunk by chunk.
class ChunkReader {
 public:
  explicit ChunkReader(uint16_t port) : socket_(context_) {
    socket_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    // The parser keeps a reference to the callback.
    parser_.on_chunk_body(on_chunk_);
  }
  void send(const std::string& request) { asio::write(socket_, asio::buffer(request)); }
  // Reads until `count` chunks have arrived or the response ended.
  void read_chunks(size_t count) {
    while (chunks_.size() < count && !parser_.is_done()) {
      boost::system::error_code ec;
      bhttp::read_some(socket_, buffer_, parser_, ec);
      if (ec) break;
    }
  }
  const std::vector<std::string>& chunks() const { return chunks_; }
  const bhttp::response<bhttp::empty_body>& head() const { return parser_.get(); }
  bool done() const { return parser_.is_done(); }
  void close() { socket_.close(); }

 private:
  asio::io_context context_;
  tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
  bhttp::response_parser<bhttp::empty_body> parser_;
  std::vector<std::string> chunks_;
  std::function<size_t(uint64_t, boost::beast::string_view, boost::system::error_code&)> on_chunk_ =
      [this](uint64_t, boost::beast::string_view body, boost::system::error_code&) {
        chunks_.emplace_back(body.data(), body.size());
        return body.size();
      };
};

TEST_F(StreamServerTest, Http1StreamsChunksBeforeTheHandlerFinishes) {
  Signal first_seen;
  HandlerThread writer;
  routes_["/stream"] = [&](std::shared_ptr<StreamExchange> exchange) {
    writer.start([exchange, &first_seen] {
      exchange->set_header("Content-Type", "application/json");
      exchange->write("{\"row\":1}");
      first_seen.wait();
      exchange->write("{\"row\":2}");
      exchange->finish();
    });
  };
  start();
  ChunkReader reader(server_->port());
  reader.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  reader.read_chunks(1);
  ASSERT_EQ(reader.chunks(), std::vector<std::string>{"{\"row\":1}"});
  EXPECT_FALSE(reader.done());
  EXPECT_EQ(reader.head()[bhttp::field::transfer_encoding], "chunked");
  EXPECT_EQ(reader.head()[bhttp::field::content_type], "application/json");
  first_seen.raise();
  reader.read_chunks(3);
  writer.join();
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(reader.chunks(), (std::vector<std::string>{"{\"row\":1}", "{\"row\":2}"}));
}

TEST_F(StreamServerTest, Http1WholeResponseHasContentLengthAndKeepsTheConnection) {
  routes_["/whole"] = [](std::shared_ptr<StreamExchange> exchange) {
    exchange->respond(200, "text/plain", "body of " + exchange->request().query);
  };
  start();
  std::string answer = exchange_raw(
      "GET /whole?a=1 HTTP/1.1\r\nHost: x\r\n\r\nGET /whole?b=2 HTTP/1.1\r\nHost: x\r\n"
      "Connection: close\r\n\r\n");
  EXPECT_NE(answer.find("Content-Length: 11\r\n\r\nbody of a=1"), std::string::npos) << answer;
  EXPECT_NE(answer.find("body of b=2"), std::string::npos) << answer;
}

TEST_F(StreamServerTest, Http1ClientLeavingMidStreamIsNoticed) {
  Signal gone, first_written;
  std::shared_ptr<StreamExchange> kept;
  routes_["/stream"] = [&](std::shared_ptr<StreamExchange> exchange) {
    kept = exchange;
    exchange->on_client_gone([&gone] { gone.raise(); });
    exchange->write("first");
    first_written.raise();
  };
  start();
  ChunkReader reader(server_->port());
  reader.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  reader.read_chunks(1);
  ASSERT_EQ(reader.chunks().size(), 1u);
  reader.close();
  ASSERT_TRUE(gone.wait());
  EXPECT_TRUE(kept->client_gone());
  EXPECT_FALSE(kept->write("more"));
  EXPECT_EQ(kept->unsent_bytes(), 0u);
}

// A client that stops reading: the handler sees its writes queue up instead of going out.
TEST_F(StreamServerTest, UnsentBytesGrowForAClientThatDoesNotRead) {
  Signal backed_up;
  std::atomic<size_t> most_unsent{0};
  HandlerThread writer;
  // Socket buffers hold a few MiB at most.
  routes_["/flood"] = flood_route(64 << 10, 4 << 20, backed_up, most_unsent, writer);
  start();
  for (std::string_view opening :
       {"GET /flood HTTP/1.1\r\nHost: x\r\n\r\n", "GET /flood HTTP/1.0\r\n\r\n"}) {
    most_unsent = 0;
    int fd = connect_raw();
    ::send(fd, opening.data(), opening.size(), MSG_NOSIGNAL);
    ASSERT_TRUE(backed_up.wait());
    EXPECT_GE(most_unsent.load(), size_t{4} << 20);
    ::close(fd);
    backed_up.reset();
  }
}

TEST_F(StreamServerTest, Http1StreamedRequestBodyArrivesInPieces) {
  StreamServerOptions options;
  options.stream_request_body = [](const StreamRequest& r) { return r.path == "/inserts"; };
  routes_["/inserts"] = [](std::shared_ptr<StreamExchange> exchange) {
    exchange->on_body([exchange](std::string piece, bool last) {
      if (!piece.empty()) exchange->write("got " + piece + "\n");
      if (last) exchange->finish();
    });
  };
  start(options);
  ChunkReader reader(server_->port());
  reader.send(
      "POST /inserts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nrow1\r\n");
  reader.read_chunks(1);
  ASSERT_EQ(reader.chunks(), std::vector<std::string>{"got row1\n"});
  reader.send("4\r\nrow2\r\n0\r\n\r\n");
  reader.read_chunks(3);
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(reader.chunks(), (std::vector<std::string>{"got row1\n", "got row2\n"}));
}

TEST_F(StreamServerTest, MalformedRequestsGet400AndTheConnectionCloses) {
  start();
  EXPECT_EQ(exchange_raw("NOT HTTP AT ALL\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(exchange_raw("GET / HTTP/1.1\r\nBad Header\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  // Close to HTTP/2's preface but not it.
  EXPECT_EQ(exchange_raw("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(
      exchange_raw("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").substr(0, 12),
      "HTTP/1.1 400");
  std::string huge = "GET / HTTP/1.1\r\nX-Big: " + std::string(64 << 10, 'a') + "\r\n\r\n";
  EXPECT_EQ(exchange_raw(huge).substr(0, 12), "HTTP/1.1 431");
}

TEST_F(StreamServerTest, Http1ExpectContinueIsAnsweredBeforeTheBody) {
  routes_["/echo"] = [](std::shared_ptr<StreamExchange> e) {
    e->respond(200, "text/plain", e->request().body);
  };
  start();
  int fd = connect_raw();
  std::string head = "POST /echo HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n";
  ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  const std::string expected = "HTTP/1.1 100 Continue\r\n\r\n";
  std::string answer;
  char buffer[256];
  while (answer.size() < expected.size() && wait_readable(fd)) {
    ssize_t n = ::recv(fd, buffer, expected.size() - answer.size(), 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  ASSERT_EQ(answer, expected);
  ::send(fd, "body", 4, MSG_NOSIGNAL);
  answer.clear();
  while (answer.find("\r\n\r\nbody") == std::string::npos && wait_readable(fd)) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  EXPECT_EQ(answer.substr(0, 15), "HTTP/1.1 200 OK") << answer;
  EXPECT_NE(answer.find("\r\n\r\nbody"), std::string::npos) << answer;
  ::close(fd);
}

TEST_F(StreamServerTest, OversizedBufferedBodyGets413) {
  StreamServerOptions options;
  options.max_body_bytes = 10;
  routes_["/"] = [](std::shared_ptr<StreamExchange> e) { e->respond(200, "text/plain", "ok"); };
  start(options);
  std::string answer =
      exchange_raw("POST / HTTP/1.1\r\nContent-Length: 20\r\n\r\n01234567890123456789");
  EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 413") << answer;
}

// The types of the HTTP/2 frames in `bytes` (9-byte headers: length, type, flags, stream).
std::vector<int> frame_types(std::string_view bytes) {
  std::vector<int> types;
  while (bytes.size() >= 9) {
    size_t length = (static_cast<uint8_t>(bytes[0]) << 16) | (static_cast<uint8_t>(bytes[1]) << 8) |
                    static_cast<uint8_t>(bytes[2]);
    types.push_back(static_cast<uint8_t>(bytes[3]));
    bytes.remove_prefix(std::min(bytes.size(), 9 + length));
  }
  return types;
}

TEST_F(StreamServerTest, IdleConnectionsAreClosed) {
  StreamServerOptions options;
  options.idle_timeout = std::chrono::milliseconds(100);
  start(options);
  for (std::string_view opening : {"", "GET / HT", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"}) {
    int fd = connect_raw();
    ::send(fd, opening.data(), opening.size(), MSG_NOSIGNAL);
    std::string received;
    char buffer[512];
    ssize_t n = 1;
    while (n > 0 && wait_readable(fd)) {
      n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n > 0) received.append(buffer, static_cast<size_t>(n));
    }
    EXPECT_EQ(n, 0) << "still open after '" << opening << "'";
    if (!opening.empty() && opening[0] == 'P') {
      // HTTP/2 says goodbye: its SETTINGS, then a GOAWAY (type 7).
      auto types = frame_types(received);
      EXPECT_NE(std::find(types.begin(), types.end(), 7), types.end());
    } else {
      EXPECT_EQ(received, "");
    }
    ::close(fd);
  }
}

}  // namespace
}  // namespace oxbow::http::testing
