#include "protocol/errors.h"

namespace oxbow::protocol {

const char* error_name(ErrorCode e) {
  switch (e) {
    case ErrorCode::kUnknownServerError: return "UNKNOWN_SERVER_ERROR";
    case ErrorCode::kNone: return "NONE";
    case ErrorCode::kOffsetOutOfRange: return "OFFSET_OUT_OF_RANGE";
    case ErrorCode::kCorruptMessage: return "CORRUPT_MESSAGE";
    case ErrorCode::kUnknownTopicOrPartition: return "UNKNOWN_TOPIC_OR_PARTITION";
    case ErrorCode::kInvalidFetchSize: return "INVALID_FETCH_SIZE";
    case ErrorCode::kLeaderNotAvailable: return "LEADER_NOT_AVAILABLE";
    case ErrorCode::kNotLeaderOrFollower: return "NOT_LEADER_OR_FOLLOWER";
    case ErrorCode::kRequestTimedOut: return "REQUEST_TIMED_OUT";
    case ErrorCode::kMessageTooLarge: return "MESSAGE_TOO_LARGE";
    case ErrorCode::kOffsetMetadataTooLarge: return "OFFSET_METADATA_TOO_LARGE";
    case ErrorCode::kNetworkException: return "NETWORK_EXCEPTION";
    case ErrorCode::kCoordinatorLoadInProgress: return "COORDINATOR_LOAD_IN_PROGRESS";
    case ErrorCode::kCoordinatorNotAvailable: return "COORDINATOR_NOT_AVAILABLE";
    case ErrorCode::kNotCoordinator: return "NOT_COORDINATOR";
    case ErrorCode::kInvalidTopicException: return "INVALID_TOPIC_EXCEPTION";
    case ErrorCode::kRecordListTooLarge: return "RECORD_LIST_TOO_LARGE";
    case ErrorCode::kNotEnoughReplicas: return "NOT_ENOUGH_REPLICAS";
    case ErrorCode::kInvalidRequiredAcks: return "INVALID_REQUIRED_ACKS";
    case ErrorCode::kIllegalGeneration: return "ILLEGAL_GENERATION";
    case ErrorCode::kInconsistentGroupProtocol: return "INCONSISTENT_GROUP_PROTOCOL";
    case ErrorCode::kInvalidGroupId: return "INVALID_GROUP_ID";
    case ErrorCode::kUnknownMemberId: return "UNKNOWN_MEMBER_ID";
    case ErrorCode::kInvalidSessionTimeout: return "INVALID_SESSION_TIMEOUT";
    case ErrorCode::kRebalanceInProgress: return "REBALANCE_IN_PROGRESS";
    case ErrorCode::kInvalidCommitOffsetSize: return "INVALID_COMMIT_OFFSET_SIZE";
    case ErrorCode::kTopicAuthorizationFailed: return "TOPIC_AUTHORIZATION_FAILED";
    case ErrorCode::kGroupAuthorizationFailed: return "GROUP_AUTHORIZATION_FAILED";
    case ErrorCode::kClusterAuthorizationFailed: return "CLUSTER_AUTHORIZATION_FAILED";
    case ErrorCode::kInvalidTimestamp: return "INVALID_TIMESTAMP";
    case ErrorCode::kUnsupportedSaslMechanism: return "UNSUPPORTED_SASL_MECHANISM";
    case ErrorCode::kIllegalSaslState: return "ILLEGAL_SASL_STATE";
    case ErrorCode::kUnsupportedVersion: return "UNSUPPORTED_VERSION";
    case ErrorCode::kTopicAlreadyExists: return "TOPIC_ALREADY_EXISTS";
    case ErrorCode::kInvalidPartitions: return "INVALID_PARTITIONS";
    case ErrorCode::kInvalidReplicationFactor: return "INVALID_REPLICATION_FACTOR";
    case ErrorCode::kInvalidReplicaAssignment: return "INVALID_REPLICA_ASSIGNMENT";
    case ErrorCode::kInvalidConfig: return "INVALID_CONFIG";
    case ErrorCode::kNotController: return "NOT_CONTROLLER";
    case ErrorCode::kInvalidRequest: return "INVALID_REQUEST";
    case ErrorCode::kUnsupportedForMessageFormat: return "UNSUPPORTED_FOR_MESSAGE_FORMAT";
    case ErrorCode::kPolicyViolation: return "POLICY_VIOLATION";
    case ErrorCode::kOutOfOrderSequenceNumber: return "OUT_OF_ORDER_SEQUENCE_NUMBER";
    case ErrorCode::kDuplicateSequenceNumber: return "DUPLICATE_SEQUENCE_NUMBER";
    case ErrorCode::kInvalidProducerEpoch: return "INVALID_PRODUCER_EPOCH";
    case ErrorCode::kInvalidTxnState: return "INVALID_TXN_STATE";
    case ErrorCode::kInvalidProducerIdMapping: return "INVALID_PRODUCER_ID_MAPPING";
    case ErrorCode::kInvalidTransactionTimeout: return "INVALID_TRANSACTION_TIMEOUT";
    case ErrorCode::kConcurrentTransactions: return "CONCURRENT_TRANSACTIONS";
    case ErrorCode::kTransactionCoordinatorFenced: return "TRANSACTION_COORDINATOR_FENCED";
    case ErrorCode::kTransactionalIdAuthorizationFailed: return "TRANSACTIONAL_ID_AUTHORIZATION_FAILED";
    case ErrorCode::kSecurityDisabled: return "SECURITY_DISABLED";
    case ErrorCode::kOperationNotAttempted: return "OPERATION_NOT_ATTEMPTED";
    case ErrorCode::kKafkaStorageError: return "KAFKA_STORAGE_ERROR";
    case ErrorCode::kLogDirNotFound: return "LOG_DIR_NOT_FOUND";
    case ErrorCode::kSaslAuthenticationFailed: return "SASL_AUTHENTICATION_FAILED";
    case ErrorCode::kUnknownProducerId: return "UNKNOWN_PRODUCER_ID";
    case ErrorCode::kReassignmentInProgress: return "REASSIGNMENT_IN_PROGRESS";
    case ErrorCode::kNonEmptyGroup: return "NON_EMPTY_GROUP";
    case ErrorCode::kGroupIdNotFound: return "GROUP_ID_NOT_FOUND";
    case ErrorCode::kFetchSessionIdNotFound: return "FETCH_SESSION_ID_NOT_FOUND";
    case ErrorCode::kInvalidFetchSessionEpoch: return "INVALID_FETCH_SESSION_EPOCH";
    case ErrorCode::kListenerNotFound: return "LISTENER_NOT_FOUND";
    case ErrorCode::kTopicDeletionDisabled: return "TOPIC_DELETION_DISABLED";
    case ErrorCode::kFencedLeaderEpoch: return "FENCED_LEADER_EPOCH";
    case ErrorCode::kUnknownLeaderEpoch: return "UNKNOWN_LEADER_EPOCH";
    case ErrorCode::kUnsupportedCompressionType: return "UNSUPPORTED_COMPRESSION_TYPE";
    case ErrorCode::kStaleBrokerEpoch: return "STALE_BROKER_EPOCH";
    case ErrorCode::kOffsetNotAvailable: return "OFFSET_NOT_AVAILABLE";
    case ErrorCode::kMemberIdRequired: return "MEMBER_ID_REQUIRED";
    case ErrorCode::kPreferredLeaderNotAvailable: return "PREFERRED_LEADER_NOT_AVAILABLE";
    case ErrorCode::kGroupMaxSizeReached: return "GROUP_MAX_SIZE_REACHED";
    case ErrorCode::kFencedInstanceId: return "FENCED_INSTANCE_ID";
    case ErrorCode::kEligibleLeadersNotAvailable: return "ELIGIBLE_LEADERS_NOT_AVAILABLE";
    case ErrorCode::kElectionNotNeeded: return "ELECTION_NOT_NEEDED";
    case ErrorCode::kNoReassignmentInProgress: return "NO_REASSIGNMENT_IN_PROGRESS";
    case ErrorCode::kGroupSubscribedToTopic: return "GROUP_SUBSCRIBED_TO_TOPIC";
    case ErrorCode::kInvalidRecord: return "INVALID_RECORD";
    case ErrorCode::kUnstableOffsetCommit: return "UNSTABLE_OFFSET_COMMIT";
    case ErrorCode::kThrottlingQuotaExceeded: return "THROTTLING_QUOTA_EXCEEDED";
    case ErrorCode::kProducerFenced: return "PRODUCER_FENCED";
    case ErrorCode::kResourceNotFound: return "RESOURCE_NOT_FOUND";
    case ErrorCode::kDuplicateResource: return "DUPLICATE_RESOURCE";
    case ErrorCode::kUnacceptableCredential: return "UNACCEPTABLE_CREDENTIAL";
    case ErrorCode::kInconsistentVoterSet: return "INCONSISTENT_VOTER_SET";
    case ErrorCode::kInvalidUpdateVersion: return "INVALID_UPDATE_VERSION";
    case ErrorCode::kFeatureUpdateFailed: return "FEATURE_UPDATE_FAILED";
    case ErrorCode::kPrincipalDeserializationFailure: return "PRINCIPAL_DESERIALIZATION_FAILURE";
    case ErrorCode::kSnapshotNotFound: return "SNAPSHOT_NOT_FOUND";
    case ErrorCode::kPositionOutOfRange: return "POSITION_OUT_OF_RANGE";
    case ErrorCode::kUnknownTopicId: return "UNKNOWN_TOPIC_ID";
    case ErrorCode::kDuplicateBrokerRegistration: return "DUPLICATE_BROKER_REGISTRATION";
    case ErrorCode::kBrokerIdNotRegistered: return "BROKER_ID_NOT_REGISTERED";
    case ErrorCode::kInconsistentTopicId: return "INCONSISTENT_TOPIC_ID";
    case ErrorCode::kInconsistentClusterId: return "INCONSISTENT_CLUSTER_ID";
    case ErrorCode::kTransactionalIdNotFound: return "TRANSACTIONAL_ID_NOT_FOUND";
    default: return "ERROR";
  }
}

}  // namespace oxbow::protocol
