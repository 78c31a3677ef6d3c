#pragma once
// An active task as its stream thread runs it: the Task (which processes), the input offsets to
// commit, the lock that queries share, and, for a task reading several partitions, its partition
// group (runtime/partition_group.h), which hands their records over in timestamp order and
// pauses a partition whose buffer is full; the part of Kafka Streams' StreamTask that faces the
// consumer.
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/shared_mutex.h"
#include "streams/runtime/partition_group.h"
#include "streams/runtime/task.h"

namespace oxbow::streams::detail {

struct ActiveTask {
  std::unique_ptr<Task> task;
  std::map<std::string, int64_t> next_offsets;  // input topic -> next offset to commit
  // Tasks with several input partitions: their records in timestamp order.
  std::unique_ptr<PartitionGroup> group;
  std::map<std::string, int64_t> start_offsets;  // where an input began, once asked
  // Each input: after the last record the consumer handed out (buffered or processed). A record
  // before it is one librdkafka handed out again (task_manager.cpp, add_record).
  std::map<std::string, int64_t> fetched_next;
  std::set<std::string> full;                   // grouped inputs paused while full
  std::map<std::string, int64_t> queried_ends;  // grouped inputs' ends, asked before a fetch
  // Interactive queries: the thread holds it exclusively while it changes the task's stores
  // (processing a record or a partition group's run of records, punctuating, flushing,
  // checkpointing), a query shared while it reads them.
  mutable WriterPreferringSharedMutex lock;
  bool queryable = false;  // under `lock`: restored, so its stores may be read

  // Buffers a record of a grouped input; pauses its partition on `consumer` once its buffer is
  // full.
  void buffer(rd_kafka_t* consumer, const std::string& topic, PartitionGroup::Message message);
  // A paused partition whose buffer has drained to half resumes from the record after the last
  // one it buffered (records librdkafka held when the pause took effect may have been dropped).
  void resume_drained(rd_kafka_t* consumer);
  // Whether an input partition with nothing buffered has been read to its end.
  bool caught_up(rd_kafka_t* consumer, const std::string& topic);
};

}  // namespace oxbow::streams::detail
