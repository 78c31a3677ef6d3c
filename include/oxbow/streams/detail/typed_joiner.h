#pragma once
// Typed joiners over the untyped core's ValueJoiner, for KStream's and KTable's joins.
#include <optional>
#include <type_traits>
#include <utility>

#include "oxbow/streams/detail/dsl.h"

namespace oxbow::streams::detail {

// Joiners: joiner(left, right) or joiner(key, left, right), as Kafka's ValueJoiner and
// ValueJoinerWithKey. A side that a left or outer join may leave null is passed as std::optional
// when the joiner declares that parameter std::optional<T>; otherwise (and to generic lambdas,
// whose parameters cannot be inspected) as T{}.
template <class J, class = void>
struct HasPlainCall : std::false_type {};
template <class J>
struct HasPlainCall<J, std::void_t<decltype(&J::operator())>> : std::true_type {};
template <class J, class... A>
constexpr bool takes_nullopt() {
  if constexpr (HasPlainCall<J>::value || std::is_pointer_v<J>)
    return std::is_invocable_v<const J&, A...>;
  else
    return false;
}
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T, bool nullable>
decltype(auto) join_arg(const Datum& d) {
  if constexpr (nullable)
    return d.has_value() ? std::optional<T>(as<T>(d)) : std::optional<T>();
  else
    return as<T>(d);
}
template <class K, class V1, class V2, class VR, class J>
ValueJoiner typed_joiner(J j) {
  constexpr bool with_key = std::is_invocable_v<const J&, const K&, const V1&, const V2&>;
  constexpr bool null_left = with_key ? takes_nullopt<J, const K&, std::nullopt_t, const V2&>()
                                      : takes_nullopt<J, std::nullopt_t, const V2&>();
  constexpr bool null_right = with_key ? takes_nullopt<J, const K&, const V1&, std::nullopt_t>()
                                       : takes_nullopt<J, const V1&, std::nullopt_t>();
  return [j = std::move(j)](const Datum& k, const Datum& a, const Datum& b) -> Datum {
    if constexpr (with_key)
      return to_datum(VR(j(as<K>(k), join_arg<V1, null_left>(a), join_arg<V2, null_right>(b))));
    else
      return to_datum(VR(j(join_arg<V1, null_left>(a), join_arg<V2, null_right>(b))));
  };
}

// Foreign-key extractors: extractor(value) or extractor(key, value) (Kafka's Function and
// BiFunction forms) -> KO, or std::optional<KO> where a row may have none.
template <class F, class K, class V>
concept ForeignKeyExtractor =
    std::is_invocable_v<const F&, const V&> || std::is_invocable_v<const F&, const K&, const V&>;
// A joiner, not a Named in its place (which another overload takes).
template <class J>
concept NotNamed = !std::is_same_v<J, Named>;

template <class K, class V, class KO, class F>
KeyMapper typed_foreign_key(F f) {
  return [f = std::move(f)](const Datum& k, const Datum& v) -> Datum {
    auto fk = [&] {
      if constexpr (std::is_invocable_v<const F&, const K&, const V&>)
        return f(as<K>(k), as<V>(v));
      else
        return f(as<V>(v));
    }();
    if constexpr (IsOptional<decltype(fk)>::value)
      return fk ? to_datum(KO(std::move(*fk))) : Datum();
    else
      return to_datum(KO(std::move(fk)));
  };
}

}  // namespace oxbow::streams::detail
