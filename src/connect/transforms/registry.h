#pragma once
// The tables of transforms and predicates by simple class name; each source file registers its
// own.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "oxbow/connect/transformation.h"

namespace oxbow::connect::transforms {

using TransformationFactory = std::function<std::unique_ptr<Transformation>()>;
using PredicateFactory = std::function<std::unique_ptr<Predicate>()>;
// Keyed by the name after "org.apache.kafka.connect.transforms." ("InsertField$Value").
using TransformationTable = std::map<std::string, TransformationFactory, std::less<>>;
// Keyed by the name after "org.apache.kafka.connect.transforms.predicates.".
using PredicateTable = std::map<std::string, PredicateFactory, std::less<>>;

void registerFieldTransforms(TransformationTable& table);
void registerSchemaTransforms(TransformationTable& table);
void registerHeaderFrom(TransformationTable& table);
void registerFlatten(TransformationTable& table);
void registerCast(TransformationTable& table);
void registerTimestampConverter(TransformationTable& table);
void registerRecordTransforms(TransformationTable& table);
void registerPredicates(PredicateTable& table);

}  // namespace oxbow::connect::transforms
