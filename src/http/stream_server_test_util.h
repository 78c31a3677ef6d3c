#pragma once
// The stream server's tests' fixture: a server on a free loopback port run by an io thread, its
// routes set by each test, and raw-socket helpers.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "http/stream_server.h"

namespace oxbow::http::testing {

namespace asio = boost::asio;

// Waits never end a test by time; this bound only turns a hang into a failure.
constexpr auto kHangGuard = std::chrono::seconds(30);

// A flag one thread raises and another waits for.
// A thread a handler starts, joined when the test ends: declared after what the thread uses, it
// ends before they do, and its last reference to an exchange or session goes before the fixture
// destroys the server (a detached one could release it after, on a server already gone).
class HandlerThread {
 public:
  ~HandlerThread() { join(); }
  // One more thread (a route may be asked more than once).
  template <class Body>
  void start(Body&& body) {
    std::lock_guard lock(mutex_);
    threads_.emplace_back(std::forward<Body>(body));
  }
  void join() {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      threads.swap(threads_);
    }
    for (std::thread& thread : threads) thread.join();
  }

 private:
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

class Signal {
 public:
  void raise() {
    std::lock_guard lock(mutex_);
    raised_ = true;
    cv_.notify_all();
  }
  void reset() {
    std::lock_guard lock(mutex_);
    raised_ = false;
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kHangGuard, [this] { return raised_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool raised_ = false;
};

// Runs a shell command and returns what it printed.
inline std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

inline bool wait_readable(int fd) {
  pollfd entry{fd, POLLIN, 0};
  return ::poll(&entry, 1, static_cast<int>(kHangGuard.count() * 1000)) == 1;
}

// A route whose handler writes `piece_bytes` pieces from a thread of its own until the exchange
// holds `target` unsent bytes (or 4096 pieces went out: no back-pressure), keeping the largest
// count seen, then raises `backed_up`; the thread is `writer`'s.
inline std::function<void(std::shared_ptr<StreamExchange>)> flood_route(
    size_t piece_bytes, size_t target, Signal& backed_up, std::atomic<size_t>& most_unsent,
    HandlerThread& writer) {
  return [=, &backed_up, &most_unsent, &writer](std::shared_ptr<StreamExchange> exchange) {
    writer.start([=, &backed_up, &most_unsent] {
      const std::string piece(piece_bytes, 'x');
      for (int i = 0; i < 4096 && exchange->unsent_bytes() < target; ++i) {
        exchange->write(piece);
        most_unsent = std::max<size_t>(most_unsent, exchange->unsent_bytes());
      }
      backed_up.raise();
    });
  };
}

class StreamServerTest : public ::testing::Test {
 protected:
  void start(StreamServerOptions options = {}) {
    server_ = std::make_unique<StreamServer>(
        context_,
        [this](std::shared_ptr<StreamExchange> exchange) {
          std::string path = exchange->request().path;
          auto route = routes_.find(path);
          if (route == routes_.end())
            exchange->respond(404, "text/plain", "no route " + path);
          else
            route->second(std::move(exchange));
        },
        std::move(options));
    std::string error;
    ASSERT_TRUE(server_->listen("127.0.0.1", 0, error)) << error;
    io_thread_ = std::thread([this] { context_.run(); });
  }
  void TearDown() override {
    if (server_) server_->close();
    work_.reset();
    context_.stop();
    if (io_thread_.joinable()) io_thread_.join();
    server_.reset();
  }
  // A raw client socket: the request bytes in, the answer until the server closes.
  std::string exchange_raw(std::string_view bytes) {
    int fd = connect_raw();
    ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    std::string answer;
    char buffer[4096];
    while (wait_readable(fd)) {
      ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      answer.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    return answer;
  }
  int connect_raw() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(server_->port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return fd;
  }
  std::string url(std::string_view path) {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + std::string(path);
  }

  asio::io_context context_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ =
      asio::make_work_guard(context_);
  std::thread io_thread_;
  std::unique_ptr<StreamServer> server_;
  std::map<std::string, std::function<void(std::shared_ptr<StreamExchange>)>> routes_;
};

}  // namespace oxbow::http::testing
