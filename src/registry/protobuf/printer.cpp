// Confluent's own .proto printer (ProtobufSchemaUtils.toString,
// docs/registry/confluent-json-protobuf.md §2.2) and its normalize (§2.3), over the file as parsed:
// messages before enums, sections separated by blank lines, nested blocks re-indented line by line
// (so a blank line inside one is two spaces).
#include <algorithm>
#include <array>
#include <map>

#include "registry/protobuf/options.h"
#include "registry/protobuf/schema_data.h"

namespace oxbow::registry::protobuf {

namespace {

using FieldProto = pb::FieldDescriptorProto;
constexpr int kMaxTag = 536870911;

std::string scalar_name(FieldProto::Type type) {
  std::string n = FieldProto::Type_Name(type).substr(5);  // TYPE_INT32 -> INT32
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  return n;
}

std::string lower(const std::string& s) {
  std::string out = s;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

// One `reserved`/`extensions` value: a name, or an inclusive range.
struct Item {
  std::string name;
  int start = 0, end = 0;
};

std::string item_text(const Item& it, bool normalize, bool single_as_range) {
  if (!it.name.empty()) return "\"" + it.name + "\"";
  if (it.start == it.end && (normalize || !single_as_range)) return std::to_string(it.start);
  return std::to_string(it.start) + " to " + (it.end < kMaxTag ? std::to_string(it.end) : "max");
}

class Printer {
 public:
  Printer(const SchemaData& d, bool normalize)
      : src_(d.source), f_(d.source.proto), built_(d.file), pool_(d.pool.get()), norm_(normalize) {
    for (const auto& loc : f_.source_code_info().location()) {
      std::vector<int> path(loc.path().begin(), loc.path().end());
      spans_[path].push_back({loc.span(0), loc.span(1)});
    }
  }

  std::string file() {
    std::string sb;
    if (f_.has_syntax() && !f_.syntax().empty() && (!norm_ || f_.syntax() == "proto3"))
      sb += "syntax = \"" + f_.syntax() + "\";\n";
    if (f_.has_package() && !f_.package().empty()) sb += "package " + f_.package() + ";\n";
    if (f_.dependency_size() > 0) {
      sb += '\n';
      std::vector<std::string> plain, pub;
      for (int i = 0; i < f_.dependency_size(); ++i) {
        bool is_public = std::find(f_.public_dependency().begin(), f_.public_dependency().end(),
                                   i) != f_.public_dependency().end();
        (is_public ? pub : plain).push_back(f_.dependency(i));
      }
      for (auto* list : {&plain, &pub}) {
        if (norm_) {
          std::sort(list->begin(), list->end());
          list->erase(std::unique(list->begin(), list->end()), list->end());
        }
      }
      for (const auto& i : plain) sb += "import \"" + i + "\";\n";
      for (const auto& i : pub) sb += "import public \"" + i + "\";\n";
    }
    auto opts = options(f_.options(), f_.package());
    if (!opts.empty()) {
      sb += '\n';
      for (const auto& o : opts) sb += "option " + o.text + ";\n";
    }
    std::string types;
    for (int i = 0; i < f_.message_type_size(); ++i)
      if (!skipped(f_.message_type(i), built_->message_type(i), nullptr))
        types += message(f_.message_type(i), built_->message_type(i), {4, i});
    for (int i = 0; i < f_.enum_type_size(); ++i) types += enumeration(f_.enum_type(i), {5, i});
    if (!types.empty()) sb += "\n" + types;
    if (f_.extension_size() > 0) {
      sb += '\n';
      sb += extends(
          f_.extension(), [&](int k) { return built_->extension(k); }, f_.package());
    }
    if (f_.service_size() > 0) {
      sb += '\n';
      for (int i = 0; i < f_.service_size(); ++i) sb += service(i);
    }
    return sb;
  }

 private:
  // Hidden from Confluent's tree (text input), or under normalize a map entry (descriptor input).
  bool skipped(const pb::DescriptorProto& m, const pb::Descriptor* d,
               const pb::RepeatedPtrField<FieldProto>* parent_fields) const {
    return hidden_message(src_, m, parent_fields) || (norm_ && d->options().map_entry());
  }

  std::vector<PrintedOption> options(const pb::Message& o, const std::string& scope) const {
    return element_options(o, src_.from_text, norm_, [&](const std::string& n) {
      if (!n.empty() && n[0] == '.') return n.substr(1);
      std::string prefix = scope;
      while (true) {
        std::string full = prefix.empty() ? n : prefix + "." + n;
        if (pool_->FindExtensionByName(full) != nullptr) return full;
        if (prefix.empty()) return n;
        size_t dot = prefix.rfind('.');
        prefix = dot == std::string::npos ? "" : prefix.substr(0, dot);
      }
    });
  }

  static void bracketed(std::string& sb, const std::vector<PrintedOption>& opts) {
    if (opts.size() == 1) {
      sb += "[" + opts[0].text + "]";
      return;
    }
    sb += "[\n";
    for (size_t i = 0; i < opts.size(); ++i)
      indent_lines(sb, opts[i].text + (i + 1 < opts.size() ? "," : ""));
    sb += "]";
  }

  // The statements `reserved`/`extensions` items were written in: libprotobuf keeps the ranges
  // and names apart, its source locations tell which statement each came from and in what order.
  std::vector<std::vector<Item>> statements(
      const std::vector<int>& path,
      const std::vector<std::pair<int, std::vector<Item>>>& kinds) const {
    std::vector<std::pair<std::array<int, 2>, std::vector<Item>>> found;
    bool located = src_.from_text;
    for (const auto& [field, items] : kinds) {
      auto p = path;
      p.push_back(field);
      auto stmt = spans_.find(p);
      std::vector<std::array<int, 2>> starts;
      if (stmt != spans_.end()) starts = stmt->second;
      if (starts.empty() && !items.empty()) located = false;
      for (const auto& s : starts) found.push_back({s, {}});
      for (size_t i = 0; i < items.size(); ++i) {
        auto ip = p;
        ip.push_back(static_cast<int>(i));
        auto at = spans_.find(ip);
        if (!located || at == spans_.end() || at->second.empty()) {
          located = false;
          break;
        }
        // The last statement of this kind that starts before the item holds it.
        int best = -1;
        for (size_t k = found.size() - starts.size(); k < found.size(); ++k)
          if (found[k].first <= at->second[0]) best = static_cast<int>(k);
        if (best < 0) {
          located = false;
          break;
        }
        found[best].second.push_back(items[i]);
      }
    }
    std::vector<std::vector<Item>> out;
    if (located && !norm_) {
      std::stable_sort(found.begin(), found.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& f : found)
        if (!f.second.empty()) out.push_back(std::move(f.second));
      return out;
    }
    // A descriptor has no statements: one per item, as Confluent's conversion makes them.
    for (const auto& [field, items] : kinds)
      for (const auto& it : items) out.push_back({it});
    if (norm_)
      std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        int ka = a[0].name.empty() ? a[0].start : INT32_MAX;
        int kb = b[0].name.empty() ? b[0].start : INT32_MAX;
        if (ka != kb) return ka < kb;
        return a[0].name < b[0].name;
      });
    return out;
  }

  static std::string list_line(const char* keyword, const std::vector<Item>& items,
                               bool normalize) {
    std::string s = keyword;
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? ", " : " ") + item_text(items[i], normalize, false);
    return s + ";\n";
  }

  std::string type_text(const FieldProto& f, const pb::FieldDescriptor* d, bool* is_map) const {
    *is_map = false;
    if (d->is_map() && (src_.from_text || norm_)) {
      *is_map = true;
      const pb::Descriptor* entry = d->message_type();
      auto value = [&]() -> std::string {
        const pb::FieldDescriptor* v = entry->map_value();
        if (norm_) {
          if (v->message_type()) return "." + v->message_type()->full_name();
          if (v->enum_type()) return "." + v->enum_type()->full_name();
        }
        // As written: the entry the parser made keeps the text's type name.
        const pb::DescriptorProto* e = entry_source(f);
        if (e != nullptr && e->field_size() == 2 && !e->field(1).type_name().empty())
          return e->field(1).type_name();
        return v->message_type() ? v->message_type()->name()
               : v->enum_type()  ? v->enum_type()->name()
                                 : scalar_name(static_cast<FieldProto::Type>(v->type()));
      };
      return "map<" + scalar_name(static_cast<FieldProto::Type>(entry->map_key()->type())) + ", " +
             value() + ">";
    }
    if (norm_ && d->message_type() && d->type() != pb::FieldDescriptor::TYPE_GROUP)
      return "." + d->message_type()->full_name();
    if (norm_ && d->enum_type()) return "." + d->enum_type()->full_name();
    if (!f.type_name().empty()) return f.type_name();
    return scalar_name(f.type());
  }

  // The parser's entry message for a map field of the message being printed.
  const pb::DescriptorProto* entry_source(const FieldProto& f) const {
    if (current_ == nullptr) return nullptr;
    for (const auto& n : current_->nested_type())
      if (n.name() == f.type_name() && n.options().map_entry()) return &n;
    return nullptr;
  }

  std::string field(const FieldProto& f, const pb::FieldDescriptor* d, bool in_oneof,
                    const std::string& scope) const {
    bool proto3 = f_.syntax() == "proto3";
    bool is_map = false;
    std::string type = type_text(f, d, &is_map);
    std::string label;
    if (!in_oneof && !is_map) {
      if (f.proto3_optional())
        label = "optional";
      else if (f.label() == FieldProto::LABEL_REPEATED)
        label = "repeated";
      else if (!proto3)
        label = lower(FieldProto::Label_Name(f.label()).substr(6));
    }
    std::string sb = label.empty() ? "" : label + " ";
    sb += type + " " + f.name() + " = " + std::to_string(f.number());
    auto opts = options(f.options(), scope);
    if (f.has_default_value() && (src_.from_text || !proto3)) {
      bool quoted = f.type() == FieldProto::TYPE_STRING;
      opts.push_back(pseudo_option(
          "default", quoted ? "\"" + escape_chars(f.default_value()) + "\"" : f.default_value()));
    }
    if (f.has_json_name())
      opts.push_back(pseudo_option("json_name", "\"" + escape_chars(f.json_name()) + "\""));
    if (norm_)
      std::stable_sort(opts.begin(), opts.end(),
                       [](const auto& a, const auto& b) { return a.name < b.name; });
    if (!opts.empty()) {
      sb += " ";
      bracketed(sb, opts);
    }
    return sb + ";\n";
  }

  template <typename Built>
  std::string extends(const pb::RepeatedPtrField<FieldProto>& fields, Built built,
                      const std::string& scope) const {
    // Runs of one extendee make one block; normalize groups them by the resolved target.
    std::vector<std::pair<std::string, std::vector<int>>> blocks;
    for (int k = 0; k < fields.size(); ++k) {
      std::string target =
          norm_ ? "." + built(k)->containing_type()->full_name() : fields[k].extendee();
      auto it = std::find_if(blocks.begin(), blocks.end(),
                             [&](const auto& b) { return b.first == target; });
      if (it == blocks.end() || (!norm_ && it != blocks.end() - 1))
        blocks.push_back({target, {k}});
      else
        it->second.push_back(k);
    }
    std::string sb;
    for (auto& [target, ks] : blocks) {
      if (norm_)
        std::stable_sort(ks.begin(), ks.end(),
                         [&](int a, int b) { return fields[a].number() < fields[b].number(); });
      sb += "extend " + target + " {";
      if (!ks.empty()) sb += '\n';
      for (int k : ks) indent_lines(sb, field(fields[k], built(k), false, scope));
      sb += "}\n";
    }
    return sb;
  }

  std::string message(const pb::DescriptorProto& m, const pb::Descriptor* d,
                      const std::vector<int>& path) {
    const pb::DescriptorProto* saved = current_;
    current_ = &m;
    std::string sb = "message " + m.name() + " {";
    std::vector<Item> ranges, names;
    for (const auto& r : m.reserved_range()) ranges.push_back({"", r.start(), r.end() - 1});
    for (const auto& n : m.reserved_name()) names.push_back({n, 0, 0});
    if (!ranges.empty() || !names.empty()) {
      sb += '\n';
      for (const auto& s : statements(path, {{9, ranges}, {10, names}}))
        indent_lines(sb, list_line("reserved", s, norm_));
    }
    auto opts = options(m.options(), d->full_name());
    if (!opts.empty()) {
      sb += '\n';
      for (const auto& o : opts) indent_lines(sb, "option " + o.text + ";\n");
    }
    // Plain fields, oneofs and (text input) groups are separate sections, as in wire's tree.
    std::vector<int> plain, groups;
    std::vector<std::vector<int>> oneofs(m.oneof_decl_size());
    for (int j = 0; j < m.field_size(); ++j) {
      const FieldProto& f = m.field(j);
      if (f.has_oneof_index() && !f.proto3_optional() && f.oneof_index() < m.oneof_decl_size())
        oneofs[f.oneof_index()].push_back(j);
      else if (src_.from_text && f.type() == FieldProto::TYPE_GROUP)
        groups.push_back(j);
      else
        plain.push_back(j);
    }
    auto by_tag = [&](std::vector<int>& v) {
      if (norm_)
        std::stable_sort(v.begin(), v.end(),
                         [&](int a, int b) { return m.field(a).number() < m.field(b).number(); });
    };
    if (!plain.empty()) {
      sb += '\n';
      by_tag(plain);
      for (int j : plain) indent_lines(sb, field(m.field(j), d->field(j), false, d->full_name()));
    }
    std::vector<int> order;
    for (int o = 0; o < m.oneof_decl_size(); ++o) {
      by_tag(oneofs[o]);
      // Synthetic oneofs of proto3 optional fields are not oneofs to Confluent; normalize and
      // descriptor inputs drop empty ones too.
      if (!oneofs[o].empty() || (src_.from_text && !norm_ && !synthetic(m, o))) order.push_back(o);
    }
    if (norm_)
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return m.field(oneofs[a][0]).number() < m.field(oneofs[b][0]).number();
      });
    if (!order.empty()) {
      sb += '\n';
      for (int o : order) {
        std::string one = "oneof " + m.oneof_decl(o).name() + " {";
        auto oo = options(m.oneof_decl(o).options(), d->full_name());
        if (!oo.empty()) {
          one += '\n';
          for (const auto& x : oo) indent_lines(one, "option " + x.text + ";\n");
        }
        if (!oneofs[o].empty()) one += '\n';
        for (int j : oneofs[o])
          indent_lines(one, field(m.field(j), d->field(j), true, d->full_name()));
        indent_lines(sb, one + "}\n");
      }
    }
    if (!groups.empty()) {
      sb += '\n';
      by_tag(groups);
      for (int j : groups) indent_lines(sb, group(m, j, d->field(j)));
    }
    if (m.extension_range_size() > 0) {
      sb += '\n';
      std::vector<Item> ext;
      for (const auto& r : m.extension_range()) ext.push_back({"", r.start(), r.end() - 1});
      for (const auto& s : statements(path, {{5, ext}}))
        indent_lines(sb, list_line("extensions", s, norm_));
    }
    if (m.extension_size() > 0) {
      sb += '\n';
      indent_lines(sb, extends(
                           m.extension(), [&](int k) { return d->extension(k); }, d->full_name()));
    }
    std::string nested;
    for (int i = 0; i < m.nested_type_size(); ++i) {
      if (skipped(m.nested_type(i), d->nested_type(i), &m.field())) continue;
      auto p = path;
      p.insert(p.end(), {3, i});
      indent_lines(nested, message(m.nested_type(i), d->nested_type(i), p));
    }
    for (int i = 0; i < m.enum_type_size(); ++i) {
      auto p = path;
      p.insert(p.end(), {4, i});
      indent_lines(nested, enumeration(m.enum_type(i), p));
    }
    if (!nested.empty()) sb += "\n" + nested;
    current_ = saved;
    return sb + "}\n";
  }

  static bool synthetic(const pb::DescriptorProto& m, int o) {
    for (const auto& f : m.field())
      if (f.has_oneof_index() && f.oneof_index() == o) return f.proto3_optional();
    return false;
  }

  std::string group(const pb::DescriptorProto& m, int j, const pb::FieldDescriptor* d) {
    const FieldProto& f = m.field(j);
    std::string sb = lower(FieldProto::Label_Name(f.label()).substr(6)) + " group " +
                     f.type_name() + " = " + std::to_string(f.number()) + " {";
    const pb::DescriptorProto* body = nullptr;
    for (const auto& n : m.nested_type())
      if (n.name() == f.type_name()) body = &n;
    if (body != nullptr && body->field_size() > 0) {
      sb += '\n';
      std::vector<int> order(body->field_size());
      for (int k = 0; k < body->field_size(); ++k) order[k] = k;
      if (norm_)
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
          return body->field(a).number() < body->field(b).number();
        });
      const pb::Descriptor* bd = d->message_type();
      for (int k : order)
        indent_lines(sb, field(body->field(k), bd->field(k), false, bd->full_name()));
    }
    return sb + "}\n";
  }

  std::string enumeration(const pb::EnumDescriptorProto& e, const std::vector<int>& path) const {
    std::string sb = "enum " + e.name() + " {";
    std::vector<Item> ranges, names;
    for (const auto& r : e.reserved_range()) ranges.push_back({"", r.start(), r.end()});
    for (const auto& n : e.reserved_name()) names.push_back({n, 0, 0});
    bool reserved = !ranges.empty() || !names.empty();
    if (reserved) {
      sb += '\n';
      for (const auto& s : statements(path, {{4, ranges}, {5, names}}))
        indent_lines(sb, list_line("reserved", s, norm_));
    }
    if (!reserved && (e.options().ByteSizeLong() > 0 || e.value_size() > 0)) sb += '\n';
    const pb::EnumDescriptor* built = pool_->FindEnumTypeByName(enum_full_name(path, e));
    std::string scope = built ? built->full_name() : f_.package();
    for (const auto& o : options(e.options(), scope)) indent_lines(sb, "option " + o.text + ";\n");
    std::vector<int> order(e.value_size());
    for (int k = 0; k < e.value_size(); ++k) order[k] = k;
    if (norm_)
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const auto &x = e.value(a), &y = e.value(b);
        return x.number() != y.number() ? x.number() < y.number() : x.name() < y.name();
      });
    for (int k : order) {
      const auto& v = e.value(k);
      std::string line = v.name() + " = " + std::to_string(v.number());
      auto vo = options(v.options(), scope);
      if (!vo.empty()) {
        line += " ";
        bracketed(line, vo);
      }
      indent_lines(sb, line + ";\n");
    }
    return sb + "}\n";
  }

  // The full name of the enum at a source path, for resolving its options' names.
  std::string enum_full_name(const std::vector<int>& path, const pb::EnumDescriptorProto& e) const {
    std::string name = f_.package();
    const pb::DescriptorProto* m = nullptr;
    for (size_t i = 0; i + 1 < path.size(); i += 2) {
      if (path[i] == 4 && i == 0)
        m = &f_.message_type(path[1]);
      else if (path[i] == 3 && m)
        m = &m->nested_type(path[i + 1]);
      else
        break;
      name += (name.empty() ? "" : ".") + m->name();
    }
    return name + (name.empty() ? "" : ".") + e.name();
  }

  std::string service(int i) const {
    const auto& s = f_.service(i);
    const pb::ServiceDescriptor* sd = built_->service(i);
    std::string sb = "service " + s.name() + " {";
    auto opts = options(s.options(), sd->full_name());
    if (!opts.empty()) {
      sb += '\n';
      for (const auto& o : opts) indent_lines(sb, "option " + o.text + ";\n");
    }
    if (s.method_size() > 0) sb += '\n';
    for (int k = 0; k < s.method_size(); ++k) {
      const auto& m = s.method(k);
      const pb::MethodDescriptor* md = sd->method(k);
      std::string in = norm_ ? "." + md->input_type()->full_name() : m.input_type();
      std::string out = norm_ ? "." + md->output_type()->full_name() : m.output_type();
      std::string rpc = "rpc " + m.name() + " (" + (m.client_streaming() ? "stream " : "") + in +
                        ") returns (" + (m.server_streaming() ? "stream " : "") + out + ")";
      auto mo = options(m.options(), sd->full_name());
      if (!mo.empty()) {
        rpc += " {\n";
        for (const auto& o : mo) indent_lines(rpc, "option " + o.text + ";\n");
        rpc += "}";
      }
      indent_lines(sb, rpc + ";\n");
    }
    return sb + "}\n";
  }

  const FileSource& src_;
  const pb::FileDescriptorProto& f_;
  const pb::FileDescriptor* built_;
  const pb::DescriptorPool* pool_;
  bool norm_;
  std::map<std::vector<int>, std::vector<std::array<int, 2>>> spans_;
  const pb::DescriptorProto* current_ = nullptr;
};

}  // namespace

std::string print_schema(const SchemaData& schema, bool normalize) {
  return Printer(schema, normalize).file();
}

}  // namespace oxbow::registry::protobuf
