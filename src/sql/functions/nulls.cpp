// The functions about NULLs (ksqlDB's CONDITIONAL category) and AS_VALUE.
#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

// COALESCE and IFNULL: the first argument that is not NULL. Complex values are not looked into.
void first_not_null(FunctionCall& call) {
  for (size_t k = 0; k < call.size(); ++k)
    if (!call[k].is_null()) return void(call.out() = call[k]);
  call.out().set_null();
}

void nullif(FunctionCall& call) {
  if (call[0].is_null() || same_value(call[0], call[1])) return call.out().set_null();
  call.out() = call[0];
}

void identity(FunctionCall& call) {
  call.out() = call[0];
}

}  // namespace

void add_null_functions(std::vector<FunctionInfo>& out) {
  out.push_back(scalar_seeing_nulls("COALESCE", kConditional,
                                    "The first of its arguments that is not NULL.",
                                    {signature("first T, others T...", "T", first_not_null)}));
  out.push_back(scalar_seeing_nulls("IFNULL", kConditional,
                                    "The expression, or the alternative when it is NULL.",
                                    {signature("expression T, altValue T", "T", first_not_null)}));
  out.push_back(scalar_seeing_nulls("NULLIF", kConditional,
                                    "NULL when the two values are equal, else the first.",
                                    {signature("expr1 T, expr2 T", "T", nullif)}));
  out.push_back(scalar_seeing_nulls("AS_VALUE", kOther,
                                    "A key column's value, to be copied into the value.",
                                    {signature("keyColumn T", "T", identity)}));
}

}  // namespace oxbow::sql::functions
