#include "sql/binder/function_registry.h"

#include <cctype>
#include <stdexcept>

#include "sql/binder/sql_error.h"

namespace oxbow::sql {

namespace {

using Family = ParamType::Family;
using Bindings = std::map<std::string, SqlTypePtr>;

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

// 2: `arg` is the type wanted; 1: it widens to it; 0: no.
int widens(const SqlType& arg, const SqlType& wanted) {
  return arg.equals(wanted) ? 2 : can_implicitly_cast(arg, wanted) ? 1 : 0;
}

// How `arg` fits `param` (2 exactly, 1 widened, 0 not), binding generics on the way.
int match(const ParamType& param, const SqlTypePtr& arg, const SqlTypePtr& first, Bindings& b) {
  if (!arg) return 1;  // NULL fits anything
  switch (param.family) {
    case Family::kExact:
      return widens(*arg, *param.type);
    case Family::kAny:
      return 2;
    case Family::kNumeric:
      return arg->is_numeric() ? 2 : 0;
    case Family::kComparable:
      return is_comparable(*arg) ? 2 : 0;
    case Family::kArray:
      if (arg->base() != SqlBaseType::kArray) return 0;
      return param.children.empty() ? 2 : match(param.children[0], arg->element(), first, b);
    case Family::kMap:
      if (arg->base() != SqlBaseType::kMap) return 0;
      return std::min(match(param.children[0], arg->key(), first, b),
                      match(param.children[1], arg->element(), first, b));
    case Family::kGeneric: {
      auto [it, fresh] = b.emplace(param.generic, arg);
      return fresh ? 2 : widens(*arg, *it->second);
    }
    case Family::kDecimal:
      if (arg->base() == SqlBaseType::kDecimal) return 2;
      return as_decimal(*arg) && arg->base() != SqlBaseType::kDouble ? 1 : 0;
    case Family::kIntervalUnit:
      return arg->base() == SqlBaseType::kString ? 2 : 0;
    case Family::kSameAsFirst:
      return first ? widens(*arg, *first) : 1;
    case Family::kLambda:  // the argument's type is its body's
      return match(param.children.back(), arg, first, b);
  }
  return 0;
}

// The parameter argument `i` of `n` meets: the repeating one takes what the others leave.
const ParamType& param_at(const FunctionVariant& v, size_t i, size_t n) {
  size_t after = v.variadic ? v.after_variadic : 0;
  if (i + after >= n) return v.params[v.params.size() - (n - i)];
  return v.params[std::min(i, v.params.size() - 1 - after)];
}

// 0: the arguments do not fit; 2: each is its parameter's type; 1: some widen.
int fit(const FunctionVariant& v, const std::vector<SqlTypePtr>& args, Bindings& b) {
  if (args.size() < v.params.size() - (v.variadic ? 1 : 0)) return 0;
  if (!v.variadic && args.size() != v.params.size()) return 0;
  int worst = 2;
  SqlTypePtr first = args.empty() ? nullptr : args[0];
  for (size_t i = 0; i < args.size() && worst > 0; ++i)
    worst = std::min(worst, match(param_at(v, i, args.size()), args[i], first, b));
  return worst;
}

// The type a pattern stands for once its generics are bound; null where one is not.
SqlTypePtr substitute(const ParamType& p, const Bindings& b) {
  switch (p.family) {
    case Family::kExact:
      return p.type;
    case Family::kGeneric: {
      auto it = b.find(p.generic);
      return it == b.end() ? nullptr : it->second;
    }
    case Family::kArray: {
      auto element = p.children.empty() ? nullptr : substitute(p.children[0], b);
      return element ? SqlType::array(element) : nullptr;
    }
    case Family::kMap: {
      auto key = substitute(p.children[0], b), value = substitute(p.children[1], b);
      return key && value ? SqlType::map(key, value) : nullptr;
    }
    default:
      return nullptr;
  }
}

// What the argument becomes for the call: the parameter's type where it names one.
SqlTypePtr concrete(const ParamType& p, const SqlTypePtr& arg, const SqlTypePtr& first,
                    const Bindings& b) {
  switch (p.family) {
    case Family::kExact:
    case Family::kGeneric:
    case Family::kArray:
    case Family::kMap:
      if (auto t = substitute(p, b)) return t;
      return arg;
    case Family::kDecimal:
      return arg ? as_decimal(*arg) : nullptr;
    case Family::kSameAsFirst:
      return first ? first : arg;
    default:
      return arg;
  }
}

std::string type_list(const std::vector<SqlTypePtr>& args) {
  std::string out = "(";
  for (size_t i = 0; i < args.size(); ++i)
    out += (i ? ", " : "") + (args[i] ? args[i]->to_string() : std::string("NULL"));
  return out + ")";
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Reads the signature words of function_registry.h's signature().
class SignatureReader {
 public:
  explicit SignatureReader(std::string_view text) : text_(text) {}

  ParamType type() {
    std::string word = this->word();
    if (word == "LAMBDA") {
      ParamType p{Family::kLambda, nullptr, {}, {}, {}};
      expect('<');
      do p.children.push_back(type());
      while (accept(','));
      expect('>');
      return p;
    }
    if (word == "ARRAY" || word == "MAP") {
      ParamType p{word == "ARRAY" ? Family::kArray : Family::kMap, nullptr, {}, {}, {}};
      expect('<');
      p.children.push_back(type());
      if (word == "MAP") expect(','), p.children.push_back(type());
      expect('>');
      return p;
    }
    static const std::map<std::string, SqlBaseType> kPrimitive = {
        {"VARCHAR", SqlBaseType::kString},     {"STRING", SqlBaseType::kString},
        {"INT", SqlBaseType::kInteger},        {"INTEGER", SqlBaseType::kInteger},
        {"BIGINT", SqlBaseType::kBigint},      {"DOUBLE", SqlBaseType::kDouble},
        {"BOOLEAN", SqlBaseType::kBoolean},    {"BYTES", SqlBaseType::kBytes},
        {"DATE", SqlBaseType::kDate},          {"TIME", SqlBaseType::kTime},
        {"TIMESTAMP", SqlBaseType::kTimestamp}};
    if (auto it = kPrimitive.find(word); it != kPrimitive.end())
      return ParamType::exact(SqlType::of(it->second));
    if (word == "DECIMAL") return {Family::kDecimal, nullptr, {}, {}, {}};
    if (word == "NUMBER") return {Family::kNumeric, nullptr, {}, {}, {}};
    if (word == "COMPARABLE") return {Family::kComparable, nullptr, {}, {}, {}};
    if (word == "ANY") return ParamType::any();
    if (word == "INTERVALUNIT") return {Family::kIntervalUnit, nullptr, {}, {}, {}};
    if (word.size() <= 2 && std::isupper(static_cast<unsigned char>(word[0])))
      return {Family::kGeneric, nullptr, word, {}, {}};
    throw std::invalid_argument("Unknown type in a function signature: " + word);
  }

  // "name TYPE, name TYPE..." into `v`.
  void parameters(FunctionVariant& v) {
    skip();
    while (at_ < text_.size()) {
      std::string name = word();
      ParamType p = type();
      p.name = name;
      v.params.push_back(std::move(p));
      skip();
      if (v.variadic) ++v.after_variadic;
      if (text_.substr(at_, 3) == "...") v.variadic = true, at_ += 3, skip();
      if (at_ < text_.size()) expect(',');
      skip();
    }
  }

  void end() {
    skip();
    if (at_ != text_.size())
      throw std::invalid_argument("Unexpected text in a function signature: " + std::string(text_));
  }

 private:
  void skip() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  std::string word() {
    skip();
    size_t start = at_;
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
      ++at_;
    if (start == at_)
      throw std::invalid_argument("Expected a word in a function signature: " + std::string(text_));
    return std::string(text_.substr(start, at_ - start));
  }
  bool accept(char c) {
    skip();
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  void expect(char c) {
    skip();
    if (at_ >= text_.size() || text_[at_] != c)
      throw std::invalid_argument(std::string("Expected '") + c +
                                  "' in a function signature: " + std::string(text_));
    ++at_;
  }

  std::string_view text_;
  size_t at_ = 0;
};

// The generics `args` bind in `v`'s parameters.
Bindings bind(const std::vector<ParamType>& params, bool variadic,
              const std::vector<SqlTypePtr>& args) {
  FunctionVariant v;
  v.params = params;
  v.variadic = variadic;
  Bindings b;
  if (!params.empty()) fit(v, args, b);
  return b;
}

}  // namespace

std::string ParamType::to_string() const {
  switch (family) {
    case Family::kExact:
      if (type->base() == SqlBaseType::kString) return "VARCHAR";
      if (type->base() == SqlBaseType::kInteger) return "INT";
      return type->to_string();
    case Family::kAny:
      return "ANY";
    case Family::kNumeric:
      return "NUMBER";
    case Family::kComparable:
    case Family::kSameAsFirst:
      return "T";
    case Family::kArray:
      return "ARRAY<" + (children.empty() ? std::string("T") : children[0].to_string()) + ">";
    case Family::kMap:
      return "MAP<" + children[0].to_string() + ", " + children[1].to_string() + ">";
    case Family::kGeneric:
      return generic;
    case Family::kDecimal:
      return "DECIMAL";
    case Family::kIntervalUnit:
      return "INTERVAL UNIT";
    case Family::kLambda: {
      std::string out = "LAMBDA (";
      for (size_t i = 0; i + 1 < children.size(); ++i)
        out += (i ? ", " : "") + children[i].to_string();
      return out + ") => " + children.back().to_string();
    }
  }
  return "?";
}

FunctionVariant signature(std::string_view params, std::string_view returns,
                          ScalarImplementation implementation, std::string description) {
  SignatureReader reader(returns);
  ParamType result = reader.type();
  reader.end();
  FunctionVariant v =
      signature(params, result.to_string(), nullptr, implementation, std::move(description));
  v.result = [result, params = v.params,
              variadic = v.variadic](const std::vector<SqlTypePtr>& args) {
    return substitute(result, bind(params, variadic, args));
  };
  return v;
}

FunctionVariant signature(std::string_view params, std::string returns_text, ResultType result,
                          ScalarImplementation implementation, std::string description) {
  FunctionVariant v;
  SignatureReader reader(params);
  reader.parameters(v);
  v.returns = std::move(returns_text);
  v.result = std::move(result);
  v.implementation = implementation;
  v.description = std::move(description);
  return v;
}

const char* FunctionInfo::type_name() const {
  switch (kind) {
    case FunctionKind::kAggregate:
      return "AGGREGATE";
    case FunctionKind::kTable:
      return "TABLE";
    case FunctionKind::kScalar:
      break;
  }
  return "SCALAR";
}

std::string FunctionInfo::signature_text(const FunctionVariant& v) const {
  std::string out = name + "(";
  for (size_t i = 0; i < v.params.size(); ++i) {
    const ParamType& p = v.params[i];
    out += (i ? ", " : "") + p.name + " " + p.to_string();
    if (v.variadic && i + 1 + v.after_variadic == v.params.size()) out += "[]";
  }
  return out + ")";
}

size_t FunctionInfo::first_literal_arg(const FunctionVariant& v, size_t args) const {
  if (literal_args_from == 0 || !v.variadic ||
      literal_args_from + v.after_variadic < v.params.size())
    return literal_args_from;
  return args - (v.params.size() - literal_args_from);
}

FunctionRegistry::FunctionRegistry() {
  for (const FunctionInfo& info : builtin_functions()) add(info);
}

const FunctionRegistry& FunctionRegistry::builtins() {
  static const FunctionRegistry registry;
  return registry;
}

void FunctionRegistry::add(FunctionInfo info) {
  if (info.aggregate) info.kind = FunctionKind::kAggregate;
  std::string name = info.name;
  functions_.insert_or_assign(std::move(name), std::move(info));
}

const FunctionInfo* FunctionRegistry::find(const std::string& name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : &it->second;
}

std::vector<const FunctionInfo*> FunctionRegistry::list() const {
  std::vector<const FunctionInfo*> out;
  for (const auto& [name, info] : functions_) out.push_back(&info);
  return out;
}

const FunctionInfo& FunctionRegistry::describe(const std::string& name) const {
  const FunctionInfo* info = find(upper(name));
  if (!info) throw SqlError("Can't find any functions with the name '" + name + "'");
  return *info;
}

ResolvedFunction FunctionRegistry::resolve(const std::string& name,
                                           const std::vector<SqlTypePtr>& args) const {
  const FunctionInfo* info = find(upper(name));
  if (!info) throw SqlError("Can't find any functions with the name '" + name + "'");
  const FunctionVariant* exact = nullptr;
  std::vector<const FunctionVariant*> widened;
  for (const auto& v : info->variants) {
    Bindings b;
    int f = fit(v, args, b);
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
  return resolve_variant(info, *chosen, args);
}

ResolvedFunction FunctionRegistry::resolve_lambda_call(const std::string& name,
                                                       const std::vector<SqlTypePtr>& args,
                                                       const std::vector<bool>& lambda,
                                                       const LambdaBinder& bind_lambda) const {
  const FunctionInfo* info = find(upper(name));
  if (!info) throw SqlError("Can't find any functions with the name '" + name + "'");
  for (const auto& v : info->variants) {
    bool shape = !v.variadic && v.params.size() == args.size();
    for (size_t i = 0; shape && i < args.size(); ++i)
      shape = lambda[i] == (v.params[i].family == Family::kLambda);
    Bindings b;
    if (!shape || fit(v, args, b) == 0) continue;
    std::vector<SqlTypePtr> typed = args;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!lambda[i]) continue;
      const ParamType& p = v.params[i];
      std::vector<SqlTypePtr> parameters;
      for (size_t k = 0; k + 1 < p.children.size(); ++k) {
        parameters.push_back(substitute(p.children[k], b));
        if (!parameters.back())
          throw SqlError("Could not resolve type for generic " + p.children[k].to_string() + ".");
      }
      typed[i] = bind_lambda(i, parameters);
    }
    ResolvedFunction r = resolve_variant(info, v, typed);
    if (r.variant) return r;
    args_text_error(name, typed, lambda);
  }
  args_text_error(name, args, lambda);
}

ResolvedFunction FunctionRegistry::resolve_variant(const FunctionInfo* info,
                                                   const FunctionVariant& v,
                                                   const std::vector<SqlTypePtr>& args) const {
  Bindings b;
  if (fit(v, args, b) == 0) return {};
  SqlTypePtr first;
  for (const auto& a : args)
    if (!first && a) first = a;
  std::vector<SqlTypePtr> typed(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    typed[i] = concrete(param_at(v, i, args.size()), args[i], first, b);
  return {info, &v, v.result(typed), typed};
}

void FunctionRegistry::args_text_error(const std::string& name, const std::vector<SqlTypePtr>& args,
                                       const std::vector<bool>& lambda) const {
  std::string out = "(";
  for (size_t i = 0; i < args.size(); ++i)
    out += (i ? ", " : "") + (lambda[i] && !args[i] ? std::string("LAMBDA")
                              : args[i]             ? args[i]->to_string()
                                                    : std::string("NULL"));
  throw SqlError("Function '" + name + "' does not accept parameters " + out + ").");
}

}  // namespace oxbow::sql
