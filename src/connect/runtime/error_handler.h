#pragma once
// Connect's error handling (KIP-298, Kafka's RetryWithToleranceOperator): each stage of a record's
// way through a task (converters, transforms) runs through the handler, which retries retriable
// failures with exponential backoff for up to errors.retry.timeout, reports every failure to the
// connector's reporters (log, dead letter queue), and then either skips the record
// (errors.tolerance=all) or fails the task with "Tolerance exceeded in error handler".
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "connect/runtime/worker_config.h"
#include "oxbow/connect/record.h"

namespace oxbow::connect::runtime {

// Kafka's Stage: where in the pipeline an operation failed (its name is the DLQ header's value).
enum class ErrorStage {
  TASK_POLL,
  TASK_PUT,
  TRANSFORMATION,
  KEY_CONVERTER,
  VALUE_CONVERTER,
  HEADER_CONVERTER,
  KAFKA_PRODUCE,
  KAFKA_CONSUME
};
const char* errorStageName(ErrorStage stage);

// A record as read from Kafka: what a sink's dead letter queue receives.
struct RawRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  std::optional<int64_t> timestamp;
  TimestampType timestampType = TimestampType::NO_TIMESTAMP_TYPE;
};

// One record's processing (Kafka's ProcessingContext): the original record, the stage running
// and the class running it, and the error once a stage failed (later stages are then skipped).
struct ErrorContext {
  std::function<RawRecord()> consumed;   // a sink's record, made only when reported
  const SourceRecord* source = nullptr;  // a source's record
  ErrorStage stage = ErrorStage::TASK_POLL;
  std::string executingClass;
  std::exception_ptr error;
  int attempt = 0;
  bool failed() const { return error != nullptr; }
};

class ErrorReporter {
 public:
  virtual ~ErrorReporter() = default;
  // Ready once the failure is recorded (a dead letter queue's record delivered).
  virtual std::future<void> report(const ErrorContext& context) = 0;
};

// Kafka's task-error-metrics, counted (there is no metrics endpoint yet).
struct ErrorCounts {
  int64_t recordFailures = 0;  // total-record-failures: every failed attempt
  int64_t recordErrors = 0;    // total-record-errors: records that failed for good
  int64_t recordsSkipped = 0;  // total-records-skipped
  int64_t retries = 0;         // total-retries
};

class RetryWithTolerance {
 public:
  static constexpr int64_t RETRIES_DELAY_MIN_MS = 300;
  // Milliseconds now, and a wait of up to that many milliseconds that ends early on stop; both
  // replaceable for tests.
  using Clock = std::function<int64_t()>;
  using Sleep = std::function<void(int64_t)>;

  explicit RetryWithTolerance(ErrorsConfig config, Clock clock = nullptr, Sleep sleep = nullptr);

  void addReporter(std::unique_ptr<ErrorReporter> reporter);
  bool toleratesAll() const { return config_.toleranceAll; }
  const ErrorsConfig& config() const { return config_; }

  // Runs op for the stage: its result, or nullopt when it (or an earlier stage of the context)
  // failed and the failure is tolerated. ConnectException "Tolerance exceeded in error handler"
  // (its cause nested) when not tolerated; "Unhandled exception in error handler" for a
  // non-retriable failure outside converters and transforms.
  // The first attempt runs inline, without the clock or an allocation: records rarely fail, and
  // this runs for every stage of every record. The class name is copied only on a failure.
  template <class T, class Op>
  std::optional<T> execute(ErrorContext& context, ErrorStage stage, std::string_view cls, Op&& op) {
    if (context.failed()) return std::nullopt;
    context.stage = stage;
    context.attempt = 1;
    std::exception_ptr failure;
    try {
      return std::optional<T>(op());
    } catch (...) {
      failure = std::current_exception();
    }
    std::optional<T> result;
    afterFailure(context, cls, failure, [&] { result.emplace(op()); });
    return result;
  }

  // An operation that failed outside the handler (a sink task's errant record): reported, then
  // "Tolerance exceeded in error handler" unless tolerated. Ready when the reporters are done.
  std::future<void> executeFailed(ErrorContext& context, ErrorStage stage, const std::string& cls,
                                  std::exception_ptr error);

  bool withinToleranceLimits() const;
  // Ends a backoff early; later retriable failures are not retried.
  void triggerStop();
  ErrorCounts counts() const;

 private:
  void afterFailure(ErrorContext& context, std::string_view cls, std::exception_ptr failure,
                    const std::function<void()>& retry);
  std::exception_ptr retryUntilDeadline(ErrorContext& context, std::exception_ptr failure,
                                        const std::function<void()>& retry);
  void handleFailure(ErrorContext& context);
  void backoff(int attempt, int64_t deadline);
  std::future<void> report(const ErrorContext& context);
  void markAsFailed();

  ErrorsConfig config_;
  Clock clock_;
  Sleep sleep_;
  std::vector<std::unique_ptr<ErrorReporter>> reporters_;
  mutable std::mutex mutex_;  // errant records may be reported from a task's own threads
  std::condition_variable stopped_;
  std::atomic<bool> stopping_{false};
  int64_t totalFailures_ = 0;
  ErrorCounts counts_;
  std::mt19937_64 random_{std::random_device{}()};
};

// A failure's Kafka class name ("org.apache.kafka.connect.errors.DataException"), message, and
// text as a trace: "message" then "\nCaused by: CLASS: message" per nested cause.
std::string exceptionClassName(std::exception_ptr error);
std::string exceptionMessage(std::exception_ptr error);
std::string exceptionTrace(std::exception_ptr error, bool withClass);

}  // namespace oxbow::connect::runtime
