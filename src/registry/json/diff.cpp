// Confluent's SchemaDiff (json-schema-provider, 7.9 branch), re-stated over our Nodes: the same
// order of checks, the same paths, the same memoisation of compared pairs (cycles through $ref
// count as compatible, iterated to a fixpoint) and Java's HashSet order for property names.
#include "registry/json/diff.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "registry/json/java.h"
#include "registry/json/node.h"

namespace oxbow::registry::json {

using detail::Criterion;
using detail::Kind;
using detail::Node;
using T = DifferenceType;

namespace {

// Pairs deeper than this are reported as a type change rather than compared; reached only by
// long $ref chains, since the text's own nesting is capped far below.
constexpr int kMaxDepth = 512;

using Pair = std::pair<const Node*, const Node*>;
using Memo = std::map<Pair, std::vector<Difference>>;

struct Shared {
  Memo memo;
  std::set<Pair> in_progress;
  const Memo* seed = nullptr;
  bool optimism = false;
  int depth = 0;
  std::map<const Node*, std::string> keys;
};

struct Ctx {
  Shared* shared;
  std::vector<std::string> path;
  std::vector<Difference> diffs;

  Ctx sub() const { return Ctx{shared, path, {}}; }
  std::string path_string() const {
    std::string out = "#/";
    for (size_t i = 0; i < path.size(); ++i) out += (i ? "/" : "") + path[i];
    return out;
  }
  void add(T type) { diffs.push_back({type, path_string()}); }
  void add(const std::string& keyword, T type) {
    path.push_back(keyword);
    add(type);
    path.pop_back();
  }
  void add_all(const std::vector<Difference>& more) {
    diffs.insert(diffs.end(), more.begin(), more.end());
  }
  void add_rebased(const std::vector<Difference>& relative) {
    if (path.empty()) return add_all(relative);
    std::string prefix = path_string();
    for (const auto& d : relative)
      diffs.push_back({d.type, d.path.size() <= 2 ? prefix : prefix + "/" + d.path.substr(2)});
  }
  bool compatible() const {
    return std::all_of(diffs.begin(), diffs.end(), [](auto& d) { return is_compatible(d.type); });
  }
};

struct Scope {
  Ctx& ctx;
  Scope(Ctx& c, std::string segment) : ctx(c) { ctx.path.push_back(std::move(segment)); }
  ~Scope() { ctx.path.pop_back(); }
};

template <typename V>
const V* lookup(const std::vector<std::pair<std::string, V>>& entries, const std::string& key) {
  for (const auto& e : entries)
    if (e.first == key) return &e.second;
  return nullptr;
}

template <typename V>
std::vector<std::string> map_order(const std::vector<std::pair<std::string, V>>& entries) {
  std::vector<std::string> keys;
  for (const auto& e : entries) keys.push_back(e.first);
  return detail::java_map_order(keys);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class Differ {
 public:
  explicit Differ(Shared& s) : s_(s) {}

  void compare(Ctx& ctx, const Node* original, const Node* update) {
    if (!original && !update) return;
    if (!original) return ctx.add(T::SCHEMA_ADDED);
    if (!update) return ctx.add(T::SCHEMA_REMOVED);
    // One level only, as Confluent replaces a reference by what it points to once.
    if (original->kind == Kind::kRef) original = original->target;
    if (update->kind == Kind::kRef) update = update->target;
    if (s_.depth >= kMaxDepth) return ctx.add(T::TYPE_CHANGED);
    Pair key{original, update};
    if (auto it = s_.memo.find(key); it != s_.memo.end()) return ctx.add_rebased(it->second);
    if (!s_.in_progress.insert(key).second) {
      if (auto it = s_.seed->find(key); it != s_.seed->end()) return ctx.add_rebased(it->second);
      s_.optimism = true;
      return;
    }
    Ctx pair{&s_, {}, {}};
    ++s_.depth;
    types(pair, *original, *update);
    --s_.depth;
    s_.in_progress.erase(key);
    auto& stored = s_.memo[key] = std::move(pair.diffs);
    ctx.add_rebased(stored);
  }

 private:
  void types(Ctx& ctx, const Node& original, const Node& update) {
    bool combined_o = original.kind == Kind::kCombined, combined_u = update.kind == Kind::kCombined;
    if (!combined_o && combined_u) {
      if (update.subschemas.size() == 1) {
        Ctx sub = ctx.sub();
        compare(sub, &original, update.subschemas[0]);
        if (sub.compatible()) return ctx.add_all(sub.diffs);
      } else if (update.criterion != Criterion::kAll) {
        for (const Node* branch : update.subschemas) {
          Ctx sub = ctx.sub();
          compare(sub, &original, branch);
          if (sub.compatible()) {
            ctx.add_all(sub.diffs);
            return ctx.add(T::SUM_TYPE_EXTENDED);
          }
        }
      }
    } else if (combined_o && !combined_u) {
      if (original.subschemas.size() == 1) {
        Ctx sub = ctx.sub();
        compare(sub, original.subschemas[0], &update);
        if (sub.compatible()) return ctx.add_all(sub.diffs);
      } else if (original.criterion == Criterion::kAll) {
        for (const Node* branch : original.subschemas) {
          Ctx sub = ctx.sub();
          compare(sub, branch, &update);
          if (sub.compatible()) {
            ctx.add_all(sub.diffs);
            return ctx.add(T::PRODUCT_TYPE_NARROWED);
          }
        }
      }
    }
    if (original.kind != update.kind) {
      if (original.kind == Kind::kFalse || update.kind == Kind::kEmpty ||
          update.kind == Kind::kTrue)
        return;
      if (original.connect_bytes && update.connect_bytes) return;
      return ctx.add(T::TYPE_CHANGED);
    }
    if (original.id != update.id) ctx.add(T::ID_CHANGED);
    if (original.title != update.title) ctx.add(T::TITLE_CHANGED);
    if (original.description != update.description) ctx.add(T::DESCRIPTION_CHANGED);
    if (original.default_value != update.default_value) ctx.add(T::DEFAULT_CHANGED);
    switch (original.kind) {
      case Kind::kString:
        return strings(ctx, original, update);
      case Kind::kNumber:
        return numbers(ctx, original, update);
      case Kind::kConst:
        if (original.values[0] != update.values[0]) ctx.add("const", T::ENUM_ARRAY_CHANGED);
        return;
      case Kind::kEnum:
        return enums(ctx, original, update);
      case Kind::kCombined:
        return combined(ctx, original, update);
      case Kind::kNot: {
        Scope scope(ctx, "not");
        Ctx sub = ctx.sub();
        compare(sub, update.subschemas[0], original.subschemas[0]);
        return ctx.add(sub.compatible() ? T::NOT_TYPE_NARROWED : T::NOT_TYPE_EXTENDED);
      }
      case Kind::kObject:
        return objects(ctx, original, update);
      case Kind::kArray:
        return arrays(ctx, original, update);
      default:
        return;
    }
  }

  template <typename V>
  static void limit(Ctx& ctx, const char* keyword, const std::optional<V>& o,
                    const std::optional<V>& u, T added, T removed, T increased, T decreased) {
    if (o == u) return;
    if (!o)
      ctx.add(keyword, added);
    else if (!u)
      ctx.add(keyword, removed);
    else if (*o < *u)
      ctx.add(keyword, increased);
    else if (*o > *u)
      ctx.add(keyword, decreased);
  }

  static void strings(Ctx& ctx, const Node& o, const Node& u) {
    limit(ctx, "maxLength", o.max_length, u.max_length, T::MAX_LENGTH_ADDED, T::MAX_LENGTH_REMOVED,
          T::MAX_LENGTH_INCREASED, T::MAX_LENGTH_DECREASED);
    limit(ctx, "minLength", o.min_length, u.min_length, T::MIN_LENGTH_ADDED, T::MIN_LENGTH_REMOVED,
          T::MIN_LENGTH_INCREASED, T::MIN_LENGTH_DECREASED);
    if (!o.pattern && u.pattern)
      ctx.add("pattern", T::PATTERN_ADDED);
    else if (o.pattern && !u.pattern)
      ctx.add("pattern", T::PATTERN_REMOVED);
    else if (o.pattern && u.pattern && o.pattern->source() != u.pattern->source())
      ctx.add("pattern", T::PATTERN_CHANGED);
  }

  static void numbers(Ctx& ctx, const Node& o, const Node& u) {
    limit(ctx, "maximum", o.maximum, u.maximum, T::MAXIMUM_ADDED, T::MAXIMUM_REMOVED,
          T::MAXIMUM_INCREASED, T::MAXIMUM_DECREASED);
    limit(ctx, "minimum", o.minimum, u.minimum, T::MINIMUM_ADDED, T::MINIMUM_REMOVED,
          T::MINIMUM_INCREASED, T::MINIMUM_DECREASED);
    const auto &oe = o.exclusive_maximum, &ue = u.exclusive_maximum;
    if (oe != ue) {
      if (!oe)
        ctx.add("exclusiveMaximum", T::EXCLUSIVE_MAXIMUM_ADDED);
      else if (!ue)
        ctx.add("exclusiveMaximum", T::EXCLUSIVE_MAXIMUM_REMOVED);
      else if (*oe < *ue)
        ctx.add("exclusiveMaximum", T::EXCLUSIVE_MAXIMUM_INCREASED);
      // Confluent compares with the new `maximum` here (a slip it has in every version); where
      // that is absent Java would throw, and the decrease is reported instead.
      else if (*oe > (u.maximum ? *u.maximum : *ue))
        ctx.add("exclusiveMaximum", T::EXCLUSIVE_MAXIMUM_DECREASED);
    }
    limit(ctx, "exclusiveMinimum", o.exclusive_minimum, u.exclusive_minimum,
          T::EXCLUSIVE_MINIMUM_ADDED, T::EXCLUSIVE_MINIMUM_REMOVED, T::EXCLUSIVE_MINIMUM_INCREASED,
          T::EXCLUSIVE_MINIMUM_DECREASED);
    const auto &om = o.multiple_of, &um = u.multiple_of;
    if (om != um) {
      if (!om)
        ctx.add("multipleOf", T::MULTIPLE_OF_ADDED);
      else if (!um)
        ctx.add("multipleOf", T::MULTIPLE_OF_REMOVED);
      else if (*om != 0 && detail::java_divides(*um, *om))
        ctx.add("multipleOf", T::MULTIPLE_OF_EXPANDED);
      else if (*um != 0 && detail::java_divides(*om, *um))
        ctx.add("multipleOf", T::MULTIPLE_OF_REDUCED);
      else
        ctx.add("multipleOf", T::MULTIPLE_OF_CHANGED);
    }
    if (o.requires_integer != u.requires_integer)
      ctx.add(o.requires_integer ? T::TYPE_EXTENDED : T::TYPE_NARROWED);
  }

  static bool contains_all(const std::vector<nlohmann::json>& a,
                           const std::vector<nlohmann::json>& b) {
    return std::all_of(b.begin(), b.end(),
                       [&](auto& v) { return std::find(a.begin(), a.end(), v) != a.end(); });
  }

  static void enums(Ctx& ctx, const Node& o, const Node& u) {
    bool extended = contains_all(u.values, o.values), narrowed = contains_all(o.values, u.values);
    if (extended && narrowed) return;
    ctx.add("enum", extended   ? T::ENUM_ARRAY_EXTENDED
                    : narrowed ? T::ENUM_ARRAY_NARROWED
                               : T::ENUM_ARRAY_CHANGED);
  }

  const std::string& key(const Node* n) {
    auto [it, fresh] = s_.keys.try_emplace(n);
    // Everit prints a schema in its own key order: compare texts with sorted keys.
    if (fresh)
      it->second = std::string(n->tag) + ":" + (n->raw ? nlohmann::json(*n->raw).dump() : "");
    return it->second;
  }

  std::vector<const Node*> distinct(const Node& n) {
    std::vector<const Node*> out;
    std::set<std::string> seen;
    for (const Node* s : n.subschemas)
      if (seen.insert(key(s)).second) out.push_back(s);
    return out;
  }

  void combined(Ctx& ctx, const Node& o, const Node& u) {
    Criterion oc = o.criterion, uc = u.criterion;
    if (oc != uc) {
      bool o1 = o.subschemas.size() == 1, u1 = u.subschemas.size() == 1;
      if (uc == Criterion::kAny || (o1 && u1) || (o1 && uc == Criterion::kOne) ||
          (u1 && oc == Criterion::kAll)) {
        ctx.add(T::COMBINED_TYPE_EXTENDED);
      } else {
        return ctx.add(T::COMBINED_TYPE_CHANGED);
      }
    }
    auto originals = distinct(o), updates = distinct(u);
    if (originals.size() < updates.size())
      ctx.add(uc == Criterion::kAll ? T::PRODUCT_TYPE_EXTENDED : T::SUM_TYPE_EXTENDED);
    else if (originals.size() > updates.size())
      ctx.add(oc == Criterion::kAll ? T::PRODUCT_TYPE_NARROWED : T::SUM_TYPE_NARROWED);
    // Compatible pairs, then the largest matching of them (Kuhn's augmenting paths).
    std::vector<std::vector<std::optional<std::vector<Difference>>>> edges(originals.size());
    for (size_t i = 0; i < originals.size(); ++i) {
      Scope scope(ctx, std::string(detail::criterion_name(oc)) + "/" + std::to_string(i));
      for (const Node* candidate : updates) {
        Ctx sub = ctx.sub();
        compare(sub, originals[i], candidate);
        edges[i].push_back(sub.compatible() ? std::optional(std::move(sub.diffs)) : std::nullopt);
      }
    }
    std::vector<int> owner(updates.size(), -1);
    std::vector<char> visited;
    std::function<bool(size_t)> augment = [&](size_t i) {
      for (size_t j = 0; j < updates.size(); ++j) {
        if (!edges[i][j] || visited[j]) continue;
        visited[j] = 1;
        if (owner[j] < 0 || augment(static_cast<size_t>(owner[j]))) {
          owner[j] = static_cast<int>(i);
          return true;
        }
      }
      return false;
    };
    size_t matched = 0;
    for (size_t i = 0; i < originals.size(); ++i) {
      visited.assign(updates.size(), 0);
      if (augment(i)) ++matched;
    }
    for (size_t j = 0; j < updates.size(); ++j)
      if (owner[j] >= 0) ctx.add_all(*edges[static_cast<size_t>(owner[j])][j]);
    if (matched < std::min(originals.size(), updates.size()))
      ctx.add(T::COMBINED_TYPE_SUBSCHEMAS_CHANGED);
  }

  static bool open(const Node& n) {
    return n.pattern_properties.empty() && !n.additional && n.permits_additional;
  }
  static const Node* cover(const Node& n, const std::string& name) {
    for (const auto& [pattern, schema] : n.pattern_properties)
      if (pattern->find(name).value_or(false)) return schema;
    return n.additional;
  }

  // A property or item on one side only, judged by a partially open model's cover: the
  // sub-differences, then whether it is covered.
  void covered(Ctx& ctx, const Node* from, const Node* to, T yes, T no) {
    Ctx sub = ctx.sub();
    compare(sub, from, to);
    ctx.add_all(sub.diffs);
    ctx.add(sub.compatible() ? yes : no);
  }

  void objects(Ctx& ctx, const Node& o, const Node& u) {
    auto o_names = map_order(o.properties), u_names = map_order(u.properties);
    {
      Scope scope(ctx, "required");
      for (const auto& name : o_names) {
        if (!lookup(u.properties, name)) continue;
        Scope inner(ctx, name);
        bool was = contains(o.required, name), is = contains(u.required, name);
        if (was && !is)
          ctx.add(T::REQUIRED_ATTRIBUTE_REMOVED);
        else if (!was && is)
          ctx.add((*lookup(u.properties, name))->default_value
                      ? T::REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED
                      : T::REQUIRED_ATTRIBUTE_ADDED);
      }
    }
    {
      Scope scope(ctx, "properties");
      for (const auto& name : detail::java_union_order(o_names, u_names)) {
        Scope inner(ctx, name);
        auto op = lookup(o.properties, name), up = lookup(u.properties, name);
        if (!up) {
          if (open(u))
            ctx.add(T::PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL);
          else if (const Node* c = cover(u, name))
            covered(ctx, *op, c, T::PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                    T::PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL);
          else
            ctx.add((*op)->kind == Kind::kFalse
                        ? T::PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
                        : T::PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL);
        } else if (!op) {
          Kind k = (*up)->kind;
          if (open(o)) {
            ctx.add(k == Kind::kEmpty || k == Kind::kTrue
                        ? T::PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
                        : T::PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL);
            continue;
          }
          if (const Node* c = cover(o, name))
            covered(ctx, c, *up, T::PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                    T::PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL);
          if (!contains(u.required, name))
            ctx.add(T::OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL);
          else if ((*up)->default_value)
            ctx.add(T::REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL);
          else
            ctx.add(T::REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL);
        } else {
          compare(ctx, *op, *up);
        }
      }
    }
    {
      Scope scope(ctx, "dependencies");
      auto o_deps = map_order(o.property_dependencies), u_deps = map_order(u.property_dependencies);
      for (const auto& name : detail::java_union_order(o_deps, u_deps)) {
        Scope inner(ctx, name);
        auto od = lookup(o.property_dependencies, name), ud = lookup(u.property_dependencies, name);
        if (!ud) {
          ctx.add(T::DEPENDENCY_ARRAY_REMOVED);
        } else if (!od) {
          ctx.add(T::DEPENDENCY_ARRAY_ADDED);
        } else {
          std::set<std::string> a(od->begin(), od->end()), b(ud->begin(), ud->end());
          if (a == b) continue;
          if (std::includes(b.begin(), b.end(), a.begin(), a.end()))
            ctx.add(T::DEPENDENCY_ARRAY_EXTENDED);
          else if (std::includes(a.begin(), a.end(), b.begin(), b.end()))
            ctx.add(T::DEPENDENCY_ARRAY_NARROWED);
          else
            ctx.add(T::DEPENDENCY_ARRAY_CHANGED);
        }
      }
      o_deps = map_order(o.schema_dependencies), u_deps = map_order(u.schema_dependencies);
      for (const auto& name : detail::java_union_order(o_deps, u_deps)) {
        Scope inner(ctx, name);
        auto od = lookup(o.schema_dependencies, name), ud = lookup(u.schema_dependencies, name);
        if (!ud)
          ctx.add(T::DEPENDENCY_SCHEMA_REMOVED);
        else if (!od)
          ctx.add(T::DEPENDENCY_SCHEMA_ADDED);
        else
          compare(ctx, *od, *ud);
      }
    }
    {
      Scope scope(ctx, "additionalProperties");
      if (o.permits_additional != u.permits_additional)
        ctx.add(u.permits_additional ? T::ADDITIONAL_PROPERTIES_ADDED
                                     : T::ADDITIONAL_PROPERTIES_REMOVED);
      else if (!o.additional && u.additional)
        ctx.add(T::ADDITIONAL_PROPERTIES_NARROWED);
      else if (o.additional && !u.additional)
        ctx.add(T::ADDITIONAL_PROPERTIES_EXTENDED);
      else
        compare(ctx, o.additional, u.additional);
    }
    limit(ctx, "maxProperties", o.max_properties, u.max_properties, T::MAX_PROPERTIES_ADDED,
          T::MAX_PROPERTIES_REMOVED, T::MAX_PROPERTIES_INCREASED, T::MAX_PROPERTIES_DECREASED);
    limit(ctx, "minProperties", o.min_properties, u.min_properties, T::MIN_PROPERTIES_ADDED,
          T::MIN_PROPERTIES_REMOVED, T::MIN_PROPERTIES_INCREASED, T::MIN_PROPERTIES_DECREASED);
  }

  static bool open_items(const Node& n) {
    return !n.additional_items && n.permits_additional_items;
  }

  void arrays(Ctx& ctx, const Node& o, const Node& u) {
    {
      Scope scope(ctx, "items");
      compare(ctx, o.all_items, u.all_items);
    }
    size_t common = std::min(o.item_schemas.size(), u.item_schemas.size());
    for (size_t i = 0; i < std::max(o.item_schemas.size(), u.item_schemas.size()); ++i) {
      Scope scope(ctx, "items/" + std::to_string(i));
      if (i < common) {
        compare(ctx, o.item_schemas[i], u.item_schemas[i]);
      } else if (i < o.item_schemas.size()) {
        const Node* item = o.item_schemas[i];
        if (open_items(u))
          ctx.add(T::ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL);
        else if (u.additional_items)
          covered(ctx, item, u.additional_items,
                  T::ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                  T::ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL);
        else
          ctx.add(item->kind == Kind::kFalse ? T::ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
                                             : T::ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL);
      } else {
        const Node* item = u.item_schemas[i];
        if (open_items(o))
          ctx.add(item->kind == Kind::kEmpty || item->kind == Kind::kTrue
                      ? T::ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
                      : T::ITEM_ADDED_TO_OPEN_CONTENT_MODEL);
        else if (o.additional_items)
          covered(ctx, o.additional_items, item,
                  T::ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                  T::ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL);
        else
          ctx.add(T::ITEM_ADDED_TO_CLOSED_CONTENT_MODEL);
      }
    }
    {
      Scope scope(ctx, "additionalItems");
      if (o.permits_additional_items != u.permits_additional_items)
        ctx.add(o.permits_additional_items ? T::ADDITIONAL_ITEMS_REMOVED
                                           : T::ADDITIONAL_ITEMS_ADDED);
      else if (!o.additional_items && u.additional_items)
        ctx.add(T::ADDITIONAL_ITEMS_NARROWED);
      else if (o.additional_items && !u.additional_items)
        ctx.add(T::ADDITIONAL_ITEMS_EXTENDED);
      else
        compare(ctx, o.additional_items, u.additional_items);
    }
    limit(ctx, "maxItems", o.max_items, u.max_items, T::MAX_ITEMS_ADDED, T::MAX_ITEMS_REMOVED,
          T::MAX_ITEMS_INCREASED, T::MAX_ITEMS_DECREASED);
    limit(ctx, "minItems", o.min_items, u.min_items, T::MIN_ITEMS_ADDED, T::MIN_ITEMS_REMOVED,
          T::MIN_ITEMS_INCREASED, T::MIN_ITEMS_DECREASED);
    if (o.unique_items != u.unique_items)
      ctx.add("uniqueItems", o.unique_items ? T::UNIQUE_ITEMS_REMOVED : T::UNIQUE_ITEMS_ADDED);
  }

  Shared& s_;
};

}  // namespace

std::vector<Difference> compare(const Schema& original, const Schema& update) {
  Memo seed;
  while (true) {
    Shared shared;
    shared.seed = &seed;
    Ctx ctx{&shared, {}, {}};
    Differ(shared).compare(ctx, &original.root(), &update.root());
    Memo incompatible;
    for (auto& [pair, diffs] : shared.memo)
      if (!std::all_of(diffs.begin(), diffs.end(), [](auto& d) { return is_compatible(d.type); }))
        incompatible.emplace(pair, diffs);
    bool same = incompatible.size() == seed.size() &&
                std::equal(incompatible.begin(), incompatible.end(), seed.begin(),
                           [](auto& a, auto& b) { return a.first == b.first; });
    if (!shared.optimism || same) return ctx.diffs;
    seed = std::move(incompatible);
  }
}

}  // namespace oxbow::registry::json
