// Parsing: the .proto text through libprotobuf's own parser, or a base64 FileDescriptorProto, then
// a DescriptorPool of the references and well-known files to resolve and validate it.
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <mutex>
#include <set>

#include "registry/protobuf/schema_data.h"

namespace oxbow::registry::protobuf {

namespace {

using References = std::vector<std::pair<std::string, std::shared_ptr<const SchemaData>>>;

// libprotobuf writes warnings (a file with no syntax line) to stderr; a registry parses untrusted
// texts all day, so they are dropped. Errors reach us through the collectors instead.
void quiet_logging() {
  static std::once_flag once;
  std::call_once(
      once, [] { pb::SetLogHandler([](pb::LogLevel, const char*, int, const std::string&) {}); });
}

struct TextErrors : pb::io::ErrorCollector {
  std::string first;
  void AddError(int line, int column, const std::string& message) override {
    if (first.empty())
      first = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
};

struct PoolErrors : pb::DescriptorPool::ErrorCollector {
  std::string first;
  std::string element;  // of the first error
  void AddError(const std::string& filename, const std::string& element_name, const pb::Message*,
                ErrorLocation, const std::string& message) override {
    if (!first.empty()) return;
    element = element_name;
    const std::string& element = element_name;
    // Confluent's text for a name that resolves to nothing.
    if (message.size() > 17 && message.front() == '"' && message.ends_with("\" is not defined.")) {
      first = "Could not resolve type: " + message.substr(1, message.size() - 18);
      return;
    }
    std::string where = filename == kRootName ? "" : filename + ": ";
    if (!element.empty()) where += element + ": ";
    first = "Could not parse Protobuf - " + where + message;
  }
};

// Deeper nesting than any real schema has would only exhaust the stack in libprotobuf's recursive
// parser and builder; strings and comments do not count.
bool too_deep(std::string_view text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
    } else if (c == '{' || c == '[' || c == '<' || c == '(') {
      if (++depth > kMaxNesting) return true;
    } else if (c == '}' || c == ']' || c == '>' || c == ')') {
      --depth;
    }
  }
  return false;
}

std::string base64_encode(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

// java.util.Base64.getDecoder(): the basic alphabet, padding optional, nothing else allowed.
std::optional<std::string> base64_decode(std::string_view in) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.empty() || in.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else
      return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

// Confluent's parser never interprets options, so an option naming an extension no import declares
// is no error there. The copy given to the pool keeps only the options it can check: the standard
// ones (they change the encoding: packed, json_name, map_entry), or none when even those fail.
void strip_options(pb::Message& m, bool all) {
  const pb::Reflection* r = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> set;
  r->ListFields(m, &set);
  for (const pb::FieldDescriptor* f : set) {
    // Nor does it hold fields to their message's reserved numbers and names.
    if (f->name() == "reserved_range" || f->name() == "reserved_name") {
      r->ClearField(&m, f);
      continue;
    }
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->name() == "uninterpreted_option") {
      int kept = 0;
      int n = r->FieldSize(m, f);
      for (int i = 0; i < n; ++i) {
        const auto& o = static_cast<const pb::UninterpretedOption&>(r->GetRepeatedMessage(m, f, i));
        bool custom = o.name_size() == 0 || o.name(0).is_extension();
        if (all || custom) continue;
        if (kept != i) r->SwapElements(&m, f, kept, i);
        ++kept;
      }
      while (r->FieldSize(m, f) > kept) r->RemoveLast(&m, f);
    } else if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(m, f); ++i)
        strip_options(*r->MutableRepeatedMessage(&m, f, i), all);
    } else {
      strip_options(*r->MutableMessage(&m, f), all);
    }
  }
}

bool clear_options(pb::Message* options) {
  if (options->ByteSizeLong() == 0) return false;
  options->Clear();
  return true;
}

// Clears the options of the element with that full name (as the pool's errors name it).
bool strip_element_options(pb::FileDescriptorProto& f, const std::string& name) {
  if (name == f.name()) return clear_options(f.mutable_options());
  auto join = [](const std::string& scope, const std::string& n) {
    return scope.empty() ? n : scope + "." + n;
  };
  auto in_enum = [&](pb::EnumDescriptorProto& e, const std::string& scope) {
    if (join(scope, e.name()) == name) return clear_options(e.mutable_options());
    for (auto& v : *e.mutable_value())  // values are scoped beside their enum
      if (join(scope, v.name()) == name) return clear_options(v.mutable_options());
    return false;
  };
  auto in_fields = [&](pb::RepeatedPtrField<pb::FieldDescriptorProto>& fields,
                       const std::string& scope) {
    for (auto& fd : fields)
      if (join(scope, fd.name()) == name) return clear_options(fd.mutable_options());
    return false;
  };
  auto in_message = [&](auto& self, pb::DescriptorProto& m, const std::string& scope) -> bool {
    std::string full = join(scope, m.name());
    if (full == name) return clear_options(m.mutable_options());
    if (in_fields(*m.mutable_field(), full) || in_fields(*m.mutable_extension(), full)) return true;
    for (auto& o : *m.mutable_oneof_decl())
      if (join(full, o.name()) == name) return clear_options(o.mutable_options());
    for (auto& e : *m.mutable_enum_type())
      if (in_enum(e, full)) return true;
    for (auto& n : *m.mutable_nested_type())
      if (self(self, n, full)) return true;
    return false;
  };
  for (auto& m : *f.mutable_message_type())
    if (in_message(in_message, m, f.package())) return true;
  for (auto& e : *f.mutable_enum_type())
    if (in_enum(e, f.package())) return true;
  if (in_fields(*f.mutable_extension(), f.package())) return true;
  for (auto& sv : *f.mutable_service()) {
    std::string full = join(f.package(), sv.name());
    if (full == name) return clear_options(sv.mutable_options());
    for (auto& md : *sv.mutable_method())
      if (join(full, md.name()) == name) return clear_options(md.mutable_options());
  }
  return false;
}

// libprotobuf wants a proto3 enum's first constant to be 0; Confluent's parser only that there is
// one (`TWO = 2; ONE = 1; ZERO = 0;` registers). The pool's copy lists that constant first.
void zero_first(pb::EnumDescriptorProto& e) {
  for (int i = 1; i < e.value_size(); ++i)
    if (e.value(0).number() != 0 && e.value(i).number() == 0) {
      for (int k = i; k > 0; --k) e.mutable_value()->SwapElements(k, k - 1);
      return;
    }
}
void zero_first(pb::DescriptorProto& m) {
  for (auto& e : *m.mutable_enum_type()) zero_first(e);
  for (auto& n : *m.mutable_nested_type()) zero_first(n);
}

class PoolBuilder {
 public:
  PoolBuilder(SchemaData& data, PoolErrors& errors) : data_(data), errors_(errors) {}

  bool add(const std::string& name, const FileSource& source, const References& refs) {
    if (data_.files.count(name)) return true;
    if (!visiting_.insert(name).second) {
      errors_.first = "Could not parse Protobuf - import cycle through \"" + name + "\"";
      return false;
    }
    for (const std::string& dep : source.proto.dependency()) {
      const FileSource* found = nullptr;
      const References* dep_refs = &kNone;
      for (const auto& [ref_name, ref] : refs)
        if (ref_name == dep) {
          found = &ref->source;
          dep_refs = &ref->references;
          break;
        }
      if (found == nullptr) found = builtin_file(dep);
      if (found == nullptr) {
        errors_.first = "Could not parse Protobuf - import \"" + dep +
                        "\" is neither a reference nor a well-known file";
        return false;
      }
      if (!add(dep, *found, *dep_refs)) return false;
    }
    pb::FileDescriptorProto copy = source.proto;
    copy.set_name(name);
    copy.clear_source_code_info();
    strip_options(copy, false);
    if (copy.syntax() == "proto3") {
      for (auto& e : *copy.mutable_enum_type()) zero_first(e);
      for (auto& m : *copy.mutable_message_type()) zero_first(m);
    }
    // Options libprotobuf rejects where Confluent checks none (jstype on an int32, say): the
    // offending element loses its options and the file is tried again. A failed build leaves
    // nothing in the pool.
    const pb::FileDescriptor* built = nullptr;
    for (int attempt = 0; attempt < 32 && built == nullptr; ++attempt) {
      PoolErrors errors;
      built = data_.pool->BuildFileCollectingErrors(copy, &errors);
      if (built != nullptr) break;
      if (attempt == 0) errors_.first = errors.first;
      if (!strip_element_options(copy, errors.element)) break;
    }
    if (built != nullptr) errors_.first.clear();
    if (built == nullptr) {
      if (errors_.first.empty()) errors_.first = "Could not parse Protobuf - invalid file " + name;
      return false;
    }
    data_.files[name] = &source;
    visiting_.erase(name);
    if (name == kRootName) data_.file = built;
    return true;
  }

 private:
  static inline const References kNone;
  SchemaData& data_;
  PoolErrors& errors_;
  std::set<std::string> visiting_;
};

std::string first_type_name(const pb::FileDescriptorProto& f) {
  std::string base;
  if (f.message_type_size() > 0)
    base = f.message_type(0).name();
  else if (f.enum_type_size() > 0)
    base = f.enum_type(0).name();
  else
    return "";
  return f.package().empty() ? base : f.package() + "." + base;
}

// The text's file as written (a .proto text, else a base64 FileDescriptorProto); false with
// `error` set when it is neither.
bool read_source(std::string_view text, FileSource& source, std::string& error) {
  if (text.size() > kMaxSchemaBytes) {
    error = "Could not parse Protobuf - the schema is larger than " +
            std::to_string(kMaxSchemaBytes) + " bytes";
    return false;
  }
  TextErrors text_errors;
  bool parsed = false;
  if (too_deep(text)) {
    text_errors.first = "the schema nests deeper than " + std::to_string(kMaxNesting) + " levels";
  } else {
    pb::io::ArrayInputStream in(text.data(), static_cast<int>(text.size()));
    pb::io::Tokenizer tokenizer(&in, &text_errors);
    pb::compiler::Parser parser;
    parser.RecordErrorsTo(&text_errors);
    parsed = parser.Parse(&tokenizer, &source.proto) && text_errors.first.empty();
  }
  if (!parsed) {
    // Confluent falls back to the same string as a base64 FileDescriptorProto.
    source = FileSource{};
    auto bytes = base64_decode(text);
    if (!bytes || !source.proto.ParseFromString(*bytes)) {
      error = "Could not parse Protobuf - " + text_errors.first;
      return false;
    }
    source.from_text = false;
    source.proto.clear_source_code_info();
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> unresolved_imports(std::string_view text) {
  quiet_logging();
  FileSource source;
  std::string error;
  if (!read_source(text, source, error)) return std::nullopt;
  std::vector<std::string> out;
  for (const std::string& dep : source.proto.dependency())
    if (builtin_file(dep) == nullptr) out.push_back(dep);
  return out;
}

ParseResult parse(std::string_view text, const std::vector<Reference>& references) {
  quiet_logging();
  ParseResult out;
  auto data = std::make_shared<SchemaData>();
  if (!read_source(text, data->source, out.error)) return out;
  data->source.proto.set_name(kRootName);
  if (data->source.proto.message_type_size() == 0 && data->source.proto.enum_type_size() == 0) {
    out.error = "Protobuf schema definition contains no type definitions";
    return out;
  }
  for (const Reference& r : references)
    if (r.schema != nullptr) data->references.emplace_back(r.name, r.schema->data());

  data->pool = std::make_unique<pb::DescriptorPool>();
  PoolErrors errors;
  PoolBuilder builder(*data, errors);
  if (!builder.add(kRootName, data->source, data->references) || data->file == nullptr) {
    out.error = errors.first.empty() ? "Could not parse Protobuf" : errors.first;
    return out;
  }
  data->factory = std::make_unique<pb::DynamicMessageFactory>(data->pool.get());
  data->canonical = print_schema(*data, false);
  data->normalized = print_schema(*data, true);
  data->name = first_type_name(data->source.proto);
  out.schema.emplace(std::move(data));
  return out;
}

const std::string& Schema::canonical() const {
  return data_->canonical;
}
const std::string& Schema::normalized() const {
  return data_->normalized;
}
const std::string& Schema::name() const {
  return data_->name;
}

std::vector<std::string> Schema::message_names() const {
  std::vector<std::string> out;
  auto walk = [&](auto& self, const pb::Descriptor* d) -> void {
    out.push_back(d->full_name());
    for (int i = 0; i < d->nested_type_count(); ++i) self(self, d->nested_type(i));
  };
  for (int i = 0; i < data_->file->message_type_count(); ++i)
    walk(walk, data_->file->message_type(i));
  return out;
}

std::string Schema::serialized() const {
  pb::FileDescriptorProto proto;
  data_->file->CopyTo(&proto);
  proto.set_name("default");  // the name Confluent's parser gives a schema read from text
  return base64_encode(proto.SerializeAsString());
}

bool hidden_message(const FileSource& file, const pb::DescriptorProto& message,
                    const pb::RepeatedPtrField<pb::FieldDescriptorProto>* parent_fields) {
  if (!file.from_text) return false;
  if (message.options().map_entry()) return true;
  // A group's type is part of the group in Confluent's tree, not a message of its own.
  if (parent_fields != nullptr)
    for (const auto& f : *parent_fields)
      if (f.type() == pb::FieldDescriptorProto::TYPE_GROUP && f.type_name() == message.name())
        return true;
  return false;
}

}  // namespace oxbow::registry::protobuf
