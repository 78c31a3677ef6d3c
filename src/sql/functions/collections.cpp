// Array and map functions (docs/sql/ksqldb-facts.md §5.3 "Collections"). Elements compare as
// Java's equals and compareTo do; NULL elements are kept unless a function says otherwise.
#include <algorithm>

#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

using Items = std::vector<Value>;

bool contains(const Items& items, const Value& v) {
  return std::any_of(items.begin(), items.end(), [&](const Value& e) { return same_value(e, v); });
}

// The first of each run of equal elements, in order.
Items distinct(const Items& items) {
  Items out;
  for (const auto& e : items)
    if (!contains(out, e)) out.push_back(e);
  return out;
}

void array_length(FunctionCall& call) {
  call.out().set_integer(static_cast<int32_t>(call[0].items().size()));
}

void array_concat(FunctionCall& call) {
  if (call[0].is_null() && call[1].is_null()) return call.out().set_null();
  Items out;
  for (size_t k = 0; k < 2; ++k)
    if (!call[k].is_null()) out.insert(out.end(), call[k].items().begin(), call[k].items().end());
  set_items(call.out(), Kind::kArray, std::move(out));
}

void array_contains(FunctionCall& call) {
  call.out().set_boolean(!call[0].is_null() && contains(call[0].items(), call[1]));
}

void array_distinct(FunctionCall& call) {
  set_items(call.out(), Kind::kArray, distinct(call[0].items()));
}

void array_except(FunctionCall& call) {
  Items out;
  for (const auto& e : distinct(call[0].items()))
    if (!contains(call[1].items(), e)) out.push_back(e);
  set_items(call.out(), Kind::kArray, std::move(out));
}

void array_intersect(FunctionCall& call) {
  Items out;
  for (const auto& e : distinct(call[0].items()))
    if (contains(call[1].items(), e)) out.push_back(e);
  set_items(call.out(), Kind::kArray, std::move(out));
}

void array_union(FunctionCall& call) {
  Items all = call[0].items();
  all.insert(all.end(), call[1].items().begin(), call[1].items().end());
  set_items(call.out(), Kind::kArray, distinct(all));
}

// Elements as Java's toString prints them, NULL as "null"; only primitives may be joined.
void array_join(FunctionCall& call) {
  if (call[0].is_null()) return call.out().set_null();
  std::string delimiter = call.size() > 1 && !call[1].is_null() ? call[1].text()
                          : call.size() > 1                     ? ""
                                                                : ",";
  std::string& s = scratch();
  bool first = true;
  for (const auto& e : call[0].items()) {
    if (!first) s += delimiter;
    first = false;
    switch (e.kind()) {
      case Kind::kNull:
        s += "null";
        break;
      case Kind::kBoolean:
      case Kind::kInteger:
      case Kind::kBigint:
      case Kind::kDouble:
      case Kind::kDecimal:
      case Kind::kString:
        s += ops::cast_text(e);
        break;
      default:
        return call.fail("error: hit element of type " + call.arg_type(0)->element()->to_string() +
                         " which is currently not supported");
    }
  }
  set_string(call.out(), s);
}

template <int Sign>
void array_extreme(FunctionCall& call) {
  const Value* best = nullptr;
  for (const auto& e : call[0].items())
    if (!e.is_null() && (!best || ops::compare_values(e, *best) * Sign > 0)) best = &e;
  if (!best) return call.out().set_null();
  call.out() = *best;
}

void array_remove(FunctionCall& call) {
  if (call[0].is_null()) return call.out().set_null();
  Items out;
  for (const auto& e : call[0].items())
    if (!same_value(e, call[1])) out.push_back(e);
  set_items(call.out(), Kind::kArray, std::move(out));
}

// NULLs last in either direction; an unknown direction gives NULL.
void array_sort(FunctionCall& call) {
  std::string direction = call.size() > 1 ? call[1].text() : "ASC";
  for (char& c : direction) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  bool ascending = direction == "ASC" || direction == "ASCENDING";
  if (!ascending && direction != "DESC" && direction != "DESCENDING") return call.out().set_null();
  Items out = call[0].items();
  std::stable_sort(out.begin(), out.end(), [&](const Value& a, const Value& b) {
    if (a.is_null() || b.is_null()) return !a.is_null() && b.is_null();
    int c = ops::compare_values(a, b);
    return ascending ? c < 0 : c > 0;
  });
  set_items(call.out(), Kind::kArray, std::move(out));
}

// 1-based and inclusive; a NULL bound is the array's end; outside the array gives NULL.
void slice(FunctionCall& call) {
  if (call[0].is_null()) return call.out().set_null();
  const Items& in = call[0].items();
  int64_t size = static_cast<int64_t>(in.size());
  int64_t start = call[1].is_null() ? 0 : call[1].as_int64() - 1;
  int64_t end = call[2].is_null() ? size : call[2].as_int64();
  if (start < 0 || end > size || start > end) return call.out().set_null();
  set_items(call.out(), Kind::kArray, Items(in.begin() + start, in.begin() + end));
}

void entries(FunctionCall& call) {
  const Items& map = call[0].items();
  std::vector<size_t> order;
  for (size_t k = 0; k + 1 < map.size(); k += 2) order.push_back(k);
  if (call[1].boolean())
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return map[a].text() < map[b].text(); });
  Items out;
  for (size_t k : order) {
    out.emplace_back();
    set_items(out.back(), Kind::kStruct, {map[k], map[k + 1]});
  }
  set_items(call.out(), Kind::kArray, std::move(out));
}

SqlTypePtr entries_type(const std::vector<SqlTypePtr>& args) {
  if (!args.at(0)) return nullptr;
  return SqlType::array(SqlType::structure({{"K", SqlType::string()}, {"V", args[0]->element()}}));
}

// Sets `key` to `value` in a map's items, replacing an earlier entry of the key.
void put(Items& map, const Value& key, const Value& value) {
  for (size_t k = 0; k + 1 < map.size(); k += 2)
    if (same_value(map[k], key)) return void(map[k + 1] = value);
  map.push_back(key);
  map.push_back(value);
}

void as_map(FunctionCall& call) {
  const Items &keys = call[0].items(), &values = call[1].items();
  Items out;
  for (size_t k = 0; k < keys.size(); ++k)
    put(out, keys[k], k < values.size() ? values[k] : Value());
  set_items(call.out(), Kind::kMap, std::move(out));
}

template <size_t Part>
void map_part(FunctionCall& call) {
  const Items& map = call[0].items();
  Items out;
  for (size_t k = Part; k < map.size(); k += 2) out.push_back(map[k]);
  set_items(call.out(), Kind::kArray, std::move(out));
}

void map_union(FunctionCall& call) {
  if (call[0].is_null() && call[1].is_null()) return call.out().set_null();
  Items out;
  for (size_t m = 0; m < 2; ++m) {
    if (call[m].is_null()) continue;
    const Items& map = call[m].items();
    for (size_t k = 0; k + 1 < map.size(); k += 2) put(out, map[k], map[k + 1]);
  }
  set_items(call.out(), Kind::kMap, std::move(out));
}

FunctionVariant seeing_nulls(FunctionVariant v) {
  v.sees_nulls = true;
  return v;
}

}  // namespace

void add_collection_functions(std::vector<FunctionInfo>& out) {
  out.push_back(scalar("ARRAY_LENGTH", kArray, "The number of elements of an array.",
                       {signature("array ARRAY<T>", "INT", array_length)}));
  out.push_back(scalar_seeing_nulls(
      "ARRAY_CONCAT", kArray, "The two arrays end to end; NULL only when both are.",
      {signature("left ARRAY<T>, right ARRAY<T>", "ARRAY<T>", array_concat)}));
  out.push_back(scalar_seeing_nulls(
      "ARRAY_CONTAINS", kArray, "Whether the array is not NULL and holds the value.",
      {signature("array ARRAY<T>, val T", "BOOLEAN", array_contains)}));
  out.push_back(scalar("ARRAY_DISTINCT", kArray, "The array without repeated elements.",
                       {signature("input ARRAY<T>", "ARRAY<T>", array_distinct)}));
  out.push_back(scalar("ARRAY_EXCEPT", kArray,
                       "The distinct elements of the first array that the second lacks.",
                       {signature("left ARRAY<T>, right ARRAY<T>", "ARRAY<T>", array_except)}));
  out.push_back(scalar("ARRAY_INTERSECT", kArray,
                       "The distinct elements of the first array that the second holds too.",
                       {signature("left ARRAY<T>, right ARRAY<T>", "ARRAY<T>", array_intersect)}));
  out.push_back(scalar("ARRAY_UNION", kArray, "The distinct elements of both arrays.",
                       {signature("left ARRAY<T>, right ARRAY<T>", "ARRAY<T>", array_union)}));
  out.push_back(scalar(
      "ARRAY_JOIN", kArray,
      "The elements of an array of primitives as text, joined by a delimiter (',' if not given).",
      {signature("array ARRAY<T>", "VARCHAR", array_join),
       seeing_nulls(signature("array ARRAY<T>, delimiter VARCHAR", "VARCHAR", array_join))}));
  out.push_back(scalar("ARRAY_MAX", kArray, "The greatest non-NULL element of an array.",
                       {signature("input ARRAY<T>", "T", array_extreme<1>)}));
  out.push_back(scalar("ARRAY_MIN", kArray, "The least non-NULL element of an array.",
                       {signature("input ARRAY<T>", "T", array_extreme<-1>)}));
  out.push_back(scalar_seeing_nulls(
      "ARRAY_REMOVE", kArray, "The array without the elements equal to a value.",
      {signature("array ARRAY<T>, victim T", "ARRAY<T>", array_remove)}));
  out.push_back(
      scalar("ARRAY_SORT", kArray,
             "The array sorted ASC (the default) or DESC, NULLs last; NULL for another direction.",
             {signature("input ARRAY<T>", "ARRAY<T>", array_sort),
              signature("input ARRAY<T>, direction VARCHAR", "ARRAY<T>", array_sort)}));
  out.push_back(scalar_seeing_nulls(
      "SLICE", kArray,
      "The elements from one position to another (1-based, inclusive; NULL bounds are the "
      "ends); NULL when they fall outside the array.",
      {signature("in ARRAY<T>, from INT, to INT", "ARRAY<T>", slice)}));
  out.push_back(scalar("ENTRIES", kMap,
                       "A map's entries as an array of STRUCT<K, V>, sorted by key if asked.",
                       {signature("map MAP<VARCHAR, T>, sorted BOOLEAN",
                                  "ARRAY<STRUCT<K VARCHAR, V T>>", entries_type, entries)}));
  out.push_back(scalar(
      "AS_MAP", kMap, "A map of the keys to the values at the same positions (NULL past the end).",
      {signature("keys ARRAY<VARCHAR>, values ARRAY<T>", "MAP<VARCHAR, T>", as_map)}));
  out.push_back(scalar("MAP_KEYS", kMap, "A map's keys.",
                       {signature("input MAP<VARCHAR, T>", "ARRAY<VARCHAR>", map_part<0>)}));
  out.push_back(scalar("MAP_VALUES", kMap, "A map's values.",
                       {signature("input MAP<VARCHAR, T>", "ARRAY<T>", map_part<1>)}));
  out.push_back(scalar_seeing_nulls(
      "MAP_UNION", kMap, "The entries of both maps, the second's winning; NULL when both are.",
      {signature("map1 MAP<VARCHAR, T>, map2 MAP<VARCHAR, T>", "MAP<VARCHAR, T>", map_union)}));
}

}  // namespace oxbow::sql::functions
