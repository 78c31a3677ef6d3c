// The FileStream connectors: the source task reading a file in batches, resuming from a committed
// position and picking up appended lines; the sink task writing values as lines and flushing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/file_stream.h"

namespace oxbow::connect {
namespace {

using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "oxbow-file-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Answers one partition's offset and remembers which partitions were asked for.
class FakeOffsetStorageReader : public OffsetStorageReader {
 public:
  std::optional<ValueMap> offset(const ValueMap& partition) override {
    asked.push_back(partition);
    if (committed && Value(partition) == Value(committed->first)) return committed->second;
    return std::nullopt;
  }
  std::optional<std::pair<ValueMap, ValueMap>> committed;
  std::vector<ValueMap> asked;
};

class FakeSourceTaskContext : public SourceTaskContext {
 public:
  Props configs() const override { return {}; }
  OffsetStorageReader& offsetStorageReader() override { return reader; }
  FakeOffsetStorageReader reader;
};

ValueMap filePartition(const std::string& path) {
  return {{"filename", path}};
}
ValueMap position(int64_t at) {
  return {{"position", at}};
}

std::vector<std::string> values(const std::vector<SourceRecord>& records) {
  std::vector<std::string> lines;
  for (const SourceRecord& record : records) lines.push_back(record.value().asString());
  return lines;
}

std::vector<int64_t> positions(const std::vector<SourceRecord>& records) {
  std::vector<int64_t> at;
  for (const SourceRecord& record : records) {
    at.push_back(Value(record.sourceOffset()).mapGet(Value("position"))->asInt64());
  }
  return at;
}

struct SourceFixture {
  explicit SourceFixture(Props props) : task(1ms) {
    task.initialize(context);
    task.start(props);
  }
  FakeSourceTaskContext context;
  FileStreamSourceTask task;
};

TEST(FileStreamSourceTaskTest, ReadsTheFileInBatchesWithByteOffsets) {
  TempDir dir;
  std::string path = dir.file("in.txt");
  append(path, "a\nbb\nccc\ndd\ne\n");
  SourceFixture source({{"file", path}, {"topic", "lines"}, {"batch.size", "2"}});

  std::vector<SourceRecord> first = source.task.poll();
  EXPECT_EQ(values(first), (std::vector<std::string>{"a", "bb"}));
  EXPECT_EQ(positions(first), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(first[0].topic(), "lines");
  EXPECT_EQ(Value(first[0].sourcePartition()), Value(filePartition(path)));
  EXPECT_TRUE(schemasEqual(first[0].valueSchema(), Schema::STRING_SCHEMA));
  EXPECT_TRUE(first[0].key().isNull());
  EXPECT_FALSE(first[0].kafkaPartition().has_value());
  EXPECT_TRUE(first[0].timestamp().has_value());

  std::vector<SourceRecord> second = source.task.poll();
  EXPECT_EQ(values(second), (std::vector<std::string>{"ccc", "dd"}));
  EXPECT_EQ(positions(second), (std::vector<int64_t>{9, 12}));
  EXPECT_EQ(values(source.task.poll()), std::vector<std::string>{"e"});
  EXPECT_TRUE(source.task.poll().empty());
  // The task asked for the offset of its file's partition, once, when it opened the file.
  ASSERT_EQ(source.context.reader.asked.size(), 1u);
  EXPECT_EQ(Value(source.context.reader.asked[0]), Value(filePartition(path)));
  source.task.stop();
}

TEST(FileStreamSourceTaskTest, ResumesFromTheCommittedPosition) {
  TempDir dir;
  std::string path = dir.file("in.txt");
  append(path, "one\ntwo\nthree\n");
  FakeSourceTaskContext context;
  context.reader.committed = std::make_pair(filePartition(path), position(4));
  FileStreamSourceTask task(1ms);
  task.initialize(context);
  task.start({{"file", path}, {"topic", "t"}});
  std::vector<SourceRecord> records = task.poll();
  EXPECT_EQ(values(records), (std::vector<std::string>{"two", "three"}));
  EXPECT_EQ(positions(records), (std::vector<int64_t>{8, 14}));
}

TEST(FileStreamSourceTaskTest, AnotherFilesOffsetIsNotUsed) {
  TempDir dir;
  std::string path = dir.file("in.txt");
  append(path, "one\ntwo\n");
  SourceFixture source({{"file", path}, {"topic", "t"}});
  source.context.reader.committed = std::make_pair(filePartition(dir.file("other")), position(4));
  EXPECT_EQ(values(source.task.poll()), (std::vector<std::string>{"one", "two"}));
}

TEST(FileStreamSourceTaskTest, PicksUpLinesAppendedLater) {
  TempDir dir;
  std::string path = dir.file("in.txt");
  append(path, "a\n");
  SourceFixture source({{"file", path}, {"topic", "t"}});
  EXPECT_EQ(values(source.task.poll()), std::vector<std::string>{"a"});
  EXPECT_TRUE(source.task.poll().empty());
  append(path, "b\r\nc\rpartial");
  std::vector<SourceRecord> more = source.task.poll();
  EXPECT_EQ(values(more), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(positions(more), (std::vector<int64_t>{5, 7}));
  EXPECT_TRUE(source.task.poll().empty());  // "partial" has no end yet
  append(path, " line\n");
  std::vector<SourceRecord> last = source.task.poll();
  EXPECT_EQ(values(last), std::vector<std::string>{"partial line"});
  EXPECT_EQ(positions(last), std::vector<int64_t>{20});
}

TEST(FileStreamSourceTaskTest, WaitsForAMissingFile) {
  TempDir dir;
  std::string path = dir.file("later.txt");
  SourceFixture source({{"file", path}, {"topic", "t"}});
  EXPECT_TRUE(source.task.poll().empty());
  append(path, "here\n");
  EXPECT_EQ(values(source.task.poll()), std::vector<std::string>{"here"});
}

TEST(FileStreamSourceTaskTest, RefusesAnOffsetOfTheWrongType) {
  TempDir dir;
  std::string path = dir.file("in.txt");
  append(path, "a\n");
  SourceFixture source({{"file", path}, {"topic", "t"}});
  source.context.reader.committed =
      std::make_pair(filePartition(path), ValueMap{{"position", "4"}});
  try {
    source.task.poll();
    FAIL() << "a text position was accepted";
  } catch (const ConnectException& e) {
    EXPECT_STREQ(e.what(), "Offset position is the incorrect type");
  }
}

TEST(FileStreamSourceTaskTest, StopEndsAWaitingPoll) {
  TempDir dir;
  FakeSourceTaskContext context;
  FileStreamSourceTask task(30s);
  task.initialize(context);
  task.start({{"file", dir.file("never.txt")}, {"topic", "t"}});
  auto began = std::chrono::steady_clock::now();
  std::thread poller([&] { EXPECT_TRUE(task.poll().empty()); });
  std::this_thread::sleep_for(50ms);
  task.stop();
  poller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - began, 10s);
  EXPECT_TRUE(task.poll().empty());  // stopped: returns at once
}

TEST(FileStreamSourceTaskTest, StartRefusesAConfigWithoutTopic) {
  FileStreamSourceTask task;
  try {
    task.start({{"file", "x"}});
    FAIL() << "no topic was accepted";
  } catch (const ConfigException& e) {
    EXPECT_STREQ(e.what(), "Missing required configuration \"topic\" which has no default value.");
  }
}

// Runs `body` with `fd` (0 or 1) replaced by one end of a pipe, whose other end body is given.
template <class Body>
void withPipeAs(int fd, Body&& body) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  int mine = fd == STDIN_FILENO ? ends[1] : ends[0];
  int theirs = fd == STDIN_FILENO ? ends[0] : ends[1];
  std::fflush(stdout);
  int saved = ::dup(fd);
  ::dup2(theirs, fd);
  ::close(theirs);
  body(mine);
  ::dup2(saved, fd);
  ::close(saved);
  ::close(mine);
}

TEST(FileStreamSourceTaskTest, ReadsStandardInputWithoutPositions) {
  std::vector<SourceRecord> nothing, records;
  FakeSourceTaskContext context;
  FileStreamSourceTask task(1ms);
  withPipeAs(STDIN_FILENO, [&](int writer) {
    task.initialize(context);
    task.start({{"topic", "t"}, {"file", ""}});
    nothing = task.poll();  // nothing written yet: the poll does not block on the read
    ASSERT_EQ(::write(writer, "x\ny\n", 4), 4);
    records = task.poll();
    task.stop();
  });
  EXPECT_TRUE(nothing.empty());
  ASSERT_EQ(values(records), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(Value(records[0].sourcePartition()), Value(ValueMap{{"filename", Value()}}));
  EXPECT_EQ(Value(records[1].sourceOffset()), Value(ValueMap{{"position", Value()}}));
  EXPECT_TRUE(context.reader.asked.empty());  // no offsets for standard input
}

SinkRecord sinkRecord(Value value, int64_t offset) {
  return SinkRecord("t", 0, nullptr, Value(), nullptr, std::move(value), offset);
}

TEST(FileStreamSinkTaskTest, WritesValuesAsLinesOnFlush) {
  TempDir dir;
  std::string path = dir.file("out.txt");
  append(path, "before\n");
  FileStreamSinkTask task;
  task.start({{"file", path}});
  task.put({sinkRecord("hello", 0), sinkRecord(int32_t{42}, 1), sinkRecord(Value(), 2)});
  EXPECT_EQ(contents(path), "before\n");  // buffered until flushed
  task.flush({});
  EXPECT_EQ(contents(path), "before\nhello\n42\nnull\n");

  SinkOffsets offsets{{TopicPartition{"t", 0}, OffsetAndMetadata{.offset = 4}}};
  task.put({sinkRecord(Value(ValueList{1, 2}), 3)});
  EXPECT_EQ(task.preCommit(offsets), offsets);  // flushes, then all is safe to commit
  EXPECT_EQ(contents(path), "before\nhello\n42\nnull\n[1, 2]\n");
  task.put({sinkRecord("last", 4)});
  task.stop();  // writes what is left
  EXPECT_EQ(contents(path), "before\nhello\n42\nnull\n[1, 2]\nlast\n");
}

TEST(FileStreamSinkTaskTest, CreatesTheFileOrSaysWhyNot) {
  TempDir dir;
  FileStreamSinkTask created;
  created.start({{"file", dir.file("new.txt")}});
  EXPECT_TRUE(std::filesystem::exists(dir.file("new.txt")));
  FileStreamSinkTask refused;
  std::string bad = dir.file("no/such/dir.txt");
  try {
    refused.start({{"file", bad}});
    FAIL() << "a file in a missing directory was opened";
  } catch (const ConnectException& e) {
    EXPECT_EQ(std::string(e.what()).rfind("Couldn't find or create file '" + bad + "'", 0), 0u)
        << e.what();
  }
}

TEST(FileStreamSinkTaskTest, WritesToStandardOutputWithoutFile) {
  std::string written(64, '\0');
  withPipeAs(STDOUT_FILENO, [&](int reader) {
    FileStreamSinkTask task;
    task.start({});
    task.put({sinkRecord("out", 0)});
    task.flush({});
    task.stop();
    written.resize(static_cast<size_t>(std::max<ssize_t>(::read(reader, written.data(), 64), 0)));
  });
  EXPECT_EQ(written, "out\n");
}

}  // namespace
}  // namespace oxbow::connect
