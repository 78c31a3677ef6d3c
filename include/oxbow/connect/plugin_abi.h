#ifndef OXBOW_CONNECT_PLUGIN_ABI_H
#define OXBOW_CONNECT_PLUGIN_ABI_H
/* The C boundary between a Connect worker and a connector plugin loaded from plugin.path
 * (docs/connect/plugins.md). Only C types cross it, so that the worker's C++ classes (vtables,
 * std::string, exceptions) never meet a plugin's: either side can change its compiler or its own
 * C++ code without the other noticing. A plugin written in C++ does not implement this by hand:
 * plugin_export.h turns ordinary Connector and Task classes into these tables.
 *
 * The worker dlopen()s a plugin and calls its one exported function:
 *
 *   const oxbow_connect_plugin* oxbow_connect_plugin_entry(uint32_t host_abi_version);
 *
 * The answer starts with abi_version and struct_size, whatever the version, so that a worker can
 * tell a plugin it does not understand and skip it. Versioning rules:
 * - OXBOW_CONNECT_ABI_VERSION changes when anything here changes meaning, moves or goes; a worker
 *   loads only plugins of a version it knows.
 * - Within a version, fields and functions are only ever appended to the end of a struct, and each
 *   struct that can grow carries its size, so that a worker reads only what the plugin has.
 *
 * Memory: what the worker passes (oxbow_connect_bytes, arrays) is valid for the call only. What a
 * plugin returns through an out parameter stays valid until the same thread makes its next call
 * into the plugin; the worker copies it at once. A plugin keeps the host tables it is given for
 * as long as the object it was given them for.
 *
 * Errors: functions returning int32_t return OXBOW_CONNECT_OK or one of the error codes below, the
 * error's message then in *error (same lifetime rule). The worker turns them back into Connect's
 * exceptions: a task failing this way is FAILED with that message.
 *
 * Data: keys, values and header values are Connect's JSON envelope {"schema": ..., "payload": ...}
 * as org.apache.kafka.connect.json.JsonConverter writes it with schemas.enable=true and
 * decimal.format=BASE64 (a null schema for schemaless data); empty bytes stand for no schema and a
 * null value. Source partitions and offsets are JSON objects, as Connect's offset stores keep
 * them. */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OXBOW_CONNECT_ABI_VERSION 1u
#define OXBOW_CONNECT_PLUGIN_SYMBOL "oxbow_connect_plugin_entry"

enum {
  OXBOW_CONNECT_OK = 0,
  OXBOW_CONNECT_ERROR = 1,           /* ConnectException */
  OXBOW_CONNECT_DATA_ERROR = 2,      /* DataException */
  OXBOW_CONNECT_RETRIABLE_ERROR = 3, /* RetriableException: the worker may try again */
  OXBOW_CONNECT_CONFIG_ERROR = 4,    /* ConfigException */
  OXBOW_CONNECT_OTHER_ERROR = 5      /* anything else a plugin caught */
};

enum { OXBOW_CONNECT_SOURCE = 0, OXBOW_CONNECT_SINK = 1 };

typedef struct oxbow_connect_bytes {
  const char* data;
  size_t size;
} oxbow_connect_bytes;

typedef struct oxbow_connect_prop {
  oxbow_connect_bytes key;
  oxbow_connect_bytes value;
} oxbow_connect_prop;

/* A connector's or task's config (Java's Map<String, String>). */
typedef struct oxbow_connect_props {
  const oxbow_connect_prop* entries;
  size_t count;
} oxbow_connect_props;

typedef struct oxbow_connect_header {
  oxbow_connect_bytes key;
  oxbow_connect_bytes value; /* envelope */
} oxbow_connect_header;

/* A SourceRecord (from poll) or a SinkRecord (to put). */
typedef struct oxbow_connect_record {
  oxbow_connect_bytes topic;
  int32_t has_partition;
  int32_t partition;
  int32_t has_timestamp;
  int32_t timestamp_type; /* Kafka's TimestampType: -1 none, 0 create time, 1 log append time */
  int64_t timestamp;
  int64_t kafka_offset; /* a sink record's; -1 for a source record */
  oxbow_connect_bytes key;
  oxbow_connect_bytes value;
  const oxbow_connect_header* headers;
  size_t header_count;
  oxbow_connect_bytes source_partition; /* JSON object; empty for a sink record */
  oxbow_connect_bytes source_offset;
} oxbow_connect_record;

typedef struct oxbow_connect_records {
  const oxbow_connect_record* records;
  size_t count;
} oxbow_connect_records;

typedef struct oxbow_connect_topic_partition {
  oxbow_connect_bytes topic;
  int32_t partition;
} oxbow_connect_topic_partition;

typedef struct oxbow_connect_partitions {
  const oxbow_connect_topic_partition* partitions;
  size_t count;
} oxbow_connect_partitions;

/* A sink's consumer offset (OffsetAndMetadata); leader_epoch -1 for none. has_offset 0 in
 * alter_offsets stands for a reset. */
typedef struct oxbow_connect_sink_offset {
  oxbow_connect_topic_partition partition;
  int32_t has_offset;
  int32_t leader_epoch;
  int64_t offset;
  oxbow_connect_bytes metadata;
} oxbow_connect_sink_offset;

typedef struct oxbow_connect_sink_offsets {
  const oxbow_connect_sink_offset* offsets;
  size_t count;
} oxbow_connect_sink_offsets;

/* A source partition with its new offset (alter_offsets); an empty offset resets it. */
typedef struct oxbow_connect_source_offset {
  oxbow_connect_bytes partition;
  oxbow_connect_bytes offset;
} oxbow_connect_source_offset;

typedef struct oxbow_connect_source_offsets {
  const oxbow_connect_source_offset* offsets;
  size_t count;
} oxbow_connect_source_offsets;

typedef struct oxbow_connect_strings {
  const oxbow_connect_bytes* items;
  size_t count;
} oxbow_connect_strings;

/* One ConfigDef key. type, importance and width are Kafka's enum names ("INT", "HIGH", "NONE");
 * has_default 0 makes the config required; default_is_null 1 a null default; otherwise
 * default_value is the default as Kafka's ConfigDef.convertToString writes it. Validators and
 * recommenders stay in the plugin: the worker asks validate(). */
typedef struct oxbow_connect_config_key {
  oxbow_connect_bytes name;
  oxbow_connect_bytes type;
  int32_t has_default;
  int32_t default_is_null;
  oxbow_connect_bytes default_value;
  oxbow_connect_bytes importance;
  oxbow_connect_bytes documentation;
  int32_t has_group;
  int32_t order_in_group;
  oxbow_connect_bytes group;
  oxbow_connect_bytes width;
  oxbow_connect_bytes display_name;
  oxbow_connect_strings dependents;
  int32_t internal_config;
} oxbow_connect_config_key;

typedef struct oxbow_connect_config_keys {
  const oxbow_connect_config_key* keys;
  size_t count;
} oxbow_connect_config_keys;

/* One config's validation result (ConfigValue); values as convertToString writes them. */
typedef struct oxbow_connect_config_value {
  oxbow_connect_bytes name;
  int32_t has_value;
  int32_t visible;
  oxbow_connect_bytes value;
  oxbow_connect_strings recommended_values;
  oxbow_connect_strings error_messages;
} oxbow_connect_config_value;

typedef struct oxbow_connect_config_values {
  const oxbow_connect_config_value* values;
  size_t count;
} oxbow_connect_config_values;

/* Where the producer wrote a source record (commit_record). */
typedef struct oxbow_connect_record_metadata {
  oxbow_connect_bytes topic;
  int32_t partition;
  int32_t has_offset;
  int32_t has_timestamp;
  int64_t offset;
  int64_t timestamp;
} oxbow_connect_record_metadata;

/* What the worker offers a connector or task: the contexts of Connect's API as C callbacks, each
 * called with `host` first. A callback the context lacks is NULL (a sink task has no offset
 * reader; a connector no sink callbacks). Out parameters follow the plugin's rule the other way:
 * valid until the same thread calls the host again. */
typedef struct oxbow_connect_host {
  uint32_t struct_size;
  void* host;
  /* ConnectorContext */
  void (*request_task_reconfiguration)(void* host);
  void (*raise_error)(void* host, oxbow_connect_bytes message);
  /* OffsetStorageReader.offset: *found 0 when the partition has no offset. */
  int32_t (*offset)(void* host, oxbow_connect_bytes partition, int32_t* found,
                    oxbow_connect_bytes* offset, oxbow_connect_bytes* error);
  /* SourceTaskContext.configs / SinkTaskContext.configs */
  int32_t (*configs)(void* host, oxbow_connect_props* out, oxbow_connect_bytes* error);
  /* SinkTaskContext */
  void (*sink_offset)(void* host, oxbow_connect_topic_partition partition, int64_t offset);
  void (*sink_timeout)(void* host, int64_t timeout_ms);
  void (*sink_assignment)(void* host, oxbow_connect_partitions* out);
  void (*sink_pause)(void* host, oxbow_connect_partitions partitions);
  void (*sink_resume)(void* host, oxbow_connect_partitions partitions);
  void (*sink_request_commit)(void* host);
  /* ErrantRecordReporter.report, waiting until the record is written; NULL when the connector
   * has neither a dead letter queue nor errors.log.enable. An error (tolerance exceeded) is the
   * task's to throw. */
  int32_t (*sink_report_errant)(void* host, const oxbow_connect_record* record,
                                oxbow_connect_bytes message, oxbow_connect_bytes* error);
} oxbow_connect_host;

typedef struct oxbow_connect_connector_class {
  uint32_t struct_size;
  const char* class_name; /* "com.example.SequenceSourceConnector" */
  int32_t type;           /* OXBOW_CONNECT_SOURCE or OXBOW_CONNECT_SINK */
  const char* version;

  /* Connector. new returns NULL when the constructor threw. */
  void* (*connector_new)(void);
  void (*connector_free)(void* connector);
  int32_t (*connector_config)(void* connector, oxbow_connect_config_keys* out,
                              oxbow_connect_bytes* error);
  int32_t (*connector_validate)(void* connector, oxbow_connect_props props,
                                oxbow_connect_config_values* out, oxbow_connect_bytes* error);
  /* task_configs: the configs last generated, on recovery; has_task_configs 0 otherwise. */
  int32_t (*connector_initialize)(void* connector, const oxbow_connect_host* context,
                                  int32_t has_task_configs, const oxbow_connect_props* task_configs,
                                  size_t task_config_count, oxbow_connect_bytes* error);
  int32_t (*connector_start)(void* connector, oxbow_connect_props props,
                             oxbow_connect_bytes* error);
  int32_t (*connector_reconfigure)(void* connector, oxbow_connect_props props,
                                   oxbow_connect_bytes* error);
  int32_t (*connector_task_class)(void* connector, oxbow_connect_bytes* out,
                                  oxbow_connect_bytes* error);
  int32_t (*connector_task_configs)(void* connector, int32_t max_tasks,
                                    const oxbow_connect_props** out, size_t* count,
                                    oxbow_connect_bytes* error);
  int32_t (*connector_stop)(void* connector, oxbow_connect_bytes* error);
  /* Sources: "SUPPORTED", "UNSUPPORTED" or empty (no answer). */
  int32_t (*source_exactly_once_support)(void* connector, oxbow_connect_props props,
                                         oxbow_connect_bytes* out, oxbow_connect_bytes* error);
  int32_t (*source_can_define_transaction_boundaries)(void* connector, oxbow_connect_props props,
                                                      oxbow_connect_bytes* out,
                                                      oxbow_connect_bytes* error);
  int32_t (*source_alter_offsets)(void* connector, oxbow_connect_props props,
                                  oxbow_connect_source_offsets offsets, int32_t* checked,
                                  oxbow_connect_bytes* error);
  int32_t (*sink_alter_offsets)(void* connector, oxbow_connect_props props,
                                oxbow_connect_sink_offsets offsets, int32_t* checked,
                                oxbow_connect_bytes* error);

  /* Task, by the class name connector_task_class gave. new returns NULL for an unknown name or a
   * constructor that threw. stop may come from another thread than the one polling. */
  void* (*task_new)(const char* task_class);
  void (*task_free)(void* task);
  int32_t (*task_version)(void* task, oxbow_connect_bytes* out, oxbow_connect_bytes* error);
  int32_t (*task_initialize)(void* task, const oxbow_connect_host* context,
                             oxbow_connect_bytes* error);
  int32_t (*task_start)(void* task, oxbow_connect_props props, oxbow_connect_bytes* error);
  int32_t (*task_stop)(void* task, oxbow_connect_bytes* error);
  int32_t (*source_task_poll)(void* task, oxbow_connect_records* out, oxbow_connect_bytes* error);
  int32_t (*source_task_commit)(void* task, oxbow_connect_bytes* error);
  /* metadata NULL: the record was dropped (a transform, error tolerance). */
  int32_t (*source_task_commit_record)(void* task, const oxbow_connect_record* record,
                                       const oxbow_connect_record_metadata* metadata,
                                       oxbow_connect_bytes* error);
  int32_t (*sink_task_put)(void* task, oxbow_connect_records records, oxbow_connect_bytes* error);
  int32_t (*sink_task_flush)(void* task, oxbow_connect_sink_offsets offsets,
                             oxbow_connect_bytes* error);
  int32_t (*sink_task_pre_commit)(void* task, oxbow_connect_sink_offsets offsets,
                                  oxbow_connect_sink_offsets* out, oxbow_connect_bytes* error);
  int32_t (*sink_task_open)(void* task, oxbow_connect_partitions partitions,
                            oxbow_connect_bytes* error);
  int32_t (*sink_task_close)(void* task, oxbow_connect_partitions partitions,
                             oxbow_connect_bytes* error);
} oxbow_connect_connector_class;

/* A Converter (org.apache.kafka.connect.storage.Converter), as key.converter, value.converter
 * or header.converter name it. */
typedef struct oxbow_connect_converter_class {
  uint32_t struct_size;
  const char* class_name; /* "com.example.TextConverter" */
  void* (*converter_new)(void);
  void (*converter_free)(void* converter);
  int32_t (*configure)(void* converter, oxbow_connect_props configs, int32_t is_key,
                       oxbow_connect_bytes* error);
  /* Connect data (an envelope) to bytes; *is_null 1 when the result is null (a tombstone). */
  int32_t (*from_connect_data)(void* converter, oxbow_connect_bytes topic, oxbow_connect_bytes data,
                               int32_t* is_null, oxbow_connect_bytes* out,
                               oxbow_connect_bytes* error);
  /* Bytes (is_null 1 for a null record) to Connect data (an envelope). */
  int32_t (*to_connect_data)(void* converter, oxbow_connect_bytes topic, int32_t is_null,
                             oxbow_connect_bytes value, oxbow_connect_bytes* out,
                             oxbow_connect_bytes* error);
} oxbow_connect_converter_class;

typedef struct oxbow_connect_plugin {
  uint32_t abi_version; /* OXBOW_CONNECT_ABI_VERSION the plugin was built with */
  uint32_t struct_size;
  const char* name;
  const char* version;
  const oxbow_connect_connector_class* connectors;
  size_t connector_count;
  /* Appended within version 1: a worker reads them only when struct_size reaches them. */
  const oxbow_connect_converter_class* converters;
  size_t converter_count;
} oxbow_connect_plugin;

typedef const oxbow_connect_plugin* (*oxbow_connect_plugin_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* OXBOW_CONNECT_PLUGIN_ABI_H */
