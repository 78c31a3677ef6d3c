#pragma once
// Lets a coroutine sleep until a log wakes it (new data, fsync done) or a deadline passes.
// wake() may come from any thread; the coroutine runs on a single-threaded io_context, so the
// posted cancel can only run once the coroutine is suspended in wait_until().
#include <atomic>
#include <chrono>
#include <memory>

#include "broker/asio.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

class AsyncWaiter : public storage::Wakeable, public std::enable_shared_from_this<AsyncWaiter> {
 public:
  explicit AsyncWaiter(asio::any_io_executor executor) : timer_(executor) {}

  void wake() override {
    if (woken_.exchange(true)) return;
    asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
  }

  // True when woken, false at the deadline. Re-arms for the next wait.
  asio::awaitable<bool> wait_until(std::chrono::steady_clock::time_point deadline) {
    if (!woken_.load()) {
      timer_.expires_at(deadline);
      boost::system::error_code ec;
      co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return woken_.exchange(false);
  }

 private:
  asio::steady_timer timer_;
  std::atomic<bool> woken_{false};
};

}  // namespace oxbow::broker
