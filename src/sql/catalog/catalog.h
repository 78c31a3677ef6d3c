#pragma once
// The engine's catalog (ksqlDB's metastore): the streams and tables by name, and the types
// CREATE TYPE named. Names are exact (the parser upper-cased the unquoted ones).
#include <map>
#include <string>

#include "sql/catalog/data_source.h"

namespace oxbow::sql {

class Catalog {
 public:
  const DataSource* find_source(const std::string& name) const;
  void put_source(DataSource source);  // adds or replaces
  bool drop_source(const std::string& name);
  const std::map<std::string, DataSource>& sources() const { return sources_; }

  SqlTypePtr find_type(const std::string& name) const;
  bool put_type(const std::string& name, SqlTypePtr type);  // false if the name is taken
  bool drop_type(const std::string& name);
  const std::map<std::string, SqlTypePtr>& types() const { return types_; }

 private:
  std::map<std::string, DataSource> sources_;
  std::map<std::string, SqlTypePtr> types_;
};

}  // namespace oxbow::sql
