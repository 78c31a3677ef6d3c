#include "sql/functions/library.h"

namespace oxbow::sql::functions {

void add_url_functions(std::vector<FunctionInfo>&) {}

}  // namespace oxbow::sql::functions
