// The functions that take lambdas (ksqlDB's LAMBDA category). They have no implementation to
// call: the evaluator compiles each call into a loop over the collection with the lambdas' bodies
// inlined (execution/program.cpp), so these entries give their signatures and which loop.
#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

FunctionVariant loop(std::string_view params, std::string_view returns, LambdaCall call) {
  FunctionVariant v = signature(params, returns);
  v.lambda = call;
  v.sees_nulls = true;  // REDUCE over a NULL collection is its initial state
  return v;
}

}  // namespace

void add_lambda_functions(std::vector<FunctionInfo>& out) {
  out.push_back(scalar(
      "TRANSFORM", kLambda,
      "Applies a function to each element of an array, or two to each entry of a map (one for "
      "the new key, one for the new value).",
      {loop("array ARRAY<T>, function LAMBDA<T, U>", "ARRAY<U>", LambdaCall::kTransformArray),
       loop("map MAP<K, V>, keyFunction LAMBDA<K, V, K1>, valueFunction LAMBDA<K, V, V1>",
            "MAP<K1, V1>", LambdaCall::kTransformMap)}));
  out.push_back(scalar(
      "FILTER", kLambda, "The elements of an array, or the entries of a map, a predicate keeps.",
      {loop("array ARRAY<T>, function LAMBDA<T, BOOLEAN>", "ARRAY<T>", LambdaCall::kFilterArray),
       loop("map MAP<K, V>, function LAMBDA<K, V, BOOLEAN>", "MAP<K, V>",
            LambdaCall::kFilterMap)}));
  out.push_back(scalar(
      "REDUCE", kLambda,
      "Folds an array or a map into a state: the function takes the state and each element (or "
      "key and value) and returns the next state.",
      {loop("array ARRAY<T>, initialState S, function LAMBDA<S, T, S>", "S",
            LambdaCall::kReduceArray),
       loop("map MAP<K, V>, initialState S, function LAMBDA<S, K, V, S>", "S",
            LambdaCall::kReduceMap)}));
}

}  // namespace oxbow::sql::functions
