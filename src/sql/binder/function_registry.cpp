#include "sql/binder/function_registry.h"

#include <cctype>

#include "sql/binder/sql_error.h"

namespace oxbow::sql {

namespace {

using Family = ParamType::Family;

ParamType numeric() {
  return {Family::kNumeric, nullptr};
}
ParamType comparable() {
  return {Family::kComparable, nullptr};
}
ParamType array() {
  return {Family::kArray, nullptr};
}
ParamType same_as_first() {
  return {Family::kSameAsFirst, nullptr};
}
ParamType exact(SqlTypePtr t) {
  return ParamType::exact(std::move(t));
}

ResultType returns(SqlTypePtr t) {
  return [t](const std::vector<SqlTypePtr>&) { return t; };
}
ResultType same_as_argument(size_t i) {
  return [i](const std::vector<SqlTypePtr>& args) { return args.at(i); };
}
ResultType array_of_argument(size_t i) {
  return [i](const std::vector<SqlTypePtr>& args) { return SqlType::array(args.at(i)); };
}

bool is_comparable(const SqlType& t) {
  switch (t.base()) {
    case SqlBaseType::kArray:
    case SqlBaseType::kMap:
    case SqlBaseType::kStruct:
    case SqlBaseType::kBoolean:
    case SqlBaseType::kBytes:
      return false;
    default:
      return true;
  }
}

// 2: the argument is the parameter's type; 1: it widens to it; 0: no.
int match(const ParamType& param, const SqlTypePtr& arg, const SqlTypePtr& first) {
  if (!arg) return 1;  // NULL fits anything
  switch (param.family) {
    case Family::kExact:
      return arg->equals(*param.type) ? 2 : can_implicitly_cast(*arg, *param.type) ? 1 : 0;
    case Family::kAny:
      return 2;
    case Family::kNumeric:
      return arg->is_numeric() ? 2 : 0;
    case Family::kComparable:
      return is_comparable(*arg) ? 2 : 0;
    case Family::kArray:
      return arg->base() == SqlBaseType::kArray ? 2 : 0;
    case Family::kSameAsFirst:
      if (!first) return 1;
      return arg->equals(*first) ? 2 : can_implicitly_cast(*arg, *first) ? 1 : 0;
  }
  return 0;
}

// 0: the arguments do not fit; 2: each is its parameter's type; 1: some widen.
int fit(const FunctionVariant& v, const std::vector<SqlTypePtr>& args) {
  if (args.size() < v.params.size() - (v.variadic ? 1 : 0)) return 0;
  if (!v.variadic && args.size() != v.params.size()) return 0;
  int worst = 2;
  SqlTypePtr first = args.empty() ? nullptr : args[0];
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamType& p = v.params[std::min(i, v.params.size() - 1)];
    worst = std::min(worst, match(p, args[i], first));
  }
  return worst;
}

std::string type_list(const std::vector<SqlTypePtr>& args) {
  std::string out = "(";
  for (size_t i = 0; i < args.size(); ++i)
    out += (i ? ", " : "") + (args[i] ? args[i]->to_string() : std::string("NULL"));
  return out + ")";
}

FunctionInfo scalar(std::string name, std::vector<FunctionVariant> variants) {
  return {std::move(name), false, std::move(variants)};
}
FunctionInfo aggregate(std::string name, std::vector<FunctionVariant> variants) {
  return {std::move(name), true, std::move(variants)};
}

}  // namespace

FunctionRegistry::FunctionRegistry() {
  auto integer = SqlType::integer(), bigint = SqlType::bigint(), dbl = SqlType::double_type(),
       string = SqlType::string();
  // Aggregates (ksqlDB's udaf/): COUNT(*) comes as COUNT with no argument.
  add(aggregate("COUNT",
                {{{}, false, returns(bigint)}, {{ParamType::any()}, false, returns(bigint)}}));
  add(aggregate("SUM", {{{exact(integer)}, false, returns(integer)},
                        {{exact(bigint)}, false, returns(bigint)},
                        {{exact(dbl)}, false, returns(dbl)},
                        {{numeric()}, false, same_as_argument(0)}}));
  add(aggregate("AVG", {{{exact(integer)}, false, returns(dbl)},
                        {{exact(bigint)}, false, returns(dbl)},
                        {{exact(dbl)}, false, returns(dbl)}}));
  for (const char* name : {"MIN", "MAX"})
    add(aggregate(name, {{{comparable()}, false, same_as_argument(0)}}));
  for (const char* name : {"COLLECT_LIST", "COLLECT_SET"})
    add(aggregate(name, {{{ParamType::any()}, false, array_of_argument(0)}}));
  for (const char* name : {"LATEST_BY_OFFSET", "EARLIEST_BY_OFFSET"})
    add(aggregate(name,
                  {{{ParamType::any()}, false, same_as_argument(0)},
                   {{ParamType::any(), exact(SqlType::boolean())}, false, same_as_argument(0)}}));
  add(aggregate("COUNT_DISTINCT", {{{ParamType::any()}, false, returns(bigint)}}));
  // Scalars (REF/scalar-functions.md).
  add(scalar("ABS", {{{numeric()}, false, same_as_argument(0)}}));
  for (const char* name : {"CEIL", "FLOOR"})
    add(scalar(name, {{{numeric()}, false, same_as_argument(0)}}));
  add(scalar("ROUND", {{{exact(integer)}, false, returns(integer)},
                       {{exact(bigint)}, false, returns(bigint)},
                       {{exact(dbl)}, false, returns(bigint)},
                       {{exact(dbl), exact(integer)}, false, returns(dbl)}}));
  add(scalar("SQRT", {{{exact(dbl)}, false, returns(dbl)}}));
  add(scalar("LEN", {{{exact(string)}, false, returns(integer)}}));
  for (const char* name : {"UCASE", "LCASE", "TRIM"})
    add(scalar(name, {{{exact(string)}, false, returns(string)}}));
  add(scalar("CONCAT", {{{exact(string)}, true, returns(string)}}));
  add(scalar("SUBSTRING",
             {{{exact(string), exact(integer)}, false, returns(string)},
              {{exact(string), exact(integer), exact(integer)}, false, returns(string)}}));
  add(scalar("COALESCE", {{{ParamType::any(), same_as_first()}, true, same_as_argument(0)}}));
  add(scalar("IFNULL", {{{ParamType::any(), same_as_first()}, false, same_as_argument(0)}}));
  add(scalar("ARRAY_LENGTH", {{{array()}, false, returns(integer)}}));
}

void FunctionRegistry::add(FunctionInfo info) {
  std::string name = info.name;
  functions_.insert_or_assign(std::move(name), std::move(info));
}

const FunctionInfo* FunctionRegistry::find(const std::string& name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : &it->second;
}

ResolvedFunction FunctionRegistry::resolve(const std::string& name,
                                           const std::vector<SqlTypePtr>& args) const {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const FunctionInfo* info = find(upper);
  if (!info) throw SqlError("Can't find any functions with the name '" + name + "'");
  const FunctionVariant* exact = nullptr;
  std::vector<const FunctionVariant*> widened;
  for (const auto& v : info->variants) {
    int f = fit(v, args);
    if (f == 2 && !exact) exact = &v;
    if (f == 1) widened.push_back(&v);
  }
  const FunctionVariant* chosen = exact;
  if (!chosen && widened.size() > 1)
    throw SqlError("Function '" + name +
                   "' cannot be resolved due to ambiguous method parameters " + type_list(args) +
                   ".");
  if (!chosen && widened.size() == 1) chosen = widened[0];
  if (!chosen)
    throw SqlError("Function '" + name + "' does not accept parameters " + type_list(args) + ".");
  // A NULL argument takes the type its parameter names, where it names one.
  std::vector<SqlTypePtr> typed = args;
  for (size_t i = 0; i < typed.size(); ++i)
    if (!typed[i] && !chosen->params.empty()) {
      const ParamType& p = chosen->params[std::min(i, chosen->params.size() - 1)];
      if (p.family == Family::kExact) typed[i] = p.type;
      if (p.family == Family::kSameAsFirst) typed[i] = typed[0];
    }
  for (size_t i = 1; i < typed.size(); ++i)
    if (!typed[0] && typed[i]) typed[0] = typed[i];  // COALESCE(NULL, x)
  return {info, chosen, chosen->result(typed)};
}

}  // namespace oxbow::sql
