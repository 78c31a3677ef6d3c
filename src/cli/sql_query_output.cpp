#include "cli/sql_query_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "cli/sql_console.h"

namespace oxbow::cli {

using nlohmann::json;

void JsonArrayElements::feed(std::string_view piece) {
  for (char c : piece) {
    if (depth_ == 0) {
      if (c != '{') continue;  // '[', ',', ']' and whitespace between the elements
      element_.clear();
    }
    element_ += c;
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if ((c == '}' || c == ']') && --depth_ == 0) {
      json element = json::parse(element_, nullptr, false);
      if (!element.is_discarded()) on_element_(element);
    }
  }
}

std::vector<std::string> schema_column_names(std::string_view schema) {
  std::vector<std::string> names;
  int depth = 0;
  bool at_start = true;
  for (size_t i = 0; i < schema.size(); ++i) {
    char c = schema[i];
    if (at_start && c == '`') {  // the column's quoted name; `` inside it is one backtick
      std::string name;
      for (++i; i < schema.size(); ++i) {
        if (schema[i] != '`') {
          name += schema[i];
        } else if (i + 1 < schema.size() && schema[i + 1] == '`') {
          name += '`';
          ++i;
        } else {
          break;
        }
      }
      names.push_back(name);
      at_start = false;
    } else if (c == '<' || c == '(') {
      ++depth;
    } else if (c == '>' || c == ')') {
      --depth;
    } else if (c == '`' && depth > 0) {  // a struct field's name: skip it whole
      while (++i < schema.size() && schema[i] != '`') {
      }
    } else if (c == ',' && depth == 0) {
      at_start = true;
    }
  }
  return names;
}

std::string cell_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + cell_text(value[i]);
    return out + "]";
  }
  if (value.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [key, item] : value.items()) {
      out += (first ? "" : ", ") + key + "=" + cell_text(item);
      first = false;
    }
    return out + "}";
  }
  return value.dump();  // numbers, booleans, null
}

namespace {

std::string rule(size_t columns, int cell_width) {
  std::string line = "+";
  for (size_t i = 0; i < columns; ++i) line += std::string(cell_width, '-') + "+";
  return line;
}

}  // namespace

std::string tabular_row(const std::vector<std::string>& cells, int width, bool header) {
  if (cells.empty()) return "";
  const int cell_width = std::max(width / static_cast<int>(cells.size()) - 2, 5);
  size_t lines = 1;
  for (const auto& cell : cells)
    lines = std::max(lines, (cell.size() + cell_width - 1) / cell_width);
  std::string out;
  if (header) out += rule(cells.size(), cell_width) + "\n";
  for (size_t line = 0; line < lines; ++line) {
    out += "|";
    for (const auto& cell : cells) {
      size_t from = line * cell_width;
      std::string part = from < cell.size() ? cell.substr(from, cell_width) : "";
      out += part + std::string(cell_width - part.size(), ' ') + "|";
    }
    if (line + 1 < lines) out += "\n";
  }
  if (header) out += "\n" + rule(cells.size(), cell_width);
  return out;
}

bool QueryOutput::print(const json& element) {
  if (element.contains("header")) {
    const json& header = element["header"];
    if (json_)
      console().out(fmt::format("{}\n", header.dump(2)));
    else
      console().out(fmt::format(
          "{}\n", tabular_row(schema_column_names(header.value("schema", "")), width_, true)));
  } else if (element.contains("row")) {
    const json& row = element["row"];
    if (json_) {
      console().out(fmt::format("{}\n", row.dump(2)));
    } else {
      bool tombstone = row.value("tombstone", false);
      std::vector<std::string> cells;
      for (const auto& value : row.value("columns", json::array()))
        cells.push_back(tombstone && value.is_null() ? "<TOMBSTONE>" : cell_text(value));
      console().out(fmt::format("{}\n", tabular_row(cells, width_, false)));
    }
  } else if (element.contains("finalMessage")) {
    console().out(fmt::format("{}\n", element["finalMessage"].is_string()
                                          ? element["finalMessage"].get<std::string>()
                                          : element["finalMessage"].dump()));
    return false;
  } else if (element.contains("errorMessage")) {
    const json& error = element["errorMessage"];
    console().error(fmt::format(
        "{}\n", error.is_object() ? error.value("message", error.dump()) : cell_text(error)));
    failed_ = true;
    return false;
  }
  return true;
}

}  // namespace oxbow::cli
