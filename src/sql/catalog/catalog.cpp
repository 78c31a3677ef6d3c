#include "sql/catalog/catalog.h"

namespace oxbow::sql {

bool is_system_column_name(const std::string& name) {
  return name == "ROWTIME" || name == "ROWPARTITION" || name == "ROWOFFSET" ||
         name == "WINDOWSTART" || name == "WINDOWEND";
}

const Column* DataSource::column(const std::string& name) const {
  for (const auto& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

std::string DataSource::schema_text() const {
  std::string out;
  for (const auto& c : columns) {
    if (!out.empty()) out += ", ";
    out += "`" + c.name + "` " + c.type->to_string();
    switch (c.ns) {
      case ColumnNamespace::kKey:
        out += kind == SourceKind::kTable ? " PRIMARY KEY" : " KEY";
        break;
      case ColumnNamespace::kHeaders:
        out += " HEADERS";
        break;
      case ColumnNamespace::kHeader:
        out += " HEADER('" + c.header_key + "')";
        break;
      case ColumnNamespace::kValue:
        break;
    }
  }
  return out;
}

const DataSource* Catalog::find_source(const std::string& name) const {
  auto it = sources_.find(name);
  return it == sources_.end() ? nullptr : &it->second;
}

void Catalog::put_source(DataSource source) {
  std::string name = source.name;
  sources_.insert_or_assign(std::move(name), std::move(source));
}

bool Catalog::drop_source(const std::string& name) {
  return sources_.erase(name) > 0;
}

SqlTypePtr Catalog::find_type(const std::string& name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : it->second;
}

bool Catalog::put_type(const std::string& name, SqlTypePtr type) {
  return types_.emplace(name, std::move(type)).second;
}

bool Catalog::drop_type(const std::string& name) {
  return types_.erase(name) > 0;
}

}  // namespace oxbow::sql
