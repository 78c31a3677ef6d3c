// Built against the installed oxbow-registry package only: an Avro value through the registry and
// back (tests/integration/test_streams_install.py runs it against a real registry).
#include <iostream>
#include <memory>

#include "oxbow/registry/serdes.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: registry_check URL\n";
    return 2;
  }
  using namespace oxbow::registry;
  SerdeConfig config = SerdeConfig::from_properties({{"schema.registry.url", argv[1]}});
  auto client = std::make_shared<SchemaRegistryClient>(config.client);
  Serializer serializer(client, config, Format::kAvro,
                        R"({"type":"record","name":"Ping","fields":[{"name":"n","type":"int"}]})",
                        false);
  Deserializer deserializer(client, config, Format::kAvro, false);
  std::string bytes = serializer.serialize("pings", nlohmann::json{{"n", 42}});
  std::cout << wire::parse(bytes).schema_id << " " << deserializer.deserialize("pings", bytes)
            << "\n";
  return 0;
}
