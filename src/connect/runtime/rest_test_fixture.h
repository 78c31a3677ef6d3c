#pragma once
// A standalone worker without a broker and its REST API, for tests that drive endpoints directly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "connect/runtime/rest_api.h"
#include "connect/runtime/standalone.h"

namespace oxbow::connect::runtime {

class WorkerRestFixture : public ::testing::Test {
 protected:
  explicit WorkerRestFixture(const Properties& extra = {})
      : path_(std::filesystem::temp_directory_path() /
              ("oxbow-rest-fixture-" + std::to_string(::getpid()) + ".offsets")),
        worker_(workerProps(path_, extra), ConnectorPlugins::withBuiltIns()),
        api_(worker_, RestInfo{"127.0.0.1:8083", "unknown", {}, {}}) {}
  ~WorkerRestFixture() override { std::filesystem::remove(path_); }

  std::pair<int, nlohmann::json> call(const std::string& method, const std::string& path,
                                      const std::string& body = "", const std::string& query = "") {
    RestResponse response = api_.handle({method, path, query, body});
    return {response.status,
            response.body.empty() ? nlohmann::json() : nlohmann::json::parse(response.body)};
  }

  std::filesystem::path path_;
  StandaloneWorker worker_;
  ConnectRestApi api_;

 private:
  static Properties workerProps(const std::filesystem::path& path, Properties props) {
    props.emplace("key.converter", "org.apache.kafka.connect.storage.StringConverter");
    props.emplace("value.converter", "org.apache.kafka.connect.storage.StringConverter");
    props.emplace("offset.storage.file.filename", path.string());
    return props;
  }
};

}  // namespace oxbow::connect::runtime
