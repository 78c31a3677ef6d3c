#pragma once
// The fetch restarter is shared with Connect's sink tasks (rdkafka/fetch_restarter.h).
#include "rdkafka/fetch_restarter.h"

namespace oxbow::streams::detail {
using FetchRestarter = oxbow::rdkafka::FetchRestarter;
}  // namespace oxbow::streams::detail
