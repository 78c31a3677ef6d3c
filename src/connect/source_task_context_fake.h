#pragma once
// For tests of source tasks: a task context whose offset reader answers one committed offset
// (or none) and remembers the partitions it was asked about.
#include <optional>
#include <vector>

#include "oxbow/connect/source.h"

namespace oxbow::connect {

class OneOffsetReader : public OffsetStorageReader {
 public:
  std::optional<ValueMap> offset(const ValueMap& partition) override {
    asked.push_back(partition);
    return committed;
  }
  std::optional<ValueMap> committed;
  std::vector<ValueMap> asked;
};

class FakeSourceContext : public SourceTaskContext {
 public:
  Props configs() const override { return {}; }
  OffsetStorageReader& offsetStorageReader() override { return offsets; }
  OneOffsetReader offsets;
};

}  // namespace oxbow::connect
