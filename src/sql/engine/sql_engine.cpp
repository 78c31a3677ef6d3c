// The public API of include/oxbow/sql/engine.h over the engine: results and queries copied out
// into the public types, the engine's errors turned into StatementError.
#include "oxbow/sql/engine.h"

#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/engine/result_text.h"
#include "sql/parser/parse_error.h"

namespace oxbow::sql {

namespace {

DdlSettings ddl_settings(const EngineSettings& settings) {
  DdlSettings out;
  out.schema_registry_url = settings.schema_registry_url;
  out.default_key_format = settings.default_key_format;
  out.default_value_format = settings.default_value_format;
  return out;
}

ExecutedStatement executed(const StatementResult& result) {
  ExecutedStatement out{result.statement, result.message, result.query_id, result.warnings,
                        result_text(result)};
  // The CLI separates an entity from what it printed before with a blank line; alone, it needs
  // none.
  if (out.text.starts_with('\n')) out.text.erase(0, 1);
  return out;
}

}  // namespace

class SqlEngine::Impl {
 public:
  explicit Impl(const EngineSettings& settings) : engine(ddl_settings(settings)) {}
  Engine engine;
};

SqlEngine::SqlEngine(EngineSettings settings) : impl_(std::make_unique<Impl>(settings)) {}
SqlEngine::~SqlEngine() = default;
SqlEngine::SqlEngine(SqlEngine&&) noexcept = default;
SqlEngine& SqlEngine::operator=(SqlEngine&&) noexcept = default;

std::vector<ExecutedStatement> SqlEngine::execute(std::string_view statements) {
  std::vector<StatementResult> results;
  try {
    results = impl_->engine.execute(statements);
  } catch (const parser::ParseError& e) {
    throw StatementError(e.what(), e.position().line, e.position().column);
  } catch (const SqlError& e) {
    const auto& at = e.position();
    throw StatementError(e.what(), at ? at->line : 0, at ? at->column : 0);
  } catch (const std::exception& e) {
    // What the engine's dependencies throw (the schema registry unreachable, ...).
    throw StatementError(e.what(), 0, 0);
  }
  std::vector<ExecutedStatement> out;
  out.reserve(results.size());
  for (const auto& r : results) out.push_back(executed(r));
  return out;
}

std::vector<RunnableQuery> SqlEngine::queries() const {
  std::vector<RunnableQuery> out;
  for (const auto& q : impl_->engine.queries())
    out.push_back(
        {q.id, q.sink, q.statement, q.topology, q.streams_config, q.processing_errors, q.paused});
  return out;
}

}  // namespace oxbow::sql
