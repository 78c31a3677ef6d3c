// The engine's case files (src/sql/engine/cases/*.json), each case run in Streams' test driver.
// A case is what ksqlDB's query-validation tests hold, in our own format:
//   {"name": ..., "statements": [...],
//    "inputs":  [{"topic", "key", "value", "timestamp"}],       value null: a tombstone
//    "outputs": [{"topic", "key", "value", "timestamp"?, "window"?: {"start", "end"?}}],
//    "expectedError"?: "text the error contains",
//    "sources"?: [{"name", "schema"}],                           schema as DESCRIBE prints it
//    "processingLog"?: ["message", ...]}                         every entry's message, in order
// Keys and values are written as JSON and converted to and from the topic's format through the
// columns of the source that reads or writes it; a DELIMITED value is its text, and "valueText"
// gives a value's raw bytes (to feed a record that does not deserialize). Persistent queries are
// chained: what one writes reaches the queries that read its topic, in order.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "oxbow/streams/test_driver.h"
#include "sql/engine/engine.h"
#include "sql/execution/processing_log.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {
namespace {

using nlohmann::json;
using streams::TopologyTestDriver;

std::filesystem::path cases_dir() {
  return std::filesystem::path(OXBOW_SQL_CASES_DIR);
}

struct Case {
  std::string file, name;
  json spec;
};

std::vector<Case> load_cases() {
  std::vector<Case> out;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(cases_dir()))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path);
    json doc = json::parse(in);
    for (const auto& c : doc.at("tests"))
      out.push_back({path.stem().string(), c.at("name").get<std::string>(), c});
  }
  return out;
}

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = load_cases();
  return cases;
}

Formats json_formats() {
  Formats f;
  f.key_format = f.value_format = "JSON";
  return f;
}

// A case's JSON key or value as the topic's bytes, through the source's columns.
std::optional<std::string> to_bytes(const json& j, const DataSource& source, bool key) {
  if (j.is_null()) return std::nullopt;
  const std::string& format = key ? source.formats.key_format : source.formats.value_format;
  if (format == "JSON") return j.dump();  // the case's JSON is the record's, as written
  if (format == "DELIMITED" && j.is_string()) return j.get<std::string>();
  auto columns = key ? key_columns(source) : value_columns(source);
  Formats as_json = json_formats();
  as_json.wrap_single_value = false;  // KAFKA: one column, given bare
  Row row = row_serde(as_json, columns, key).deserialize("case", j.dump());
  return row_serde(source.formats, columns, key).serialize("case", row);
}

// A topic's bytes as the case's JSON, through the sink's columns.
json to_json(const std::optional<std::string>& bytes, const DataSource& sink, bool key) {
  if (!bytes) return nullptr;
  const std::string& format = key ? sink.formats.key_format : sink.formats.value_format;
  if (format == "DELIMITED") return *bytes;
  auto columns = key ? key_columns(sink) : value_columns(sink);
  Row row = row_serde(sink.formats, columns, key).deserialize("case", *bytes);
  Formats as_json = json_formats();
  as_json.wrap_single_value = key || format == "KAFKA" ? false : sink.formats.wrap_single_value;
  return json::parse(row_serde(as_json, columns, key).serialize("case", row));
}

class CaseRunner {
 public:
  explicit CaseRunner(const json& spec) : spec_(spec) {}

  void run() {
    if (!execute_statements()) return;
    check_sources();
    start_queries();
    for (const auto& input : spec_.value("inputs", json::array())) pipe(input);
    check_outputs();
    check_processing_log();
  }

 private:
  struct Running {
    const PersistentQuery* query;
    std::unique_ptr<TopologyTestDriver> driver;
    std::vector<std::string> inputs;
    std::string sink_topic;
  };
  struct Written {
    std::optional<std::string> key, value;
    int64_t timestamp;
  };

  // False when the case expects an error (then checked here).
  bool execute_statements() {
    std::string text;
    for (const auto& s : spec_.at("statements")) text += s.get<std::string>() + "\n";
    std::string expected = spec_.value("expectedError", "");
    try {
      engine_.execute(text);
    } catch (const std::exception& e) {
      if (expected.empty())
        ADD_FAILURE() << "unexpected error: " << e.what();
      else
        EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      return false;
    }
    if (!expected.empty()) ADD_FAILURE() << "expected an error containing: " << expected;
    return expected.empty();
  }

  void check_sources() {
    for (const auto& s : spec_.value("sources", json::array())) {
      const DataSource* source = engine_.catalog().find_source(s.at("name"));
      if (!source) {
        ADD_FAILURE() << "no source " << s.at("name");
        continue;
      }
      EXPECT_EQ(source->schema_text(), s.at("schema").get<std::string>()) << s.at("name");
    }
  }

  void start_queries() {
    for (const auto& q : engine_.queries()) {
      Running r{&q, nullptr, {}, engine_.catalog().find_source(q.sink)->topic};
      for (const auto& name : q.sources)
        r.inputs.push_back(engine_.catalog().find_source(name)->topic);
      auto config = q.streams_config;
      config["statestore.cache.max.bytes"] = "0";  // every update, as ksqlDB's tests see them
      r.driver = std::make_unique<TopologyTestDriver>(q.topology, config);
      running_.push_back(std::move(r));
    }
  }

  const DataSource& source_of(const std::string& topic) const {
    for (const auto& [name, s] : engine_.catalog().sources())
      if (s.topic == topic) return s;
    throw std::invalid_argument("no source reads topic " + topic);
  }

  void pipe(const json& input) {
    std::string topic = input.at("topic");
    const DataSource& source = source_of(topic);
    std::optional<std::string> value = input.contains("valueText")
                                           ? std::optional(input["valueText"].get<std::string>())
                                           : to_bytes(input.value("value", json()), source, false);
    deliver(topic, {to_bytes(input.value("key", json()), source, true), value,
                    input.value("timestamp", int64_t{0})});
  }

  void deliver(const std::string& topic, const Written& record) {
    for (auto& r : running_) {
      if (std::find(r.inputs.begin(), r.inputs.end(), topic) == r.inputs.end()) continue;
      r.driver->pipe(topic, record.key, record.value, record.timestamp);
      while (auto out = r.driver->read(r.sink_topic)) {
        Written w{out->key, out->value, out->timestamp};
        written_[r.sink_topic].push_back(w);
        deliver(r.sink_topic, w);
      }
    }
  }

  void check_outputs() {
    std::map<std::string, size_t> next;
    for (const auto& expected : spec_.value("outputs", json::array())) {
      std::string topic = expected.at("topic");
      size_t at = next[topic]++;
      const auto& got = written_[topic];
      if (at >= got.size()) {
        ADD_FAILURE() << "missing output " << at << " on " << topic << ": " << expected.dump();
        continue;
      }
      const DataSource& sink = source_of(topic);
      std::optional<std::string> key = got[at].key;
      json window;
      if (sink.window && key) window = strip_window(*key, sink);
      json actual = {{"topic", topic},
                     {"key", to_json(key, sink, true)},
                     {"value", to_json(got[at].value, sink, false)}};
      json wanted = {{"topic", topic},
                     {"key", expected.value("key", json())},
                     {"value", expected.value("value", json())}};
      if (expected.contains("timestamp")) {
        actual["timestamp"] = got[at].timestamp;
        wanted["timestamp"] = expected["timestamp"];
      }
      if (expected.contains("window")) {
        actual["window"] = window;
        wanted["window"] = expected["window"];
        if (!wanted["window"].contains("end")) actual["window"].erase("end");
      }
      EXPECT_EQ(actual, wanted) << "output " << at << " on " << topic;
    }
    for (const auto& [topic, records] : written_)
      if (next[topic] < records.size() && spec_.contains("outputs"))
        ADD_FAILURE() << records.size() - next[topic] << " more output(s) on " << topic
                      << " than the case expects";
  }

  // A windowed key's window, taken off its bytes: time windows end with the start (8 bytes),
  // session windows with the end then the start.
  static json strip_window(std::string& key, const DataSource& sink) {
    auto take = [&key] {
      int64_t v = 0;
      for (size_t i = key.size() - 8; i < key.size(); ++i)
        v = (v << 8) | static_cast<unsigned char>(key[i]);
      key.resize(key.size() - 8);
      return v;
    };
    int64_t start = take();
    if (sink.window->type == SourceWindowType::kSession) return {{"start", start}, {"end", take()}};
    return {{"start", start}, {"end", start + sink.window->size_ms.value_or(0)}};
  }

  const json& spec_;
  // "processingLog": the messages of the processing log's entries, in order, all of them.
  void check_processing_log() {
    if (!spec_.contains("processingLog")) return;
    auto log = std::dynamic_pointer_cast<MemoryProcessingLog>(engine_.processing_log());
    std::vector<std::string> messages;
    for (const auto& entry : log->entries()) messages.push_back(entry.message);
    EXPECT_EQ(json(messages), spec_["processingLog"]);
  }

  Engine engine_;
  std::vector<Running> running_;
  std::map<std::string, std::vector<Written>> written_;
};

class CaseFile : public ::testing::TestWithParam<size_t> {};

TEST_P(CaseFile, ProducesWhatItExpects) {
  const Case& c = all_cases()[GetParam()];
  SCOPED_TRACE(c.file + ": " + c.name);
  CaseRunner(c.spec).run();
}

INSTANTIATE_TEST_SUITE_P(Cases, CaseFile, ::testing::Range<size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           const Case& c = all_cases()[info.param];
                           std::string name = c.file + "_" + c.name;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace oxbow::sql
