#include "protocol/errors.h"

namespace oxbow::protocol {

const char* error_name(ErrorCode e) {
  switch (e) {
    case ErrorCode::kNone: return "NONE";
    case ErrorCode::kOffsetOutOfRange: return "OFFSET_OUT_OF_RANGE";
    case ErrorCode::kCorruptMessage: return "CORRUPT_MESSAGE";
    case ErrorCode::kUnknownTopicOrPartition: return "UNKNOWN_TOPIC_OR_PARTITION";
    case ErrorCode::kMessageTooLarge: return "MESSAGE_TOO_LARGE";
    case ErrorCode::kInvalidTopicException: return "INVALID_TOPIC_EXCEPTION";
    case ErrorCode::kUnsupportedVersion: return "UNSUPPORTED_VERSION";
    case ErrorCode::kTopicAlreadyExists: return "TOPIC_ALREADY_EXISTS";
    case ErrorCode::kInvalidPartitions: return "INVALID_PARTITIONS";
    case ErrorCode::kInvalidReplicationFactor: return "INVALID_REPLICATION_FACTOR";
    case ErrorCode::kInvalidConfig: return "INVALID_CONFIG";
    case ErrorCode::kInvalidRequest: return "INVALID_REQUEST";
    case ErrorCode::kInvalidRecord: return "INVALID_RECORD";
    case ErrorCode::kUnsupportedForMessageFormat: return "UNSUPPORTED_FOR_MESSAGE_FORMAT";
    case ErrorCode::kKafkaStorageError: return "KAFKA_STORAGE_ERROR";
    default: return "ERROR";
  }
}

}  // namespace oxbow::protocol
