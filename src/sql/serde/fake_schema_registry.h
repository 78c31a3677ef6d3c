#pragma once
// For tests only: the registry library's in-process fake registry, for SQL tests beyond serde/
// (the engine's inference tests) that reach the registry through the formats' layer.
#include "registry/serde/fake_registry.h"

namespace oxbow::sql::testing {
using FakeSchemaRegistry = registry::testing::FakeRegistry;
}  // namespace oxbow::sql::testing
