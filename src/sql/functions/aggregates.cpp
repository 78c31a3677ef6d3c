// The aggregate functions' signatures and descriptions (their state and arithmetic are
// sql/execution/aggregates.cpp's): what the binder resolves and SHOW FUNCTIONS lists.
#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

FunctionInfo aggregate(std::string name, std::string description,
                       std::vector<FunctionVariant> variants) {
  FunctionInfo info =
      scalar(std::move(name), kAggregate, std::move(description), std::move(variants));
  info.aggregate = true;
  info.kind = FunctionKind::kAggregate;
  return info;
}

SqlTypePtr first_argument(const std::vector<SqlTypePtr>& args) {
  return args.at(0);
}

// One variant a type, the result the argument's type (MIN, MAX).
std::vector<FunctionVariant> per_type(std::initializer_list<const char*> types, const char* rest,
                                      const char* result) {
  std::vector<FunctionVariant> out;
  for (const char* t : types) {
    std::string returns = std::string(result) == "T"          ? std::string(t)
                          : std::string(result) == "ARRAY<T>" ? "ARRAY<" + std::string(t) + ">"
                                                              : std::string(result);
    out.push_back(signature(std::string("val ") + t + rest, returns));
  }
  return out;
}

// TOPK's sort column alone gives its values; with other columns, one STRUCT a row: the sort
// column as `sort_col`, the others as `col0`, `col1`... (ksqlDB 0.29's TopkKudaf).
SqlTypePtr top_k_result(const std::vector<SqlTypePtr>& args) {
  if (args.size() <= 2) return args.at(0) ? SqlType::array(args[0]) : nullptr;
  std::vector<SqlField> fields{{"sort_col", args[0]}};
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    if (!args[i]) return nullptr;  // a bare NULL has no type to give its field
    fields.push_back({"col" + std::to_string(i - 1), args[i]});
  }
  return SqlType::array(SqlType::structure(std::move(fields)));
}

// As ksqlDB 0.29 lists it: one variant a sort type, the other columns repeating before k, the
// result's element a generic since it depends on them.
FunctionInfo top_k() {
  std::vector<FunctionVariant> variants;
  for (const char* type : {"INT", "BIGINT", "DOUBLE", "VARCHAR"})
    variants.push_back(
        signature(std::string("val1 ") + type + ", val2 ANY..., k INT", "ARRAY<S>", top_k_result));
  FunctionInfo info = aggregate(
      "TOPK",
      "The k greatest values of the first column, greatest first; with other columns, a STRUCT "
      "a row of the sort column (sort_col) and theirs (col0, col1, ...).",
      std::move(variants));
  info.literal_args_from = 2;  // k, after the other columns
  return info;
}

}  // namespace

void add_aggregate_functions(std::vector<FunctionInfo>& out) {
  // COUNT(*) comes as COUNT with no argument.
  out.push_back(aggregate("COUNT", "The number of rows, or of rows where the argument is not NULL.",
                          {signature("", "BIGINT"), signature("val ANY", "BIGINT")}));
  auto sums = per_type({"INT", "BIGINT", "DOUBLE"}, "", "T");
  sums.push_back(signature("val DECIMAL", "DECIMAL", first_argument));
  out.push_back(aggregate("SUM", "The sum of the non-NULL values.", sums));
  out.push_back(aggregate("AVG", "The mean of the non-NULL values.",
                          per_type({"INT", "BIGINT", "DOUBLE"}, "", "DOUBLE")));
  for (const char* name : {"MIN", "MAX"}) {
    auto variants = per_type(
        {"INT", "BIGINT", "DOUBLE", "VARCHAR", "BYTES", "DATE", "TIME", "TIMESTAMP"}, "", "T");
    variants.push_back(signature("val DECIMAL", "DECIMAL", first_argument));
    out.push_back(aggregate(
        name, std::string("The ") + (name[1] == 'I' ? "least" : "greatest") + " non-NULL value.",
        variants));
  }
  out.push_back(aggregate("COLLECT_LIST",
                          "The values in the order they came, at most 1000 (the rest dropped).",
                          {signature("val T", "ARRAY<T>")}));
  out.push_back(aggregate("COLLECT_SET", "The distinct values, at most 1000 (the rest dropped).",
                          {signature("val T", "ARRAY<T>")}));
  for (const char* name : {"LATEST_BY_OFFSET", "EARLIEST_BY_OFFSET"}) {
    out.push_back(
        aggregate(name,
                  std::string("The value of the ") + (name[0] == 'L' ? "latest" : "earliest") +
                      " record by offset, NULLs ignored unless ignoreNulls is false.",
                  {signature("val T", "T"), signature("val T, ignoreNulls BOOLEAN", "T")}));
    out.back().literal_args_from = 1;
  }
  out.push_back(aggregate(
      "COUNT_DISTINCT", "The number of distinct non-NULL values (exact; ksqlDB's is an estimate).",
      {signature("val T", "BIGINT")}));
  out.push_back(top_k());
  auto distinct =
      per_type({"INT", "BIGINT", "DOUBLE", "VARCHAR", "DATE", "TIME", "TIMESTAMP", "BYTES"},
               ", k INT", "ARRAY<T>");
  distinct.push_back(
      signature("val DECIMAL, k INT", "ARRAY<DECIMAL>", [](const std::vector<SqlTypePtr>& args) {
        return args.at(0) ? SqlType::array(args[0]) : nullptr;
      }));
  out.push_back(
      aggregate("TOPKDISTINCT", "The k greatest distinct values, greatest first.", distinct));
  out.back().literal_args_from = 1;
  out.push_back(aggregate("HISTOGRAM",
                          "How many times each string came, for at most 1000 distinct strings.",
                          {signature("val VARCHAR", "MAP<VARCHAR, BIGINT>")}));
  for (const char* name : {"STDDEV_SAMP", "STDDEV_SAMPLE"})
    out.push_back(aggregate(
        name,
        name == std::string("STDDEV_SAMP")
            ? "The sample variance of the values, as ksqlDB's STDDEV_SAMP computes it (no square "
              "root); 0 for fewer than two."
            : "The sample standard deviation of the values; 0 for fewer than two.",
        per_type({"INT", "BIGINT", "DOUBLE"}, "", "DOUBLE")));
  out.push_back(
      aggregate("CORRELATION",
                "Pearson's correlation of two columns over the rows where neither is "
                "NULL; NaN for fewer than two.",
                {signature("x INT, y INT", "DOUBLE"), signature("x BIGINT, y BIGINT", "DOUBLE"),
                 signature("x DOUBLE, y DOUBLE", "DOUBLE")}));
}

}  // namespace oxbow::sql::functions
