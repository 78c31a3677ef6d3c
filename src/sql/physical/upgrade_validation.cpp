// ksqlDB's upgrade validation over two physical plans (ExecutionStep.validateUpgrade and its
// steps' overrides): a passive step (filter, projection) hands the comparison over to the other
// plan's step, so that each side's passive steps are skipped; a matching step (sink, PARTITION BY,
// GROUP BY, unwindowed stream aggregation) compares its properties and goes on below both; a
// source must be reached through passive steps only; any other step refuses.
#include "sql/binder/sql_error.h"
#include "sql/physical/physical_plan.h"

namespace oxbow::sql::physical {

namespace {

std::string class_text(const std::string& type) {
  return "class io.confluent.ksql.execution.plan." + type;
}

[[noreturn]] void not_upgradeable(const std::string& why) {
  throw SqlError("Query is not upgradeable. " + why);
}

void must_match(const Step& self, const Step& to) {
  auto differ = [&](const std::string& what, const std::string& a, const std::string& b) {
    not_upgradeable("Plan step of type " + self.type + " must have matching " + what +
                    ". Values differ: " + a + " vs. " + b);
  };
  if (self.type != to.type) differ("class", class_text(self.type), class_text(to.type));
  for (size_t i = 0; i < self.compared.size() && i < to.compared.size(); ++i)
    if (self.compared[i].second != to.compared[i].second)
      differ(self.compared[i].first, self.compared[i].second, to.compared[i].second);
}

void validate(const Step& self, const Step& to);

// A source of the old plan: the replacement must reach the same source through passive steps.
// As ksqlDB's, the walk checks the replacement's first step only, then follows its first child.
void validate_source(const Step& self, const Step& to) {
  const Step* source = &to;
  while (source->type != self.type) {
    if (to.sources.empty())
      not_upgradeable("The root source node of the upgrade tree must be " + self.type +
                      ", but was " + class_text(source->type));
    if (to.sources.size() > 1)
      not_upgradeable("Cannot change a non-join source into a join source.");
    if (to.check != Check::kPassive) {
      if (!to.enforcing) throw SqlError("Upgrades not yet supported for " + to.type);
      not_upgradeable("Cannot add a " + class_text(to.type) +
                      " step that is not in the original query plan.");
    }
    // ksqlDB's loop never ends when the step below is not the source; refuse instead.
    if (source == to.sources.front().get())
      not_upgradeable("The root source node of the upgrade tree must be " + self.type +
                      ", but was " + class_text(source->type));
    source = to.sources.front().get();
  }
  must_match(self, *source);
}

void validate(const Step& self, const Step& to) {
  switch (self.check) {
    case Check::kPassive:
      return validate(to, *self.sources.front());
    case Check::kUnsupported:
      throw SqlError("Upgrades not yet supported for " + self.type);
    case Check::kSource:
      return validate_source(self, to);
    case Check::kMatch:
      must_match(self, to);
      if (self.sources.empty() || to.sources.empty())
        not_upgradeable("Plan step of type " + self.type + " must have matching sources.");
      return validate(*self.sources.front(), *to.sources.front());
  }
}

}  // namespace

void validate_upgrade(const Step& old, const Step& replacement) {
  validate(old, replacement);
}

}  // namespace oxbow::sql::physical
