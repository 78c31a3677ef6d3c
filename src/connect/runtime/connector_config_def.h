#pragma once
// Connect's own connector configs (ConnectorConfig, SinkConnectorConfig): what the validate
// endpoint checks and lists before the connector's, and what the runtime reads of errors.*.
#include <vector>

#include "common/properties.h"
#include "connect/runtime/worker_config.h"
#include "oxbow/connect/config_def.h"

namespace oxbow::connect::runtime {

// name, connector.class, tasks.max, a sink's topics and topics.regex, the converters,
// transforms, predicates, and the "Error Handling" group (a sink's with its dead letter queue).
ConfigDef connectorConfigDef(ConnectorKind kind);

// SinkConnectorConfig.validate's checks: exactly one of topics and topics.regex, and a dead
// letter queue topic that the connector does not consume; added to the values they concern.
void sinkConfigErrors(const Properties& config, std::vector<ConfigValue>& values);

// The errors.* configs of a connector; ConfigException with Kafka's message for a bad one
// ("Invalid value x for configuration errors.tolerance: String must be one of: none, all").
ErrorsConfig parseErrorsConfig(const Properties& props, ConnectorKind kind);

}  // namespace oxbow::connect::runtime
