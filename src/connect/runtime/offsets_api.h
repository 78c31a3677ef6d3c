#pragma once
// KIP-875's offsets of a standalone worker's connectors: a source connector's in the worker's
// offsets file, a sink connector's in its consumer group connect-NAME. Altered and reset only
// while the connector is STOPPED, after the connector's alterOffsets() accepted them, as Connect's
// Worker does.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "connect/runtime/herder.h"
#include "connect/runtime/offsets_body.h"

namespace oxbow::connect::runtime {

// GET /connectors/NAME/offsets; NotFoundException, ConnectException when the group's offsets
// cannot be read.
nlohmann::ordered_json connectorOffsets(Herder& worker, const std::string& name);

// PATCH and DELETE: the text of Connect's Message answer. NotFoundException, BadRequestException
// (not STOPPED, a sink offset not in its shape), ConnectException (refused by the connector, the
// group has members, the broker failed).
std::string alterConnectorOffsets(Herder& worker, const std::string& name,
                                  const std::vector<OffsetEntry>& entries);
std::string resetConnectorOffsets(Herder& worker, const std::string& name);

}  // namespace oxbow::connect::runtime
