#include "sql/server/inserts_stream.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <optional>
#include <thread>
#include <variant>

#include <nlohmann/json.hpp>

#include "http/stream_server.h"
#include "sql/serde/schema_registry.h"
#include "sql/server/entities.h"
#include "sql/server/insert_rows.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr const char* kServerErrorText =
    "Error in processing inserts. Check server logs for details.";
constexpr const char* kDelimited = "application/vnd.ksqlapi.delimited.v1";
constexpr int kPollMs = 100;
constexpr int kQueueFullWaitMs = 10;
constexpr std::chrono::milliseconds kWaitAtShutdown{30'000};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Refusal {
  int code;
  std::string message;
};

// The target of the request's arguments, copied (the catalog may change while rows come), or
// why ksqlDB refuses it (InsertsStreamEndpoint: tables are taken as well as streams).
std::variant<DataSource, Refusal> target_of(KsqlResource& ksql, std::string_view args) {
  json request = json::parse(args, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    return Refusal{kBadRequest, "Invalid JSON in request: the arguments are not a JSON object"};
  auto target = request.find("target");
  if (target == request.end() || !target->is_string())
    return Refusal{kBadRequest, "Invalid JSON in request: Missing required property 'target'"};
  if (auto p = request.find("properties"); p != request.end() && !p->is_object() && !p->is_null())
    return Refusal{kBadRequest, "Invalid JSON in request: 'properties' is not a JSON object"};
  const std::string name = identifier_text(target->get<std::string>());
  std::variant<DataSource, Refusal> out =
      Refusal{kBadStatement, "Cannot insert values into an unknown stream/table: " + name};
  ksql.read_engine([&](const Engine& engine) {
    const DataSource* source = engine.catalog().find_source(name);
    if (!source) return;
    if (source->window)
      out = Refusal{kBadStatement, "Cannot insert values into windowed stream/table"};
    else if (source->read_only)
      out = Refusal{kBadStatement, "Cannot insert values into read-only topic: " + source->topic};
    else
      out = *source;
  });
  return out;
}

}  // namespace

// One request: its body's lines in, its acks out.
class InsertsStream : public std::enable_shared_from_this<InsertsStream> {
 public:
  InsertsStream(std::shared_ptr<http::StreamExchange> exchange, KsqlResource& ksql,
                const InsertsSettings& settings)
      : exchange_(std::move(exchange)), ksql_(ksql), settings_(settings) {
    json_array_ =
        exchange_->request().header("accept").find("application/json") != std::string_view::npos;
  }
  ~InsertsStream() {
    if (producer_) rd_kafka_destroy(producer_);
  }

  // A piece of the body, on the server's handler threads, one at a time and in order.
  void body(const std::string& piece, bool last) {
    partial_ += piece;
    for (size_t end; (end = partial_.find('\n')) != std::string::npos;) {
      line(std::string_view(partial_).substr(0, end));
      partial_.erase(0, end + 1);
    }
    if (!last) return;
    if (!partial_.empty()) line(partial_);
    partial_.clear();
    if (!started_) {
      started_ = true;
      RestResponse r = generic_error(400, kBadRequest, "Invalid JSON in request: no arguments");
      exchange_->respond(r.status, "application/json", std::move(r.body));
    }
    std::lock_guard lock(mutex_);
    input_ended_ = true;
    if (!producer_) ended_ = true;  // refused, or no arguments at all
    end_if_done();
  }

  void stop() {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    ended_ = true;
    cv_.notify_all();
  }

  bool wait(int timeout_ms) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                        [this] { return thread_done_ || (ended_ && !thread_started_); });
  }

 private:
  struct Delivery {
    InsertsStream* stream;
    int64_t seq;
  };

  static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
    auto* d = static_cast<Delivery*>(m->_private);
    d->stream->delivered(d->seq, m->err);
    delete d;
  }

  void line(std::string_view text) {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) return;
    if (!started_) return start(text);
    {
      std::lock_guard lock(mutex_);
      if (ended_ || error_) return;  // the response is over, or ends with an error
    }
    insert(next_seq_++, text);
  }

  void start(std::string_view args) {
    started_ = true;
    auto target = target_of(ksql_, args);
    if (auto* refusal = std::get_if<Refusal>(&target)) {
      RestResponse r = generic_error(400, refusal->code, refusal->message);
      exchange_->respond(r.status, "application/json", std::move(r.body));
      std::lock_guard lock(mutex_);
      ended_ = true;
      return;
    }
    try {
      SchemaRegistryScope registry(settings_.registry_url);
      rows_ = std::make_unique<InsertRows>(std::get<DataSource>(target));
      producer_ = new_kafka_client(RD_KAFKA_PRODUCER, settings_.client,
                                   {{"acks", "all"}, {"enable.idempotence", "true"}}, on_delivery);
    } catch (const std::exception& e) {
      RestResponse r = generic_error(400, kBadStatement, e.what());
      exchange_->respond(r.status, "application/json", std::move(r.body));
      std::lock_guard lock(mutex_);
      ended_ = true;
      return;
    }
    exchange_->set_status(200);
    exchange_->set_header("content-type", json_array_ ? "application/json" : kDelimited);
    exchange_->write("");  // the head now: an error later is a line of the body
    {
      std::lock_guard lock(mutex_);
      thread_started_ = true;
    }
    std::thread([self = shared_from_this()] { self->poll(); }).detach();
  }

  void insert(int64_t seq, std::string_view text) {
    json row = json::parse(text, nullptr, false);
    if (row.is_discarded() || !row.is_object())
      return fail(seq, kBadRequest, "Invalid JSON in inserts stream");
    InsertedRecord record;
    try {
      SchemaRegistryScope registry(settings_.registry_url);
      record = rows_->record(row, now_ms());
    } catch (const InsertRowError& e) {
      return fail(seq, kBadRequest, e.what());
    } catch (const std::exception& e) {
      spdlog::warn("sql-server: /inserts-stream row {}: {}", seq, e.what());
      return fail(seq, kServerError, kServerErrorText);
    }
    {
      std::lock_guard lock(mutex_);
      ++outstanding_;
    }
    rd_kafka_resp_err_t err;
    auto* delivery = new Delivery{this, seq};
    const char* key = record.key ? record.key->data() : nullptr;
    const size_t key_size = record.key ? record.key->size() : 0;
    while ((err = rd_kafka_producev(
                producer_, RD_KAFKA_V_TOPIC(record.topic.c_str()), RD_KAFKA_V_KEY(key, key_size),
                RD_KAFKA_V_VALUE(record.value.data(), record.value.size()),
                RD_KAFKA_V_TIMESTAMP(record.timestamp), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_OPAQUE(delivery), RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL &&
           !stopped())
      // The poller thread drains the queue as the cluster acknowledges.
      std::this_thread::sleep_for(std::chrono::milliseconds(kQueueFullWaitMs));
    if (!err) return;
    delete delivery;
    spdlog::warn("sql-server: /inserts-stream row {}: {}", seq, rd_kafka_err2str(err));
    {
      std::lock_guard lock(mutex_);
      --outstanding_;
    }
    fail(seq, kServerError, kServerErrorText);
  }

  bool stopped() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  // On the poller thread.
  void delivered(int64_t seq, rd_kafka_resp_err_t err) {
    if (err) spdlog::warn("sql-server: /inserts-stream row {}: {}", seq, rd_kafka_err2str(err));
    std::lock_guard lock(mutex_);
    --outstanding_;
    if (err)
      set_error(seq, kServerError, kServerErrorText);
    else if (!ended_)  // rows before an error are still acknowledged
      write_piece("{\"status\":\"ok\",\"seq\":" + std::to_string(seq) + "}");
    end_if_done();
  }

  void fail(int64_t seq, int code, const std::string& message) {
    std::lock_guard lock(mutex_);
    set_error(seq, code, message);
    end_if_done();
  }

  // Under mutex_: the first error ends the response once the rows before it are acknowledged.
  void set_error(int64_t seq, int code, const std::string& message) {
    if (error_ || ended_) return;
    nlohmann::ordered_json e = {{"@type", "InsertError"},
                                {"error_code", code},
                                {"message", message},
                                {"status", "error"},
                                {"seq", seq}};
    error_ = e.dump();
  }

  // Under mutex_.
  void write_piece(const std::string& text) {
    if (!json_array_) {
      exchange_->write(text + "\n");
      return;
    }
    exchange_->write((written_ ? "," : "[") + text);
    written_ = true;
  }

  // Under mutex_: after the last ack, the error if any, then the response's end.
  void end_if_done() {
    if (ended_ || outstanding_ > 0 || !(input_ended_ || error_)) return;
    if (error_) write_piece(*error_);
    if (json_array_) exchange_->write(written_ ? "]" : "[]");
    exchange_->finish();
    ended_ = true;
    cv_.notify_all();
  }

  void poll() {
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (stopping_ || (ended_ && outstanding_ == 0)) break;
      }
      rd_kafka_poll(producer_, kPollMs);
    }
    // A request cut short: what is still queued is dropped, its deliveries reported (and freed).
    rd_kafka_purge(producer_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    while (rd_kafka_outq_len(producer_) > 0) rd_kafka_poll(producer_, kPollMs);
    std::lock_guard lock(mutex_);
    thread_done_ = true;
    cv_.notify_all();
  }

  std::shared_ptr<http::StreamExchange> exchange_;
  KsqlResource& ksql_;
  const InsertsSettings& settings_;
  bool json_array_ = false;
  // The body's side, on the handler threads one at a time.
  std::string partial_;  // a line not yet ended
  bool started_ = false;
  int64_t next_seq_ = 0;
  std::unique_ptr<InsertRows> rows_;
  rd_kafka_t* producer_ = nullptr;
  // Shared with the poller thread.
  std::mutex mutex_;
  std::condition_variable cv_;
  int64_t outstanding_ = 0;
  bool input_ended_ = false, ended_ = false, stopping_ = false;
  bool thread_started_ = false, thread_done_ = false;
  std::optional<std::string> error_;
  bool written_ = false;
};

InsertsEndpoint::InsertsEndpoint(KsqlResource& ksql, InsertsSettings settings)
    : ksql_(ksql), settings_(std::move(settings)) {}

InsertsEndpoint::~InsertsEndpoint() {
  close_all();
}

void InsertsEndpoint::handle(std::shared_ptr<http::StreamExchange> exchange) {
  auto stream = std::make_shared<InsertsStream>(exchange, ksql_, settings_);
  {
    std::lock_guard lock(mutex_);
    std::erase_if(open_, [](const auto& weak) { return weak.expired(); });
    open_.push_back(stream);
  }
  exchange->on_client_gone([weak = std::weak_ptr(stream)] {
    if (auto s = weak.lock()) s->stop();
  });
  exchange->on_body(
      [stream](std::string piece, bool last) { stream->body(std::move(piece), last); });
}

void InsertsEndpoint::close_all() {
  std::vector<std::shared_ptr<InsertsStream>> streams;
  {
    std::lock_guard lock(mutex_);
    for (const auto& weak : open_)
      if (auto s = weak.lock()) streams.push_back(std::move(s));
    open_.clear();
  }
  for (auto& s : streams) s->stop();
  // One bound for all: they end in parallel, and a stuck one must not hold up the next ones.
  const auto deadline = std::chrono::steady_clock::now() + kWaitAtShutdown;
  auto ms_until = [](auto until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<int64_t>(0, left.count()));
  };
  for (auto& s : streams)
    if (!s->wait(ms_until(deadline))) spdlog::warn("sql-server: an /inserts-stream did not end");
}

}  // namespace oxbow::sql::server
