#pragma once
// Random identifiers in the shape Kafka gives its Uuid.toString: 22 characters of URL-safe base64.
// Cluster ids and the member ids the group coordinator hands out look so.
#include <string>

namespace oxbow {

std::string random_base64_id();

}  // namespace oxbow
