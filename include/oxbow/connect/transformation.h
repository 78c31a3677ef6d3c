#pragma once
// Connect's single message transforms and predicates (org.apache.kafka.connect.transforms): a
// Transformation turns a record into another or drops it, a Predicate says whether a transform
// applies. Both are created by Kafka's class names and configured with Kafka's config names; a
// TransformationChain is what a connector's `transforms=` and `predicates=` configs build.
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/connect/config_def.h"
#include "oxbow/connect/record.h"

namespace oxbow::connect {

using TransformConfig = std::map<std::string, std::string>;

class Transformation {
 public:
  virtual ~Transformation() = default;
  // The configs configure() reads (Kafka's Transformation.config()): what Connect's REST API
  // lists for the plugin and checks a connector's config against. None by default.
  virtual ConfigDef config() const { return ConfigDef(); }
  // Reads the transform's configs; ConfigException for a missing or bad one.
  virtual void configure(const TransformConfig& config) = 0;
  // The transformed record, or nullopt when the record is dropped. DataException for data the
  // transform cannot handle.
  virtual std::optional<ConnectRecord> apply(const ConnectRecord& record) = 0;
  virtual void close() {}
};

class Predicate {
 public:
  virtual ~Predicate() = default;
  // The configs configure() reads (Kafka's Predicate.config()). None by default.
  virtual ConfigDef config() const { return ConfigDef(); }
  virtual void configure(const TransformConfig& config) = 0;
  virtual bool test(const ConnectRecord& record) const = 0;
  virtual void close() {}
};

// Unconfigured transforms and predicates by class name ("org.apache.kafka.connect.transforms.
// InsertField$Value") or by the simple name after the package ("InsertField$Value"). Unknown
// names throw ConfigException.
std::unique_ptr<Transformation> createTransformation(std::string_view className);
std::unique_ptr<Predicate> createPredicate(std::string_view className);
// The class names known, sorted.
std::vector<std::string> transformationClassNames();
std::vector<std::string> predicateClassNames();

// The transforms of a connector's config, in order, each with its predicate (perhaps negated):
// `transforms=a,b`, `transforms.a.type=CLASS`, `transforms.a.<config>=...`,
// `transforms.a.predicate=p`, `transforms.a.negate=true`, `predicates=p`,
// `predicates.p.type=CLASS`, `predicates.p.<config>=...`.
class TransformationChain {
 public:
  // Builds and configures every transform and predicate; ConfigException as Kafka's
  // ConnectorConfig reports it.
  static TransformationChain fromConnectorConfig(const TransformConfig& connectorConfig);

  // Applies each stage in turn; nullopt once one drops the record.
  std::optional<ConnectRecord> apply(ConnectRecord record) const;
  size_t size() const { return stages_.size(); }
  // One stage at a time, for a runtime that handles each stage's failures: the stage's
  // transform's full class name, and the record through the stage (as given when its predicate
  // does not apply; nullopt when dropped).
  const std::string& stageClassName(size_t index) const { return stages_.at(index).className; }
  std::optional<ConnectRecord> applyStage(size_t index, const ConnectRecord& record) const;
  void close();

 private:
  struct Stage {
    std::string className;
    std::shared_ptr<Transformation> transformation;
    std::shared_ptr<Predicate> predicate;  // null: always applies
    bool negate = false;
  };
  std::vector<Stage> stages_;
};

}  // namespace oxbow::connect
