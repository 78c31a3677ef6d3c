// Table functions' signatures (ksqlDB's udtf/), for SHOW FUNCTIONS and DESCRIBE FUNCTION: the
// engine does not run them yet (the evaluator refuses a call).
#include "sql/functions/library.h"

namespace oxbow::sql::functions {

void add_table_functions(std::vector<FunctionInfo>& out) {
  FunctionInfo explode = scalar("EXPLODE", kTable, "One row for each element of an array.",
                                {signature("list ARRAY<T>", "T")});
  FunctionInfo cube =
      scalar("CUBE_EXPLODE", kTable,
             "One row for each combination of the array's elements and NULLs (2^n rows, duplicates "
             "that NULLs cause skipped).",
             {signature("list ARRAY<T>", "ARRAY<T>")});
  for (FunctionInfo* f : {&explode, &cube}) {
    f->kind = FunctionKind::kTable;
    out.push_back(std::move(*f));
  }
}

}  // namespace oxbow::sql::functions
