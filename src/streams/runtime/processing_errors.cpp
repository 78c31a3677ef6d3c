// Kafka's two built-in processing-exception handlers (KIP-1033).
#include <spdlog/spdlog.h>

#include "oxbow/streams/errors.h"

namespace oxbow::streams {

namespace {

void log_processing_error(const ErrorHandlerContext& context, const std::exception& exception,
                          bool fail) {
  auto level = fail ? spdlog::level::err : spdlog::level::warn;
  spdlog::log(level,
              "{}exception caught during processing: processor node {}, task {}, source topic "
              "'{}', partition {}, offset {}: {}",
              fail ? "" : "skipping the record after an ", context.processorNodeId(),
              context.taskId(), context.topic(), context.partition(), context.offset(),
              exception.what());
}

}  // namespace

ProcessingExceptionHandlerResponse LogAndFailProcessingExceptionHandler(
    const ErrorHandlerContext& context, const Record*, const std::exception& exception) {
  log_processing_error(context, exception, true);
  return ProcessingExceptionHandlerResponse::FAIL;
}

ProcessingExceptionHandlerResponse LogAndContinueProcessingExceptionHandler(
    const ErrorHandlerContext& context, const Record*, const std::exception& exception) {
  log_processing_error(context, exception, false);
  return ProcessingExceptionHandlerResponse::CONTINUE;
}

}  // namespace oxbow::streams
