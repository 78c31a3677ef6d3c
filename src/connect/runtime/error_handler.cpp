// Retries, tolerance and reporting of a record's failures, as Kafka's RetryWithToleranceOperator.
#include "connect/runtime/error_handler.h"

#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <typeinfo>

#include "oxbow/connect/config_def.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

namespace {

int64_t steadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool isRetriable(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const RetriableException&) {
    return true;
  } catch (...) {
    return false;
  }
}

// Converters' and transforms' failures of any kind may be tolerated; other stages' only when
// retriable (Kafka's TOLERABLE_EXCEPTIONS).
bool toleratedAt(ErrorStage stage, std::exception_ptr error) {
  switch (stage) {
    case ErrorStage::TRANSFORMATION:
    case ErrorStage::KEY_CONVERTER:
    case ErrorStage::VALUE_CONVERTER:
    case ErrorStage::HEADER_CONVERTER:
      return true;
    default:
      break;
  }
  return isRetriable(error);
}

[[noreturn]] void throwWithCause(const std::string& message, std::exception_ptr cause) {
  try {
    std::rethrow_exception(cause);
  } catch (...) {
    std::throw_with_nested(ConnectException(message));
  }
}

std::string demangled(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name != nullptr ? name : type.name();
  std::free(name);
  return out;
}

std::exception_ptr nestedOf(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::nested_exception& nested) {
    return nested.nested_ptr();
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

const char* errorStageName(ErrorStage stage) {
  switch (stage) {
    case ErrorStage::TASK_POLL:
      return "TASK_POLL";
    case ErrorStage::TASK_PUT:
      return "TASK_PUT";
    case ErrorStage::TRANSFORMATION:
      return "TRANSFORMATION";
    case ErrorStage::KEY_CONVERTER:
      return "KEY_CONVERTER";
    case ErrorStage::VALUE_CONVERTER:
      return "VALUE_CONVERTER";
    case ErrorStage::HEADER_CONVERTER:
      return "HEADER_CONVERTER";
    case ErrorStage::KAFKA_PRODUCE:
      return "KAFKA_PRODUCE";
    case ErrorStage::KAFKA_CONSUME:
      return "KAFKA_CONSUME";
  }
  return "UNKNOWN";
}

RetryWithTolerance::RetryWithTolerance(ErrorsConfig config, Clock clock, Sleep sleep)
    : config_(std::move(config)), clock_(std::move(clock)), sleep_(std::move(sleep)) {
  if (!clock_) clock_ = steadyMillis;
  if (!sleep_) {
    sleep_ = [this](int64_t ms) {
      std::unique_lock lock(mutex_);
      stopped_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_.load(); });
    };
  }
}

void RetryWithTolerance::addReporter(std::unique_ptr<ErrorReporter> reporter) {
  std::lock_guard lock(mutex_);
  reporters_.push_back(std::move(reporter));
}

// The first attempt failed with `failure`: a retriable failure is retried until the deadline,
// counted from now, then what still fails is handled.
void RetryWithTolerance::afterFailure(ErrorContext& context, std::string_view cls,
                                      std::exception_ptr failure,
                                      const std::function<void()>& retry) {
  context.executingClass.assign(cls);
  {
    std::lock_guard lock(mutex_);
    ++counts_.recordFailures;
  }
  if (isRetriable(failure)) failure = retryUntilDeadline(context, failure, retry);
  if (!failure) return;
  context.error = failure;
  handleFailure(context);
}

// Null once an attempt succeeds; else the failure that ended the retries (one not retriable, or
// the last when the time is up or the task stops).
std::exception_ptr RetryWithTolerance::retryUntilDeadline(ErrorContext& context,
                                                          std::exception_ptr failure,
                                                          const std::function<void()>& retry) {
  int64_t deadline = config_.retryTimeoutMs >= 0 ? clock_() + config_.retryTimeoutMs : INT64_MAX;
  for (int attempt = 1;; ++attempt) {
    if (clock_() >= deadline || stopping_) return failure;
    backoff(attempt, deadline);
    {
      std::lock_guard lock(mutex_);
      ++counts_.retries;
    }
    context.attempt = attempt + 1;
    try {
      retry();
      return nullptr;
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    ++counts_.recordFailures;
    if (!isRetriable(failure)) return failure;
  }
}

// The failure is reported (logged, sent to the dead letter queue) before the task fails for it,
// as Kafka does.
void RetryWithTolerance::handleFailure(ErrorContext& context) {
  {
    std::lock_guard lock(mutex_);
    ++counts_.recordErrors;
  }
  markAsFailed();
  report(context);
  if (!toleratedAt(context.stage, context.error)) {
    throwWithCause("Unhandled exception in error handler", context.error);
  }
  if (!withinToleranceLimits())
    throwWithCause("Tolerance exceeded in error handler", context.error);
  std::lock_guard lock(mutex_);
  ++counts_.recordsSkipped;
}

std::future<void> RetryWithTolerance::executeFailed(ErrorContext& context, ErrorStage stage,
                                                    const std::string& cls,
                                                    std::exception_ptr error) {
  markAsFailed();
  context.stage = stage;
  context.executingClass = cls;
  context.error = error;
  {
    std::lock_guard lock(mutex_);
    ++counts_.recordFailures;
  }
  std::future<void> done = report(context);
  if (withinToleranceLimits()) return done;
  {
    std::lock_guard lock(mutex_);
    ++counts_.recordErrors;
  }
  throwWithCause("Tolerance exceeded in error handler", error);
}

// Exponential from 300 ms, doubling per attempt; past errors.retry.delay.max.ms a random wait
// up to it, so that tasks do not retry in step; never past the deadline.
void RetryWithTolerance::backoff(int attempt, int64_t deadline) {
  int shift = std::min(attempt - 1, 40);
  int64_t delay = RETRIES_DELAY_MIN_MS << shift;
  if (delay > config_.retryMaxDelayMs) {
    std::uniform_int_distribution<int64_t> jitter(
        0, std::max<int64_t>(config_.retryMaxDelayMs - 1, 0));
    std::lock_guard lock(mutex_);
    delay = jitter(random_);
  }
  int64_t now = clock_();
  if (deadline != INT64_MAX && delay > deadline - now) delay = std::max<int64_t>(0, deadline - now);
  sleep_(delay);
}

std::future<void> RetryWithTolerance::report(const ErrorContext& context) {
  std::vector<std::future<void>> futures;
  {
    std::lock_guard lock(mutex_);
    for (auto& reporter : reporters_) futures.push_back(reporter->report(context));
  }
  // Lazy: waiting for it waits for every reporter, and nothing runs on another thread.
  return std::async(std::launch::deferred, [futures = std::move(futures)]() mutable {
    for (std::future<void>& future : futures) future.get();
  });
}

void RetryWithTolerance::markAsFailed() {
  std::lock_guard lock(mutex_);
  ++totalFailures_;
}

bool RetryWithTolerance::withinToleranceLimits() const {
  std::lock_guard lock(mutex_);
  return config_.toleranceAll || totalFailures_ == 0;
}

void RetryWithTolerance::triggerStop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_.notify_all();
}

ErrorCounts RetryWithTolerance::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

std::string exceptionClassName(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const SchemaBuilderException&) {
    return "org.apache.kafka.connect.errors.SchemaBuilderException";
  } catch (const DataException&) {
    return "org.apache.kafka.connect.errors.DataException";
  } catch (const RetriableException&) {
    return "org.apache.kafka.connect.errors.RetriableException";
  } catch (const ConnectException&) {
    return "org.apache.kafka.connect.errors.ConnectException";
  } catch (const ConfigException&) {
    return "org.apache.kafka.common.config.ConfigException";
  } catch (const std::exception& e) {
    return demangled(typeid(e));
  } catch (...) {
    return "unknown";
  }
}

std::string exceptionMessage(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

std::string exceptionTrace(std::exception_ptr error, bool withClass) {
  std::string trace = (withClass ? exceptionClassName(error) + ": " : "") + exceptionMessage(error);
  for (std::exception_ptr cause = nestedOf(error); cause; cause = nestedOf(cause)) {
    trace += "\nCaused by: " + exceptionClassName(cause) + ": " + exceptionMessage(cause);
  }
  return trace;
}

}  // namespace oxbow::connect::runtime
