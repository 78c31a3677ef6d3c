#pragma once
// What a parsed Protobuf schema holds, shared by the files of registry/protobuf/ only.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "registry/protobuf/schema.h"

namespace oxbow::registry::protobuf {

namespace pb = google::protobuf;

// One file as its source gave it. Confluent prints and diffs the parsed syntax tree, not the
// resolved descriptor, so the printer and the diff read this; the pool's descriptor resolves names.
struct FileSource {
  pb::FileDescriptorProto proto;  // type names as written; options still uninterpreted (text)
  // .proto text: map entries are the parser's own (Confluent's parser has none, so they are hidden)
  // and labels are as written. A descriptor input keeps its map entries as messages.
  bool from_text = true;
};

struct SchemaData {
  FileSource source;  // proto.name() is kRootName
  // Referenced schemas by import path; kept alive because the pool holds their files.
  std::vector<std::pair<std::string, std::shared_ptr<const SchemaData>>> references;
  std::unique_ptr<pb::DescriptorPool> pool;
  const pb::FileDescriptor* file = nullptr;
  // Every file in the pool by its name (the root too), for the diff's walks into imported types.
  std::map<std::string, const FileSource*> files;
  std::unique_ptr<pb::DynamicMessageFactory> factory;
  std::string canonical;
  std::string normalized;
  std::string name;
};

inline constexpr const char* kRootName = "<schema>";

// The well-known files Confluent resolves without a reference; nullptr for other names.
const FileSource* builtin_file(const std::string& name);

// Confluent's printer (ProtobufSchemaUtils.toString / toNormalizedString).
std::string print_schema(const SchemaData& schema, bool normalize);

// Confluent's escapeChars for string option values.
std::string escape_chars(std::string_view in);

// A message that Confluent's syntax tree does not have: a map entry or group type of a .proto text
// (it sees `map<K, V>` and groups as parts of their field). Message indexes skip them.
bool hidden_message(const FileSource& file, const pb::DescriptorProto& message,
                    const pb::RepeatedPtrField<pb::FieldDescriptorProto>* parent_fields);

}  // namespace oxbow::registry::protobuf
