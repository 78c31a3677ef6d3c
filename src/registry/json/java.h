#pragma once
// What Java does that Confluent's results depend on, for the loader, the printer and the diff.
#include <cstdint>
#include <string>
#include <vector>

namespace oxbow::registry::json::detail {

// Whether `a` sorts before `b` in Java's String order (UTF-16 code units).
bool java_less(const std::string& a, const std::string& b);
// Java's String.hashCode().
int32_t java_hash(const std::string& s);

// The order everit's maps (a HashMap filled in document order, then copied) give `keys`.
std::vector<std::string> java_map_order(const std::vector<std::string>& keys);
// The order of `new HashSet<>(a)` after `addAll(b)`.
std::vector<std::string> java_union_order(const std::vector<std::string>& a,
                                          const std::vector<std::string>& b);

// Whether `a` is a whole multiple of `b` (b not zero) as BigDecimal.remainder finds it, for
// the values' shortest decimal texts (so 0.3 is a multiple of 0.1).
bool java_divides(double a, double b);

}  // namespace oxbow::registry::json::detail
