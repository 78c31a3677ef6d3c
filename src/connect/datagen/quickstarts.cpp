// The quickstarts' schemas and generators. Ranges and patterns follow Confluent's quickstart
// schemas (users_schema.avro, pageviews_schema.avro, orders_schema.avro in kafka-connect-datagen).
#include "connect/datagen/quickstarts.h"

#include <array>

#include "common/properties.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::datagen {

namespace {

// The time range Confluent's quickstarts draw registertime and ordertime from.
constexpr int64_t kTimeMin = 1487715775521;
constexpr int64_t kTimeMax = 1519273364600;

// A digit 1-9, then up to `moreMax` digits 0-9, the count of each part drawn uniformly: the
// strings regular expressions such as `[1-9][0-9]{0,2}` match. `optionalFirst` makes the first
// digit itself optional (`[1-9]{0,1}`, `[1-9]?`).
std::string digits(Random& random, bool optionalFirst, int moreMax) {
  std::string out;
  if (optionalFirst && random.between(0, 2) == 0) return out;
  out += static_cast<char>('1' + random.between(0, 9));
  int64_t more = random.between(0, moreMax + 1);
  for (int64_t i = 0; i < more; ++i) out += static_cast<char>('0' + random.between(0, 10));
  return out;
}

SchemaPtr usersSchema() {
  return SchemaBuilder::struct_()
      .name("ksql.users")
      .field("registertime", Schema::INT64_SCHEMA)
      .field("userid", Schema::STRING_SCHEMA)
      .field("regionid", Schema::STRING_SCHEMA)
      .field("gender", Schema::STRING_SCHEMA)
      .build();
}

std::shared_ptr<Struct> users(Random& random, int64_t /*iteration*/) {
  static const SchemaPtr schema = usersSchema();
  static constexpr std::array<const char*, 3> kGenders = {"MALE", "FEMALE", "OTHER"};
  auto value = std::make_shared<Struct>(schema);
  value->put("registertime", random.between(kTimeMin, kTimeMax))
      .put("userid", "User_" + digits(random, true, 0))
      .put("regionid", "Region_" + digits(random, true, 0))
      .put("gender", kGenders[random.between(0, kGenders.size())]);
  return value;
}

SchemaPtr pageviewsSchema() {
  return SchemaBuilder::struct_()
      .name("ksql.pageviews")
      .field("viewtime", Schema::INT64_SCHEMA)
      .field("userid", Schema::STRING_SCHEMA)
      .field("pageid", Schema::STRING_SCHEMA)
      .build();
}

std::shared_ptr<Struct> pageviews(Random& random, int64_t iteration) {
  static const SchemaPtr schema = pageviewsSchema();
  auto value = std::make_shared<Struct>(schema);
  // viewtime counts up from 1 in steps of 10, one step per record.
  value->put("viewtime", int64_t{1} + 10 * iteration)
      .put("userid", "User_" + digits(random, false, 0))
      .put("pageid", "Page_" + digits(random, false, 1));
  return value;
}

SchemaPtr addressSchema() {
  return SchemaBuilder::struct_()
      .name("ksql.address")
      .field("city", Schema::STRING_SCHEMA)
      .field("state", Schema::STRING_SCHEMA)
      .field("zipcode", Schema::INT64_SCHEMA)
      .build();
}

SchemaPtr ordersSchema() {
  return SchemaBuilder::struct_()
      .name("ksql.orders")
      .field("ordertime", Schema::INT64_SCHEMA)
      .field("orderid", Schema::INT32_SCHEMA)
      .field("itemid", Schema::STRING_SCHEMA)
      .field("orderunits", Schema::FLOAT64_SCHEMA)
      .field("address", addressSchema())
      .build();
}

// `[1-9]{0,2}`: nothing, one or two digits 1-9.
std::string shortNumber(Random& random) {
  std::string out;
  int64_t count = random.between(0, 3);
  for (int64_t i = 0; i < count; ++i) out += static_cast<char>('1' + random.between(0, 9));
  return out;
}

std::shared_ptr<Struct> orders(Random& random, int64_t iteration) {
  static const SchemaPtr schema = ordersSchema();
  Struct address(schema->field("address")->schema());
  address.put("city", "City_" + shortNumber(random))
      .put("state", "State_" + shortNumber(random))
      .put("zipcode", random.between(10000, 99999));
  auto value = std::make_shared<Struct>(schema);
  value->put("ordertime", random.between(kTimeMin, kTimeMax))
      .put("orderid", static_cast<int32_t>(iteration))
      .put("itemid", "BYOC_Item_" + digits(random, false, 2))
      .put("orderunits", random.uniform(0.1, 10.0))
      .put("address", std::move(address));
  return value;
}

const std::array<Quickstart, 3>& quickstarts() {
  static const std::array<Quickstart, 3> all = {
      Quickstart{"users", "userid", usersSchema(), users},
      Quickstart{"pageviews", "viewtime", pageviewsSchema(), pageviews},
      Quickstart{"orders", "orderid", ordersSchema(), orders},
  };
  return all;
}

}  // namespace

const Quickstart* findQuickstart(std::string_view name) {
  std::string lower = ascii_lower(std::string(name));
  for (const Quickstart& quickstart : quickstarts()) {
    if (quickstart.name == lower) return &quickstart;
  }
  return nullptr;
}

std::vector<std::string> quickstartNames() {
  std::vector<std::string> names;
  for (const Quickstart& quickstart : quickstarts()) names.emplace_back(quickstart.name);
  return names;
}

void applyKeySpace(Struct& value, std::string_view keyField, int64_t index) {
  const Field* field = value.schema()->field(keyField);
  if (field == nullptr) return;
  switch (field->schema()->type()) {
    case Type::STRING: {
      std::string text = value.getString(keyField).value_or("");
      size_t digit = text.find_first_of("0123456789");
      value.put(keyField, text.substr(0, digit) + std::to_string(index));
      break;
    }
    case Type::INT32:
      value.put(keyField, static_cast<int32_t>(index));
      break;
    case Type::INT64:
      value.put(keyField, index);
      break;
    default:
      throw ConnectException("key.space cannot apply to the " +
                             std::string(typeName(field->schema()->type())) + " field " +
                             std::string(keyField));
  }
}

}  // namespace oxbow::connect::datagen
