// Numeric functions (docs/sql/ksqldb-facts.md §5.3 "Numeric"), with Java's arithmetic: Math.abs
// of the smallest integer is itself, DOUBLE results follow IEEE (NaN, Infinity), DECIMALs round
// exactly.
#include <charconv>
#include <cmath>
#include <numbers>
#include <random>

#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

__int128 pow10(int n) {
  __int128 v = 1;
  for (int k = 0; k < n; ++k) v *= 10;
  return v;
}

enum class Rounding { kCeiling, kFloor, kHalfUp, kDown };

// `unscaled` at `scale` rounded to `places` decimals, still at `scale`. kHalfUp rounds a tie
// toward positive infinity (ksqlDB: HALF_UP above zero, HALF_DOWN below).
__int128 round_unscaled(__int128 unscaled, int scale, int places, Rounding mode) {
  if (places >= scale) return unscaled;
  if (scale - places > 38) return 0;
  __int128 unit = pow10(scale - places), q = unscaled / unit, r = unscaled % unit;
  switch (mode) {
    case Rounding::kCeiling:
      if (r > 0) ++q;
      break;
    case Rounding::kFloor:
      if (r < 0) --q;
      break;
    case Rounding::kHalfUp:
      if (r > 0 && 2 * r >= unit) ++q;
      if (r < 0 && -2 * r > unit) --q;
      break;
    case Rounding::kDown:
      break;
  }
  return q * unit;
}

// A double rounded at `places` decimals as Java's BigDecimal.valueOf(d) would be.
double round_double(double d, int places, Rounding mode) {
  if (!std::isfinite(d)) return d;
  char buffer[64];
  auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific);
  (void)error;
  std::string text(buffer, end);  // d.ddddde±x, the shortest digits that read back as d
  size_t e = text.find('e');
  int exponent = std::stoi(text.substr(e + 1));
  std::string digits;
  for (char c : text.substr(0, e))
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  int scale = static_cast<int>(digits.size()) - 1 - exponent;  // value = digits * 10^-scale
  if (scale <= places || digits.size() > 30) return d;
  __int128 unscaled = 0;
  for (char c : digits) unscaled = unscaled * 10 + (c - '0');
  if (d < 0) unscaled = -unscaled;
  __int128 rounded = round_unscaled(unscaled, scale, places, mode);
  std::string out = decimal_text(rounded, scale);
  return std::strtod(out.c_str(), nullptr);
}

void abs(FunctionCall& call) {
  const Value& x = call[0];
  Value& out = call.out();
  switch (x.kind()) {
    case Kind::kInteger:
      return out.set_integer(static_cast<int32_t>(x.integer() < 0
                                                      ? 0u - static_cast<uint32_t>(x.integer())
                                                      : static_cast<uint32_t>(x.integer())));
    case Kind::kBigint:
      return out.set_bigint(static_cast<int64_t>(x.bigint() < 0
                                                     ? 0u - static_cast<uint64_t>(x.bigint())
                                                     : static_cast<uint64_t>(x.bigint())));
    case Kind::kDecimal:
      return out.set_decimal(x.unscaled() < 0 ? -x.unscaled() : x.unscaled(), x.scale());
    default:
      return out.set_double(std::fabs(x.dbl()));
  }
}

// CEIL, FLOOR, ROUND and TRUNC: integers as they are, DOUBLE and DECIMAL rounded at `places`.
template <Rounding Mode>
void round_to(FunctionCall& call) {
  const Value& x = call[0];
  Value& out = call.out();
  int places = call.size() > 1 ? static_cast<int>(call[1].as_int64()) : 0;
  const SqlTypePtr& result = call.result_type();
  switch (x.kind()) {
    case Kind::kInteger:
    case Kind::kBigint:
      if (result->base() == SqlBaseType::kInteger) return out.set_integer(x.integer());
      return out.set_bigint(x.as_int64());
    case Kind::kDecimal: {
      __int128 r = round_unscaled(x.unscaled(), x.scale(), places, Mode);
      // The result keeps the argument's scale unless its type says otherwise (ROUND(d) is
      // DECIMAL(p - s, 0)).
      int scale = result->scale();
      __int128 v = scale >= x.scale() ? r * pow10(scale - x.scale()) : r / pow10(x.scale() - scale);
      return out.set_decimal(v, scale);
    }
    default: {
      double d = x.dbl();
      if (call.size() > 1) return out.set_double(round_double(d, places, Mode));
      double r = Mode == Rounding::kCeiling ? std::ceil(d)
                 : Mode == Rounding::kFloor ? std::floor(d)
                 : Mode == Rounding::kDown  ? std::trunc(d)
                                            : std::floor(d + 0.5);  // Java's Math.round
      if (result->base() == SqlBaseType::kBigint) return out.set_bigint(static_cast<int64_t>(r));
      return out.set_double(r);
    }
  }
}

template <double (*F)(double)>
void unary(FunctionCall& call) {
  call.out().set_double(F(call[0].as_double()));
}

double cot(double x) {
  return 1.0 / std::tan(x);
}
double degrees(double x) {
  return x * 180.0 / std::numbers::pi;
}
double radians(double x) {
  return x / 180.0 * std::numbers::pi;
}
double double_sqrt(double x) {
  return std::sqrt(x);
}

void atan2(FunctionCall& call) {
  call.out().set_double(std::atan2(call[0].as_double(), call[1].as_double()));
}

void power(FunctionCall& call) {
  call.out().set_double(std::pow(call[0].as_double(), call[1].as_double()));
}

void log(FunctionCall& call) {
  if (call.size() == 1) return call.out().set_double(std::log(call[0].as_double()));
  double base = call[0].as_double(), value = call[1].as_double();
  if (base <= 0 || base == 1) return call.out().set_double(std::nan(""));
  call.out().set_double(std::log(value) / std::log(base));
}

void pi(FunctionCall& call) {
  call.out().set_double(std::numbers::pi);
}

void random(FunctionCall& call) {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  call.out().set_double(std::uniform_real_distribution<double>(0.0, 1.0)(engine));
}

void sign(FunctionCall& call) {
  const Value& x = call[0];
  double d = x.as_double();
  if (std::isnan(d)) return call.out().set_integer(0);
  call.out().set_integer(d > 0 ? 1 : d < 0 ? -1 : 0);
}

// GREATEST and LEAST skip NULLs; NULL when every argument is.
template <int Sign>
void extreme(FunctionCall& call) {
  const Value* best = nullptr;
  for (size_t k = 0; k < call.size(); ++k) {
    const Value& v = call[k];
    if (v.is_null()) continue;
    if (!best || ops::compare_values(v, *best) * Sign > 0) best = &v;
  }
  if (!best) return call.out().set_null();
  call.out() = *best;
}

void generate_series(FunctionCall& call) {
  int64_t start = call[0].as_int64(), end = call[1].as_int64();
  int64_t step = call.size() > 2 ? call[2].as_int64() : (start <= end ? 1 : -1);
  if (step == 0) return call.fail("GENERATE_SERIES step cannot be zero");
  if ((end - start) / step < 0) return call.fail("GENERATE_SERIES step has wrong sign");
  bool integer = call[0].kind() == Kind::kInteger;
  std::vector<Value> items;
  for (int64_t v = start; step > 0 ? v <= end : v >= end; v += step) {
    items.emplace_back();
    integer ? items.back().set_integer(static_cast<int32_t>(v)) : items.back().set_bigint(v);
  }
  set_items(call.out(), Kind::kArray, std::move(items));
}

// Great-circle distance on a sphere of the Earth's mean radius.
void geo_distance(FunctionCall& call) {
  for (size_t k = 0; k < 4; ++k)
    if (call[k].is_null()) return call.out().set_null();
  double lat1 = call[0].as_double(), lon1 = call[1].as_double(), lat2 = call[2].as_double(),
         lon2 = call[3].as_double();
  double radius = 6371.0;                       // km
  if (call.size() > 4 && !call[4].is_null()) {  // NULL units are kilometres
    std::string unit = call[4].text();
    for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (unit == "mi" || unit == "mile" || unit == "miles")
      radius = 3959.0;
    else if (unit != "km" && unit != "kilometer" && unit != "kilometers" && unit != "kilometre" &&
             unit != "kilometres")
      return call.fail(
          "GeoDistance function units parameter must be one of MI, MILES, KM or KILOMETERS");
  }
  if (std::fabs(lat1) > 90 || std::fabs(lat2) > 90 || std::fabs(lon1) > 180 ||
      std::fabs(lon2) > 180)
    return call.fail(
        "valid latitude values for GeoDistance function are in the range of -90 to 90 "
        "decimal degrees, and longitude values are -180 to 180");
  double p1 = radians(lat1), p2 = radians(lat2), dp = radians(lat2 - lat1),
         dl = radians(lon2 - lon1);
  double a =
      std::pow(std::sin(dp / 2), 2) + std::cos(p1) * std::cos(p2) * std::pow(std::sin(dl / 2), 2);
  call.out().set_double(2 * radius * std::asin(std::sqrt(a)));
}

// The signatures ksqlDB gives most DOUBLE functions: INT, BIGINT or DOUBLE in.
std::vector<FunctionVariant> doubles(const char* param, ScalarImplementation f) {
  std::vector<FunctionVariant> out;
  for (const char* type : {"INT", "BIGINT", "DOUBLE"})
    out.push_back(signature(std::string(param) + " " + type, "DOUBLE", f));
  return out;
}

SqlTypePtr first_argument(const std::vector<SqlTypePtr>& args) {
  return args.at(0);
}

SqlTypePtr whole_decimal(const std::vector<SqlTypePtr>& args) {
  const SqlTypePtr& d = args.at(0);
  return SqlType::decimal(std::max(d->precision() - d->scale(), 1), 0);
}

// INT, BIGINT, DOUBLE and DECIMAL in, the same out (ABS, CEIL, FLOOR).
std::vector<FunctionVariant> same_number(ScalarImplementation f) {
  return {signature("val INT", "INT", f), signature("val BIGINT", "BIGINT", f),
          signature("val DOUBLE", "DOUBLE", f),
          signature("val DECIMAL", "DECIMAL", first_argument, f)};
}

// ROUND and TRUNC: integers and DOUBLE to BIGINT, or at a number of places.
std::vector<FunctionVariant> rounding(ScalarImplementation f) {
  return {signature("val INT", "BIGINT", f),
          signature("val BIGINT", "BIGINT", f),
          signature("val DOUBLE", "BIGINT", f),
          signature("val DOUBLE, decimalPlaces INT", "DOUBLE", f),
          signature("val DECIMAL", "DECIMAL", whole_decimal, f),
          signature("val DECIMAL, decimalPlaces INT", "DECIMAL", first_argument, f)};
}

std::vector<FunctionVariant> extremes(ScalarImplementation f) {
  std::vector<FunctionVariant> out;
  for (const char* type :
       {"INT", "BIGINT", "DOUBLE", "VARCHAR", "BYTES", "DATE", "TIME", "TIMESTAMP"})
    out.push_back(signature(std::string("val ") + type + ", vals " + type + "...", type, f));
  out.push_back(signature("val DECIMAL, vals DECIMAL...", "DECIMAL", first_argument, f));
  return out;
}

}  // namespace

void add_math_functions(std::vector<FunctionInfo>& out) {
  out.push_back(scalar("ABS", kMath, "The absolute value of a number.", same_number(abs)));
  out.push_back(scalar("CEIL", kMath, "The smallest integral value not below the number.",
                       same_number(round_to<Rounding::kCeiling>)));
  out.push_back(scalar("FLOOR", kMath, "The largest integral value not above the number.",
                       same_number(round_to<Rounding::kFloor>)));
  out.push_back(scalar("ROUND", kMath,
                       "The number rounded to a number of decimal places (0 if not given; "
                       "negative rounds left of the point), ties toward positive infinity.",
                       rounding(round_to<Rounding::kHalfUp>)));
  out.push_back(scalar("TRUNC", kMath,
                       "The number truncated toward zero at a number of decimal places.",
                       rounding(round_to<Rounding::kDown>)));
  const std::pair<const char*, ScalarImplementation> unaries[] = {
      {"ACOS", unary<std::acos>}, {"ASIN", unary<std::asin>},   {"ATAN", unary<std::atan>},
      {"CBRT", unary<std::cbrt>}, {"COS", unary<std::cos>},     {"COSH", unary<std::cosh>},
      {"COT", unary<cot>},        {"DEGREES", unary<degrees>},  {"EXP", unary<std::exp>},
      {"LN", unary<std::log>},    {"RADIANS", unary<radians>},  {"SIN", unary<std::sin>},
      {"SINH", unary<std::sinh>}, {"SQRT", unary<double_sqrt>}, {"TAN", unary<std::tan>},
      {"TANH", unary<std::tanh>}};
  for (auto [name, f] : unaries)
    out.push_back(scalar(name, kMath, std::string("The ") + name + " of a number, as a DOUBLE.",
                         doubles("value", f)));
  std::vector<FunctionVariant> atan2s, logs = doubles("value", log), powers;
  for (const char* t : {"INT", "BIGINT", "DOUBLE"}) {
    atan2s.push_back(signature(std::string("y ") + t + ", x " + t, "DOUBLE", atan2));
    logs.push_back(signature(std::string("base ") + t + ", value " + t, "DOUBLE", log));
    powers.push_back(signature(std::string("base ") + t + ", exponent " + t, "DOUBLE", power));
  }
  out.push_back(scalar("ATAN2", kMath, "The angle of the point (x, y), in radians.", atan2s));
  out.push_back(scalar("LOG", kMath,
                       "The natural logarithm of a number, or its logarithm in a base (NaN for a "
                       "base not above zero or one).",
                       logs));
  out.push_back(scalar("POWER", kMath, "A base raised to an exponent.", powers));
  out.push_back(scalar("PI", kMath, "The number pi.", {signature("", "DOUBLE", pi)}));
  out.push_back(
      scalar("RANDOM", kMath, "A random DOUBLE in [0, 1).", {signature("", "DOUBLE", random)}));
  out.push_back(scalar("SIGN", kMath, "The sign of a number: -1, 0 or 1.",
                       {signature("value INT", "INT", sign), signature("value BIGINT", "INT", sign),
                        signature("value DOUBLE", "INT", sign)}));
  out.push_back(scalar_seeing_nulls("GREATEST", kMath, "The greatest of the values, NULLs skipped.",
                                    extremes(extreme<1>)));
  out.push_back(scalar_seeing_nulls("LEAST", kMath, "The least of the values, NULLs skipped.",
                                    extremes(extreme<-1>)));
  out.push_back(
      scalar("GENERATE_SERIES", kArray, "The integers from start to end (inclusive) by a step.",
             {signature("start INT, end INT", "ARRAY<INT>", generate_series),
              signature("start INT, end INT, step INT", "ARRAY<INT>", generate_series),
              signature("start BIGINT, end BIGINT", "ARRAY<BIGINT>", generate_series),
              signature("start BIGINT, end BIGINT, step INT", "ARRAY<BIGINT>", generate_series)}));
  out.push_back(scalar_seeing_nulls(
      "GEO_DISTANCE", kMath,
      "The great-circle distance between two points (latitude, longitude in degrees), in "
      "kilometres or in the unit given (KM or MILES).",
      {signature("lat1 DOUBLE, lon1 DOUBLE, lat2 DOUBLE, lon2 DOUBLE", "DOUBLE", geo_distance),
       signature("lat1 DOUBLE, lon1 DOUBLE, lat2 DOUBLE, lon2 DOUBLE, units VARCHAR", "DOUBLE",
                 geo_distance)}));
}

}  // namespace oxbow::sql::functions
