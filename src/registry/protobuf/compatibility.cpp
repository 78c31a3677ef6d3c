// Confluent's Protobuf diff (protobuf-provider diff/, docs/registry/confluent-json-protobuf.md
// §2.5-2.6), the 7.9.x branch's rules: fields by tag across the whole message (oneofs included),
// message and enum types by simple name, a message-typed field compared recursively when its type
// comes from an import. Names are resolved by the descriptor pools; labels and map/group sugar
// follow the tree Confluent parses (schema_data.h).
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "registry/protobuf/schema_data.h"

namespace oxbow::registry::protobuf {

namespace {

using FieldProto = pb::FieldDescriptorProto;

// Java's HashMap iteration order, which Confluent's walk over type names and enum numbers follows:
// buckets by the spread hash under the final capacity, insertion order within a bucket.
int32_t java_hash(const std::string& s) {
  uint32_t h = 0;
  for (unsigned char c : s) h = 31 * h + c;
  return static_cast<int32_t>(h);
}
int32_t java_hash(int v) {
  return v;
}

size_t table_size_for(size_t n) {
  size_t cap = 1;
  while (cap < n) cap <<= 1;
  return cap;
}

template <typename K>
std::vector<K> java_order(const std::vector<K>& keys, size_t capacity) {
  for (size_t i = 1; i <= keys.size(); ++i)
    if (static_cast<double>(i) > static_cast<double>(capacity) * 0.75) capacity *= 2;
  std::vector<K> out = keys;
  auto bucket = [&](const K& k) {
    uint32_t h = static_cast<uint32_t>(java_hash(k));
    return (h ^ (h >> 16)) & (capacity - 1);
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const K& a, const K& b) { return bucket(a) < bucket(b); });
  return out;
}

// `new HashSet<>(original.keySet())` then `addAll(update.keySet())`, both maps filled in order.
template <typename K>
std::vector<K> union_order(const std::vector<K>& original, const std::vector<K>& update) {
  std::vector<K> keys = java_order(original, 16);
  for (const K& k : java_order(update, 16))
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  size_t cap = table_size_for(
      std::max<size_t>(static_cast<size_t>(static_cast<float>(original.size()) / .75f) + 1, 16));
  return java_order(keys, cap);
}

enum class Label { kNone, kOptional, kRequired, kRepeated };
enum class Kind { kScalar, kMap, kMessage };
enum class ScalarKind { kGeneral, kSigned, kStringOrBytes, kFixed32, kFixed64, kFloat, kDouble };

Kind kind(const pb::FieldDescriptor* f) {
  if (f->is_map()) return Kind::kMap;
  if (f->message_type() != nullptr) return Kind::kMessage;
  return Kind::kScalar;
}

ScalarKind scalar_kind(const pb::FieldDescriptor* f) {
  using T = pb::FieldDescriptor;
  switch (f->type()) {
    case T::TYPE_SINT32:
    case T::TYPE_SINT64:
      return ScalarKind::kSigned;
    case T::TYPE_STRING:
    case T::TYPE_BYTES:
      return ScalarKind::kStringOrBytes;
    case T::TYPE_FIXED32:
    case T::TYPE_SFIXED32:
      return ScalarKind::kFixed32;
    case T::TYPE_FIXED64:
    case T::TYPE_SFIXED64:
      return ScalarKind::kFixed64;
    case T::TYPE_FLOAT:
      return ScalarKind::kFloat;
    case T::TYPE_DOUBLE:
      return ScalarKind::kDouble;
    default:
      return ScalarKind::kGeneral;  // int32/64, uint32/64, bool and enums
  }
}

struct Msg {
  const FileSource* file = nullptr;
  const pb::DescriptorProto* src = nullptr;
  const pb::Descriptor* built = nullptr;
};

struct Field {
  const FieldProto* src;
  const pb::FieldDescriptor* built;
  std::string oneof;  // empty: top level
  Label label;
};

class Diff {
 public:
  Diff(const SchemaData& original, const SchemaData& update, std::vector<std::string> path,
       std::set<const pb::Descriptor*> in_progress)
      : o_(original), u_(update), path_(std::move(path)), in_progress_(std::move(in_progress)) {}

  void file() {
    if (o_.source.proto.package() != u_.source.proto.package())
      add(DifferenceType::kPackageChanged);
    const auto& of = o_.source.proto;
    const auto& uf = u_.source.proto;
    std::vector<Msg> om, um;
    for (int i = 0; i < of.message_type_size(); ++i)
      om.push_back({&o_.source, &of.message_type(i), o_.file->message_type(i)});
    for (int i = 0; i < uf.message_type_size(); ++i)
      um.push_back({&u_.source, &uf.message_type(i), u_.file->message_type(i)});
    types(om, of.enum_type(), nullptr, um, uf.enum_type(), nullptr);
  }

  std::vector<Difference> out;

 private:
  struct Scope {
    Scope(std::vector<std::string>& p, std::string s) : p_(p) { p_.push_back(std::move(s)); }
    ~Scope() { p_.pop_back(); }
    std::vector<std::string>& p_;
  };

  void add(DifferenceType t) {
    std::string path = "#/";
    for (size_t i = 0; i < path_.size(); ++i) path += (i ? "/" : "") + path_[i];
    out.push_back({t, path});
  }

  void types(const std::vector<Msg>& om, const pb::RepeatedPtrField<pb::EnumDescriptorProto>& oe,
             const pb::RepeatedPtrField<FieldProto>* of, const std::vector<Msg>& um,
             const pb::RepeatedPtrField<pb::EnumDescriptorProto>& ue,
             const pb::RepeatedPtrField<FieldProto>* uf) {
    // Confluent's tree has no map entries or group types of a text; the others count for indexes.
    auto index = [](const std::vector<Msg>& ms, const pb::RepeatedPtrField<FieldProto>* fields) {
      std::vector<std::pair<std::string, std::pair<Msg, int>>> out;
      int n = 0;
      for (const Msg& m : ms)
        if (!hidden_message(*m.file, *m.src, fields)) out.push_back({m.src->name(), {m, n++}});
      return out;
    };
    auto oi = index(om, of), ui = index(um, uf);
    auto find = [](const auto& list, const std::string& name) -> const std::pair<Msg, int>* {
      for (const auto& [n, v] : list)
        if (n == name) return &v;
      return nullptr;
    };
    std::vector<std::string> on, un;
    for (const auto& [n, v] : oi) on.push_back(n);
    for (const auto& [n, v] : ui) un.push_back(n);
    for (const std::string& name : union_order(on, un)) {
      Scope s(path_, name);
      auto* o = find(oi, name);
      auto* u = find(ui, name);
      if (u == nullptr) {
        if (!o->first.built->options().map_entry()) add(DifferenceType::kMessageRemoved);
      } else if (o == nullptr) {
        if (!u->first.built->options().map_entry()) add(DifferenceType::kMessageAdded);
      } else {
        message(o->first, u->first);
        if (o->second != u->second) add(DifferenceType::kMessageMoved);
      }
    }
    std::vector<std::string> oen, uen;
    for (const auto& e : oe) oen.push_back(e.name());
    for (const auto& e : ue) uen.push_back(e.name());
    for (const std::string& name : union_order(oen, uen)) {
      Scope s(path_, name);
      auto oit = std::find(oen.begin(), oen.end(), name);
      auto uit = std::find(uen.begin(), uen.end(), name);
      if (uit == uen.end())
        add(DifferenceType::kEnumRemoved);
      else if (oit == oen.end())
        add(DifferenceType::kEnumAdded);
      else
        enumeration(oe[static_cast<int>(oit - oen.begin())],
                    ue[static_cast<int>(uit - uen.begin())]);
    }
  }

  void enumeration(const pb::EnumDescriptorProto& o, const pb::EnumDescriptorProto& u) {
    // By number; with aliases the last constant of a number wins, as in Confluent's map.
    std::vector<int> on, un;
    std::map<int, std::string> onames, unames;
    for (const auto& v : o.value()) {
      if (!onames.count(v.number())) on.push_back(v.number());
      onames[v.number()] = v.name();
    }
    for (const auto& v : u.value()) {
      if (!unames.count(v.number())) un.push_back(v.number());
      unames[v.number()] = v.name();
    }
    for (int tag : union_order(on, un)) {
      Scope s(path_, std::to_string(tag));
      if (!unames.count(tag))
        add(DifferenceType::kEnumConstRemoved);
      else if (!onames.count(tag))
        add(DifferenceType::kEnumConstAdded);
      else if (onames[tag] != unames[tag])
        add(DifferenceType::kEnumConstChanged);
    }
  }

  static std::map<int, Field> fields(const Msg& m, std::set<std::string>* oneofs) {
    std::map<int, Field> out;
    bool proto3 = m.file->proto.syntax() == "proto3";
    for (int j = 0; j < m.src->field_size(); ++j) {
      const FieldProto& f = m.src->field(j);
      // A group of a text is a group element to Confluent, not a field.
      if (m.file->from_text && f.type() == FieldProto::TYPE_GROUP) continue;
      Field v{&f, m.built->field(j), "", Label::kNone};
      if (f.has_oneof_index() && !f.proto3_optional()) {
        v.oneof = m.src->oneof_decl(f.oneof_index()).name();
        oneofs->insert(v.oneof);
      } else if (f.proto3_optional()) {
        v.label = Label::kOptional;
      } else if (f.label() == FieldProto::LABEL_REPEATED) {
        v.label = Label::kRepeated;
      } else if (!proto3) {
        v.label = f.label() == FieldProto::LABEL_REQUIRED ? Label::kRequired : Label::kOptional;
      }
      out.emplace(f.number(), v);
    }
    return out;
  }

  void message(const Msg& o, const Msg& u) {
    if (in_progress_.insert(o.built).second) {
      message_fields(o, u);
      in_progress_.erase(o.built);
    }
    std::vector<Msg> om, um;
    for (int i = 0; i < o.src->nested_type_size(); ++i)
      om.push_back({o.file, &o.src->nested_type(i), o.built->nested_type(i)});
    for (int i = 0; i < u.src->nested_type_size(); ++i)
      um.push_back({u.file, &u.src->nested_type(i), u.built->nested_type(i)});
    types(om, o.src->enum_type(), &o.src->field(), um, u.src->enum_type(), &u.src->field());
  }

  void message_fields(const Msg& o, const Msg& u) {
    std::set<std::string> ooneofs, uoneofs;
    auto ob = fields(o, &ooneofs);
    auto ub = fields(u, &uoneofs);
    // A oneof gone by name with none of its members left anywhere was deleted whole: accepted.
    std::set<std::string> deleted;
    for (const auto& name : ooneofs) {
      if (uoneofs.count(name)) continue;
      bool survives = false;
      for (const auto& [tag, f] : ob)
        if (f.oneof == name && ub.count(tag)) survives = true;
      if (!survives) deleted.insert(name);
    }
    // Fields that were independent and now share a oneof cannot all be read back.
    for (int k = 0; k < u.src->oneof_decl_size(); ++k) {
      const std::string& name = u.src->oneof_decl(k).name();
      if (!uoneofs.count(name)) continue;
      Scope s(path_, name);
      std::set<std::string> origins;
      int moved_in = 0;
      for (const auto& [tag, f] : ub) {
        if (f.oneof != name) continue;
        auto it = ob.find(tag);
        if (it == ob.end()) continue;
        if (!it->second.oneof.empty()) {
          origins.insert("oneof:" + it->second.oneof);
        } else {
          origins.insert("field:" + std::to_string(tag));
          ++moved_in;
        }
      }
      if (origins.size() > 1)
        add(moved_in > 1 ? DifferenceType::kMultipleFieldsMovedToOneof
                         : DifferenceType::kFieldMovedToExistingOneof);
    }
    std::set<std::string> all = ooneofs;
    all.insert(uoneofs.begin(), uoneofs.end());
    for (const auto& name : all) {
      Scope s(path_, name);
      if (!uoneofs.count(name))
        add(DifferenceType::kOneofRemoved);
      else if (!ooneofs.count(name))
        add(DifferenceType::kOneofAdded);
    }
    std::set<int> tags;
    for (const auto& [t, f] : ob) tags.insert(t);
    for (const auto& [t, f] : ub) tags.insert(t);
    for (int tag : tags) {
      auto oit = ob.find(tag);
      auto uit = ub.find(tag);
      std::string t = std::to_string(tag);
      if (uit == ub.end()) {
        const Field& f = oit->second;
        if (!f.oneof.empty()) {
          if (!deleted.count(f.oneof)) {
            Scope a(path_, f.oneof), b(path_, t);
            add(DifferenceType::kOneofFieldRemoved);
          }
        } else {
          Scope a(path_, t);
          add(f.label == Label::kRequired ? DifferenceType::kRequiredFieldRemoved
                                          : DifferenceType::kFieldRemoved);
        }
      } else if (oit == ob.end()) {
        const Field& f = uit->second;
        if (!f.oneof.empty()) {
          Scope a(path_, f.oneof), b(path_, t);
          add(DifferenceType::kOneofFieldAdded);
        } else {
          Scope a(path_, t);
          add(f.label == Label::kRequired ? DifferenceType::kRequiredFieldAdded
                                          : DifferenceType::kFieldAdded);
        }
      } else {
        const Field& of = oit->second;
        const Field& uf = uit->second;
        if (!of.oneof.empty() && uf.oneof.empty()) {
          Scope a(path_, t);
          add(DifferenceType::kOneofFieldMovedToTopLevel);
        }
        std::optional<Scope> where;
        if (!uf.oneof.empty()) where.emplace(path_, uf.oneof);
        Scope a(path_, t);
        if (of.src->name() != uf.src->name()) add(DifferenceType::kFieldNameChanged);
        field_types(of.label, uf.label, of.built, uf.built);
      }
    }
  }

  void field_types(Label ol, Label ul, const pb::FieldDescriptor* o, const pb::FieldDescriptor* u) {
    Kind ok = kind(o), uk = kind(u);
    if (ok != uk) {
      add(DifferenceType::kFieldKindChanged);
      return;
    }
    if (ok == Kind::kScalar) {
      ScalarKind os = scalar_kind(o), us = scalar_kind(u);
      if (os != us) {
        add(DifferenceType::kFieldScalarKindChanged);
      } else if (ol != Label::kNone && ul != Label::kNone && ol != ul) {
        add(os == ScalarKind::kStringOrBytes ? DifferenceType::kFieldStringOrBytesLabelChanged
                                             : DifferenceType::kFieldNumericLabelChanged);
      }
    } else if (ok == Kind::kMessage) {
      message_types(o->message_type(), u->message_type());
    } else {
      field_types(Label::kNone, Label::kNone, o->message_type()->map_key(),
                  u->message_type()->map_key());
      field_types(Label::kNone, Label::kNone, o->message_type()->map_value(),
                  u->message_type()->map_value());
    }
  }

  static std::string local_name(const pb::Descriptor* d) {
    const std::string& pkg = d->file()->package();
    return pkg.empty() ? d->full_name() : d->full_name().substr(pkg.size() + 1);
  }

  static Msg locate(const SchemaData& s, const pb::Descriptor* d) {
    std::vector<int> chain;
    for (const pb::Descriptor* p = d; p != nullptr; p = p->containing_type())
      chain.push_back(p->index());
    auto it = s.files.find(d->file()->name());
    Msg m{it == s.files.end() ? nullptr : it->second, nullptr, d};
    if (m.file == nullptr) return m;
    m.src = &m.file->proto.message_type(chain.back());
    for (auto c = chain.rbegin() + 1; c != chain.rend(); ++c) m.src = &m.src->nested_type(*c);
    return m;
  }

  void message_types(const pb::Descriptor* o, const pb::Descriptor* u) {
    std::string on = local_name(o), un = local_name(u);
    if (on != un) {
      add(DifferenceType::kFieldNamedTypeChanged);
      return;
    }
    // Types of the schema itself are compared where they are declared; an imported one (a
    // reference or a well-known file) is compared here, its paths starting at its own name.
    if (o->file()->name() == kRootName && u->file()->name() == kRootName) return;
    Msg om = locate(o_, o), um = locate(u_, u);
    if (om.file == nullptr || um.file == nullptr) return;
    std::vector<std::string> path;
    size_t start = 0;
    while (true) {
      size_t dot = on.find('.', start);
      path.push_back(on.substr(start, dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    Diff sub(o_, u_, std::move(path), in_progress_);
    sub.message(om, um);
    bool incompatible = false;
    for (const auto& d : sub.out) {
      out.push_back(d);
      if (!compatible(d.type)) incompatible = true;
    }
    if (incompatible) add(DifferenceType::kFieldNamedTypeChanged);
  }

  const SchemaData& o_;
  const SchemaData& u_;
  std::vector<std::string> path_;
  std::set<const pb::Descriptor*> in_progress_;
};

struct TypeInfo {
  DifferenceType type;
  const char* name;
  bool compatible;
  const char* text;  // with 'P' for the path, %s for the two labels
};

constexpr TypeInfo kTypes[] = {
    {DifferenceType::kPackageChanged, "PACKAGE_CHANGED", false,
     "The package at '%p' in the %s schema does not match the package in the %s schema"},
    {DifferenceType::kMessageAdded, "MESSAGE_ADDED", true, ""},
    {DifferenceType::kMessageRemoved, "MESSAGE_REMOVED", false,
     "The %s schema is missing a MESSAGE type at path '%p' in the %s schema"},
    {DifferenceType::kMessageMoved, "MESSAGE_MOVED", true, ""},
    {DifferenceType::kEnumAdded, "ENUM_ADDED", true, ""},
    {DifferenceType::kEnumRemoved, "ENUM_REMOVED", true, ""},
    {DifferenceType::kEnumConstAdded, "ENUM_CONST_ADDED", true, ""},
    {DifferenceType::kEnumConstChanged, "ENUM_CONST_CHANGED", true, ""},
    {DifferenceType::kEnumConstRemoved, "ENUM_CONST_REMOVED", true, ""},
    {DifferenceType::kFieldAdded, "FIELD_ADDED", true, ""},
    {DifferenceType::kFieldRemoved, "FIELD_REMOVED", true, ""},
    {DifferenceType::kFieldNameChanged, "FIELD_NAME_CHANGED", true, ""},
    {DifferenceType::kFieldKindChanged, "FIELD_KIND_CHANGED", false,
     "The type of a field at path '%p' in the %s schema does not match the %s schema"},
    {DifferenceType::kFieldScalarKindChanged, "FIELD_SCALAR_KIND_CHANGED", false,
     "The kind of a SCALAR field at path '%p' in the %s schema does not match its kind in the %s "
     "schema"},
    {DifferenceType::kFieldNamedTypeChanged, "FIELD_NAMED_TYPE_CHANGED", false,
     "The type of a MESSAGE field at path '%p' in the %s schema does not match its type in the %s "
     "schema"},
    {DifferenceType::kFieldNumericLabelChanged, "FIELD_NUMERIC_LABEL_CHANGED", false,
     "The label for a NUMERIC field at path '%p' in the %s schema does not match its label in the "
     "%s schema"},
    {DifferenceType::kFieldStringOrBytesLabelChanged, "FIELD_STRING_OR_BYTES_LABEL_CHANGED", true,
     ""},
    {DifferenceType::kRequiredFieldAdded, "REQUIRED_FIELD_ADDED", false,
     "A required field  at path '%p' in the %s schema is missing in the %s schema"},
    {DifferenceType::kRequiredFieldRemoved, "REQUIRED_FIELD_REMOVED", false,
     "The %s schema is missing a required field at path: '%p' in the %s schema"},
    {DifferenceType::kOneofAdded, "ONEOF_ADDED", true, ""},
    {DifferenceType::kOneofRemoved, "ONEOF_REMOVED", true, ""},
    {DifferenceType::kOneofFieldAdded, "ONEOF_FIELD_ADDED", true, ""},
    {DifferenceType::kOneofFieldRemoved, "ONEOF_FIELD_REMOVED", false,
     "The %s schema is missing a oneof field at path '%p' in the %s schema"},
    {DifferenceType::kOneofFieldMovedToTopLevel, "ONEOF_FIELD_MOVED_TO_TOP_LEVEL", true,
     "The oneof field at path '%p' in the %s schema was moved out of its oneof to a top-level "
     "field in the %s schema"},
    {DifferenceType::kMultipleFieldsMovedToOneof, "MULTIPLE_FIELDS_MOVED_TO_ONEOF", false,
     "Multiple fields in the oneof at path '%p' in the %s schema are outside a oneof in the %s "
     "schema"},
    {DifferenceType::kFieldMovedToExistingOneof, "FIELD_MOVED_TO_EXISTING_ONEOF", false,
     "A field in the oneof at path '%p' in the %s schema is outside an existing oneof in the %s "
     "schema"},
};

const TypeInfo& info(DifferenceType t) {
  for (const auto& i : kTypes)
    if (i.type == t) return i;
  return kTypes[0];
}

}  // namespace

const char* type_name(DifferenceType type) {
  return info(type).name;
}
bool compatible(DifferenceType type) {
  return info(type).compatible;
}

std::vector<Difference> differences(const Schema& original, const Schema& update) {
  Diff diff(*original.data(), *update.data(), {}, {});
  diff.file();
  return std::move(diff.out);
}

std::string message(const Difference& d, const std::string& first, const std::string& second) {
  std::string text;
  int arg = 0;
  for (const char* p = info(d.type).text; *p; ++p) {
    if (p[0] == '%' && p[1] == 'p') {
      text += d.path;
      ++p;
    } else if (p[0] == '%' && p[1] == 's') {
      text += arg++ == 0 ? first : second;
      ++p;
    } else {
      text += *p;
    }
  }
  return std::string("{errorType:\"") + type_name(d.type) + "\", description:\"" + text + "\"}";
}

std::vector<std::string> reader_problems(const Schema& reader, const Schema& writer,
                                         const std::string& reader_label,
                                         const std::string& writer_label) {
  std::vector<std::string> out;
  for (const Difference& d : differences(writer, reader))
    if (!compatible(d.type)) out.push_back(message(d, reader_label, writer_label));
  return out;
}

}  // namespace oxbow::registry::protobuf
