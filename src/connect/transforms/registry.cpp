// Transforms and predicates by class name, and the chain a connector's config builds.
#include "connect/transforms/registry.h"

#include <set>

#include "connect/transforms/transform_util.h"

namespace oxbow::connect {

namespace {

constexpr std::string_view kTransformsPackage = "org.apache.kafka.connect.transforms.";
constexpr std::string_view kPredicatesPackage = "org.apache.kafka.connect.transforms.predicates.";

const transforms::TransformationTable& transformationTable() {
  static const transforms::TransformationTable table = [] {
    transforms::TransformationTable built;
    transforms::registerFieldTransforms(built);
    transforms::registerSchemaTransforms(built);
    transforms::registerHeaderFrom(built);
    transforms::registerFlatten(built);
    transforms::registerCast(built);
    transforms::registerTimestampConverter(built);
    transforms::registerRecordTransforms(built);
    return built;
  }();
  return table;
}

const transforms::PredicateTable& predicateTable() {
  static const transforms::PredicateTable table = [] {
    transforms::PredicateTable built;
    transforms::registerPredicates(built);
    return built;
  }();
  return table;
}

std::string_view simpleName(std::string_view className, std::string_view package) {
  if (className.substr(0, package.size()) == package) className.remove_prefix(package.size());
  return className;
}

// Kafka's ConfigDef.parseType for a CLASS config naming no class it knows.
[[noreturn]] void throwUnknownClass(std::string_view configName, std::string_view className) {
  throw ConfigException(configName, className,
                        "Class " + std::string(className) + " could not be found.");
}

// The configs under a prefix, the prefix removed (AbstractConfig.originalsWithPrefix).
TransformConfig withPrefix(const TransformConfig& config, const std::string& prefix) {
  TransformConfig found;
  for (auto it = config.lower_bound(prefix);
       it != config.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    found.emplace(it->first.substr(prefix.size()), it->second);
  }
  return found;
}

std::vector<std::string> aliases(const TransformConfig& config, const std::string& name) {
  std::vector<std::string> list = transforms::listConfig(config, name);
  std::set<std::string> seen;
  for (const std::string& alias : list) {
    if (!seen.insert(alias).second) {
      throw ConfigException(name, config.at(name), "Duplicate alias provided.");
    }
  }
  return list;
}

}  // namespace

std::unique_ptr<Transformation> createTransformation(std::string_view className) {
  const auto& table = transformationTable();
  auto found = table.find(simpleName(className, kTransformsPackage));
  if (found == table.end()) throwUnknownClass("type", className);
  return found->second();
}

std::unique_ptr<Predicate> createPredicate(std::string_view className) {
  const auto& table = predicateTable();
  auto found = table.find(simpleName(className, kPredicatesPackage));
  if (found == table.end()) throwUnknownClass("type", className);
  return found->second();
}

std::vector<std::string> transformationClassNames() {
  std::vector<std::string> names;
  for (const auto& entry : transformationTable()) {
    names.push_back(std::string(kTransformsPackage) + entry.first);
  }
  return names;
}

std::vector<std::string> predicateClassNames() {
  std::vector<std::string> names;
  for (const auto& entry : predicateTable()) {
    names.push_back(std::string(kPredicatesPackage) + entry.first);
  }
  return names;
}

TransformationChain TransformationChain::fromConnectorConfig(const TransformConfig& config) {
  std::vector<std::string> predicateAliases = aliases(config, "predicates");
  std::set<std::string> declaredPredicates(predicateAliases.begin(), predicateAliases.end());
  TransformationChain chain;
  for (const std::string& alias : aliases(config, "transforms")) {
    const std::string prefix = "transforms." + alias + ".";
    if (config.contains(prefix + "negate") && !config.contains(prefix + "predicate")) {
      throw ConfigException("Config '" + prefix + "negate' was provided but there is no config '" +
                            prefix + "predicate' defining a predicate to be negated.");
    }
    std::string className = transforms::requiredString(config, prefix + "type");
    auto found = transformationTable().find(simpleName(className, kTransformsPackage));
    if (found == transformationTable().end()) throwUnknownClass(prefix + "type", className);
    Stage stage;
    stage.className = std::string(kTransformsPackage) + found->first;
    stage.transformation = found->second();
    TransformConfig own = withPrefix(config, prefix);
    std::optional<std::string> predicateAlias = transforms::optionalString(own, "predicate");
    stage.negate = transforms::booleanConfig(config, prefix + "negate", false);
    own.erase("predicate");
    own.erase("negate");
    stage.transformation->configure(own);
    if (predicateAlias) {
      if (!declaredPredicates.contains(*predicateAlias)) {
        throw ConfigException(prefix + "predicate", *predicateAlias,
                              "Not one of the predicates in 'predicates'");
      }
      const std::string predicatePrefix = "predicates." + *predicateAlias + ".";
      std::string predicateClass = transforms::requiredString(config, predicatePrefix + "type");
      auto predicate = predicateTable().find(simpleName(predicateClass, kPredicatesPackage));
      if (predicate == predicateTable().end()) {
        throwUnknownClass(predicatePrefix + "type", predicateClass);
      }
      stage.predicate = predicate->second();
      stage.predicate->configure(withPrefix(config, predicatePrefix));
    }
    chain.stages_.push_back(std::move(stage));
  }
  return chain;
}

std::optional<ConnectRecord> TransformationChain::apply(ConnectRecord record) const {
  for (size_t i = 0; i < stages_.size(); ++i) {
    std::optional<ConnectRecord> transformed = applyStage(i, record);
    if (!transformed) return std::nullopt;
    record = std::move(*transformed);
  }
  return record;
}

std::optional<ConnectRecord> TransformationChain::applyStage(size_t index,
                                                             const ConnectRecord& record) const {
  const Stage& stage = stages_.at(index);
  if (stage.predicate && stage.predicate->test(record) == stage.negate) return record;
  return stage.transformation->apply(record);
}

void TransformationChain::close() {
  for (Stage& stage : stages_) {
    stage.transformation->close();
    if (stage.predicate) stage.predicate->close();
  }
}

}  // namespace oxbow::connect
