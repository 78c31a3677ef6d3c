// The statements that change no query's topology: TERMINATE / PAUSE / RESUME, CREATE and DROP
// TYPE, SET / UNSET, DEFINE / UNDEFINE, SHOW TYPES / PROPERTIES / VARIABLES, and INSERT VALUES,
// whose record the engine makes and its caller produces (docs/sql/ksqldb-facts.md §1.8).
#include <algorithm>
#include <cctype>
#include <chrono>

#include "sql/binder/ddl_binder.h"
#include "sql/binder/expression_binder.h"
#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/execution/program.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {

StatementResult Engine::control_query(const parser::QueryControl& control) {
  StatementResult r;
  std::vector<PersistentQuery*> targets;
  for (auto& q : queries_)
    if (control.all || q.id == control.query_id) targets.push_back(&q);
  if (targets.empty() && !control.all) throw SqlError("Unknown queryId: " + control.query_id);
  for (PersistentQuery* q : targets) {
    r.affected_queries.push_back(q->id);
    q->paused = control.action == "PAUSE";
  }
  if (control.action == "TERMINATE") {
    std::erase_if(queries_, [&](const PersistentQuery& q) {
      return std::find(r.affected_queries.begin(), r.affected_queries.end(), q.id) !=
             r.affected_queries.end();
    });
    r.message = "Query terminated.";
  } else {
    r.message = control.action == "PAUSE" ? "Query paused." : "Query resumed.";
  }
  return r;
}

StatementResult Engine::create_type(const parser::CreateType& create) {
  StatementResult r;
  const std::string& name = create.name.text;
  SqlTypePtr type = bind_type(create.type, catalog_);
  if (SqlTypePtr existing = catalog_.find_type(name)) {
    if (create.if_not_exists) return r;
    throw SqlError("Cannot register custom type '" + name +
                   "' since it is already registered with type: " + existing->to_string());
  }
  catalog_.put_type(name, type);
  r.message = "Registered custom type with name '" + name + "' and SQL type " + type->to_string();
  return r;
}

StatementResult Engine::drop_type(const parser::DropType& drop) {
  StatementResult r;
  const std::string& name = drop.name.text;
  if (!catalog_.drop_type(name)) {
    if (!drop.if_exists) throw SqlError("Type " + name + " does not exist.");
    r.message = "Type " + name + " does not exist.";
    return r;
  }
  r.message = "Dropped type '" + name + "'";
  return r;
}

StatementResult Engine::set_property(const parser::SetProperty& set) {
  StatementResult r;
  if (set.action == "UNSET") {
    properties_.erase(set.name);
    r.message = "Successfully unset local property '" + set.name + "'.";
  } else {
    properties_[set.name] = set.value;
    r.message = "Successfully changed local property '" + set.name + "' to '" + set.value + "'.";
  }
  return r;
}

namespace {

// ksqlDB keeps variables in a map ordered ignoring case: a name is one variable however it is
// written, keeps the spelling of its first DEFINE, and SHOW VARIABLES lists them in that order.
bool less_ignoring_case(const std::string& a, const std::string& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) <
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::map<std::string, std::string>::iterator find_variable(
    std::map<std::string, std::string>& variables, const std::string& name) {
  return std::find_if(variables.begin(), variables.end(), [&](const auto& entry) {
    return !less_ignoring_case(entry.first, name) && !less_ignoring_case(name, entry.first);
  });
}

}  // namespace

StatementResult Engine::define_variable(const parser::DefineVariable& define) {
  StatementResult r;
  auto it = find_variable(variables_, define.name);
  if (define.undefine) {
    if (it == variables_.end())
      r.warnings.push_back("Cannot undefine variable '" + define.name +
                           "' which was never defined");
    else
      variables_.erase(it);
  } else if (it != variables_.end()) {
    it->second = define.value;
  } else {
    variables_[define.name] = define.value;
  }
  return r;
}

StatementResult Engine::show_settings(const parser::ShowList& show) {
  StatementResult r;
  const auto& listed = show.what == "PROPERTIES" ? properties_ : variables_;
  for (const auto& [name, value] : listed) r.settings.push_back({name, value});
  if (show.what == "VARIABLES")
    std::stable_sort(r.settings.begin(), r.settings.end(), [](const auto& a, const auto& b) {
      return less_ignoring_case(a.first, b.first);
    });
  if (show.what == "TYPES")
    for (const auto& [name, type] : catalog_.types())
      r.settings.push_back({name, type->to_string()});
  return r;
}

StatementResult Engine::show_functions() const {
  StatementResult r;
  for (const FunctionInfo* f : functions_.list())
    r.functions.push_back({f->name, f->type_name(), f->category, f->description, {}});
  return r;
}

StatementResult Engine::describe_function(const std::string& name) const {
  const FunctionInfo& f = functions_.describe(name);
  StatementResult::FunctionText text{f.name, f.type_name(), f.category, f.description, {}};
  for (const auto& v : f.variants) {
    StatementResult::FunctionText::Variant variant{
        f.signature_text(v), v.returns, v.description, {}};
    for (size_t i = 0; i < v.params.size(); ++i)
      variant.arguments.push_back({v.params[i].name, v.params[i].to_string(),
                                   v.variadic && i + 1 + v.after_variadic == v.params.size()});
    text.variants.push_back(std::move(variant));
  }
  StatementResult r;
  r.functions.push_back(std::move(text));
  return r;
}

namespace {

// The value of a constant expression in VALUES, as the column's type (implicitly widened, as
// ksqlDB coerces a literal into its column).
Value constant(const parser::Expr& expr, const Column& column, const FunctionRegistry& functions,
               const Catalog& catalog) {
  Scope empty;
  BoundExprPtr bound = ExpressionBinder(empty, functions, catalog, "VALUES").bind(expr);
  if (bound->type && !bound->type->equals(*column.type)) {
    if (!can_implicitly_cast(*bound->type, *column.type))
      throw SqlError("Expected type " + column.type->to_string() + " for field " + column.name +
                     " but got " + format(expr) + "(" + bound->type->to_string() + ")");
    auto cast = std::make_unique<BoundExpr>();
    cast->kind = BoundKind::kCast;
    cast->type = column.type;
    cast->parsed = bound->parsed;
    cast->args.push_back(std::move(bound));
    bound = std::move(cast);
  }
  Program program = Program::compile(*bound, {});
  Frame frame = program.new_frame();
  Value v = program.evaluate(Row{}, frame);
  if (!frame.error.empty())
    throw SqlError("Failed to insert values into '" + column.name + "': " + frame.error);
  return v;
}

}  // namespace

StatementResult Engine::insert_values(const parser::InsertValues& insert) {
  const std::string& name = insert.target.text;
  const DataSource* target = catalog_.find_source(name);
  if (!target) throw SqlError("Cannot insert values into an unknown stream/table: " + name);
  if (target->read_only)
    throw SqlError("Cannot insert values into read-only " + std::string(target->kind_name()) +
                   ": " + name);
  std::vector<std::string> names;
  if (insert.columns.empty()) {
    for (const auto& c : target->columns)
      if (c.ns == ColumnNamespace::kKey || c.ns == ColumnNamespace::kValue) names.push_back(c.name);
    if (names.size() != insert.values.size()) {
      std::string expected, got;
      for (const auto& n : names) expected += (expected.empty() ? "" : ", ") + n;
      for (const auto& v : insert.values) got += (got.empty() ? "" : ", ") + format(*v);
      throw SqlError("Expected a value for each column. Expected Columns: [" + expected +
                     "]. Got [" + got + "]");
    }
  } else {
    for (const auto& c : insert.columns) names.push_back(c.text);
    if (names.size() != insert.values.size())
      throw SqlError("Expected number columns and values to match: [" +
                     std::to_string(names.size()) + "], [" + std::to_string(insert.values.size()) +
                     "]");
  }
  std::vector<Column> keys = key_columns(*target), values = value_columns(*target);
  Row key(keys.size()), value(values.size());
  int64_t timestamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& column = names[i];
    if (column == "ROWTIME") {
      Column rowtime{"ROWTIME", SqlType::bigint(), ColumnNamespace::kValue, ""};
      Value t = constant(*insert.values[i], rowtime, functions_, catalog_);
      if (!t.is_null()) timestamp = t.bigint();
      continue;
    }
    auto place = [&](const std::vector<Column>& columns, Row& row) {
      for (size_t k = 0; k < columns.size(); ++k)
        if (columns[k].name == column) {
          row[k] = constant(*insert.values[i], columns[k], functions_, catalog_);
          return true;
        }
      return false;
    };
    if (!place(keys, key) && !place(values, value)) {
      if (is_system_column_name(column))
        throw SqlError("Inserting into column `" + column + "` is not allowed.");
      throw SqlError("Column name `" + column + "` does not exist.");
    }
  }
  StatementResult r;
  r.inserted.push_back(InsertWriter(*target).record(key, value, timestamp));
  return r;
}

InsertWriter::InsertWriter(const DataSource& target)
    : topic_(target.topic), value_serde_(row_serde(target.formats, value_columns(target), false)) {
  std::vector<Column> keys = key_columns(target);
  if (!keys.empty()) key_serde_ = row_serde(target.formats, std::move(keys), true);
}

InsertedRecord InsertWriter::record(const Row& key, const Row& value, int64_t timestamp) const {
  InsertedRecord record;
  record.topic = topic_;
  if (key_serde_) record.key = key_serde_->serialize(topic_, key);
  record.value = value_serde_.serialize(topic_, value);
  record.timestamp = timestamp;
  return record;
}

}  // namespace oxbow::sql
