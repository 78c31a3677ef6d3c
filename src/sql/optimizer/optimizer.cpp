#include "sql/optimizer/optimizer.h"

namespace oxbow::sql::optimizer {

void optimize(logical::Node& root, const BoundQuery& q) {
  push_down_predicates(root, q);
  eliminate_repartitions(root, q);
  prune_projections(root, q);
}

}  // namespace oxbow::sql::optimizer
