#pragma once
// kafka-connect-datagen's quickstarts (users, pageviews, orders): their Connect schemas, named and
// typed as Confluent's AvroData derives them from its quickstart Avro schemas, and a generator of
// values in the ranges and patterns those schemas' arg.properties ask for.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/connect/schema.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect::datagen {

// splitmix64: small, fast, and its whole state is one number, which the task stores in its
// source offset (Confluent re-seeds java.util.Random per record for the same reason).
class Random {
 public:
  explicit Random(uint64_t state) : state_(state) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [min, max).
  int64_t between(int64_t min, int64_t max) {
    return min + static_cast<int64_t>(next() % static_cast<uint64_t>(max - min));
  }
  double uniform(double min, double max) {
    return min + (max - min) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

struct Quickstart {
  std::string_view name;
  std::string_view keyField;
  SchemaPtr schema;
  // The value of the record at that iteration (0 for the first).
  std::shared_ptr<Struct> (*generate)(Random& random, int64_t iteration);
};

// "users", "pageviews", "orders" (any case); nullptr for another name.
const Quickstart* findQuickstart(std::string_view name);
// The names, lower case, for messages and the config's validator.
std::vector<std::string> quickstartNames();

// The key field's value replaced by one of `keySpace` values, chosen by `index`: a string keeps
// its prefix before the first digit ("User_7" → "User_<index>"), a number becomes `index`.
void applyKeySpace(Struct& value, std::string_view keyField, int64_t index);

}  // namespace oxbow::connect::datagen
