// KIP-618's checks, settings and fencing for a distributed worker's source tasks.
#include "connect/runtime/distributed/exactly_once.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include "connect/runtime/distributed/kafka_offset_store.h"
#include "connect/runtime/herder.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect::runtime::distributed {

namespace {

std::string property(const Properties& props, const std::string& name,
                     const std::string& fallback) {
  auto found = props.find(name);
  return found == props.end() ? fallback : ascii_lower(std::string(trim(found->second)));
}

SourceTask::TransactionBoundary boundaryOf(const Properties& props) {
  auto found = props.find(std::string(SourceTask::TRANSACTION_BOUNDARY_CONFIG));
  if (found == props.end()) return SourceTask::DEFAULT_TRANSACTION_BOUNDARY;
  try {
    return SourceTask::transactionBoundaryFromProperty(found->second);
  } catch (const ConnectException&) {
    throw BadRequestException("Invalid value " + found->second +
                              " for configuration transaction.boundary: String must be one of: "
                              "poll, interval, connector");
  }
}

std::unique_ptr<SourceConnector> sourceConnector(const ConnectorPlugin& plugin) {
  std::unique_ptr<Connector> connector = plugin.create();
  auto* source = dynamic_cast<SourceConnector*>(connector.get());
  if (source == nullptr) return nullptr;
  connector.release();
  return std::unique_ptr<SourceConnector>(source);
}

}  // namespace

std::string transactionalId(const DistributedConfig& config, const std::string& connector,
                            int task) {
  return config.groupId + "-" + connector + "-" + std::to_string(task);
}

std::optional<SourceTransactions> sourceTransactions(const DistributedConfig& config,
                                                     const ConnectorPlugin& plugin,
                                                     const Properties& props, int task) {
  if (!config.exactlyOnceSource || plugin.type != PluginType::SOURCE) return std::nullopt;
  auto name = props.find("name");
  std::string connector = name == props.end() ? "" : name->second;
  SourceTransactions transactions;
  transactions.transactionalId = transactionalId(config, connector, task);
  transactions.boundary = boundaryOf(props);
  transactions.intervalMs = config.worker.offsetFlushIntervalMs;
  if (props.contains("transaction.boundary.interval.ms")) {
    transactions.intervalMs = longConfig(props, "transaction.boundary.interval.ms", 0, 0);
  }
  transactions.offsetsTopic = config.offsetTopic.name;
  transactions.offsetKey = [connector](const ValueMap& partition) {
    return offset_records::key(connector, partition);
  };
  transactions.offsetValue = [](const ValueMap& offset) { return offset_records::value(offset); };
  return transactions;
}

void checkExactlyOnce(const DistributedConfig& config, const ConnectorPlugin& plugin,
                      const Properties& props) {
  if (!config.exactlyOnceSource || plugin.type != PluginType::SOURCE) return;
  std::string support = property(props, "exactly.once.support", "requested");
  if (support != "requested" && support != "required") {
    throw BadRequestException("Invalid value " + support +
                              " for configuration exactly.once.support: String must be one of: "
                              "requested, required");
  }
  SourceTask::TransactionBoundary boundary = boundaryOf(props);
  std::unique_ptr<SourceConnector> connector = sourceConnector(plugin);
  if (!connector) return;
  Props connectorConfig(props.begin(), props.end());
  if (support == "required" &&
      connector->exactlyOnceSupport(connectorConfig) != ExactlyOnceSupport::SUPPORTED) {
    throw BadRequestException(
        "The connector does not support exactly-once semantics with the provided configuration "
        "(exactly.once.support=required)");
  }
  if (boundary == SourceTask::TransactionBoundary::CONNECTOR &&
      connector->canDefineTransactionBoundaries(connectorConfig) !=
          ConnectorTransactionBoundaries::SUPPORTED) {
    throw BadRequestException(
        "The connector does not support connector-defined transaction boundaries with the given "
        "configuration (transaction.boundary=connector)");
  }
}

void fenceTasks(const DistributedConfig& config, const std::string& connector, int from, int to) {
  for (int task = from; task < to; ++task) {
    std::string id = transactionalId(config, connector, task);
    char error[512];
    rd_kafka_conf_t* conf = clientConfig(
        {{"bootstrap.servers", config.worker.bootstrapServers}, {"transactional.id", id}},
        config.worker.producerOverrides);
    rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (producer == nullptr) {
      rd_kafka_conf_destroy(conf);
      throw ConnectException("Could not fence task " + id + ": " + error);
    }
    // Initializing a producer with the id bumps its epoch: the old one's writes are refused.
    rd_kafka_error_t* failed = rd_kafka_init_transactions(producer, 30'000);
    rd_kafka_destroy(producer);
    if (failed != nullptr) {
      std::string text = rd_kafka_error_string(failed);
      rd_kafka_error_destroy(failed);
      throw ConnectException("Could not fence task " + id + ": " + text);
    }
    spdlog::info("connect: fenced the producer of removed task {}", id);
  }
}

}  // namespace oxbow::connect::runtime::distributed
