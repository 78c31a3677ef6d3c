#include "cli/sql_console.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <utility>

namespace oxbow::cli {

void SqlConsole::out(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  if (spool_.is_open()) spool_ << text << std::flush;
}

void SqlConsole::error(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  if (spool_.is_open()) spool_ << text << std::flush;
}

void SqlConsole::typed(std::string_view line) {
  if (spool_.is_open()) spool_ << "ksql> " << line << '\n' << std::flush;
}

void SqlConsole::spool(const std::string& path) {
  std::ofstream file(path, std::ios::trunc);
  if (!file) throw std::runtime_error("Cannot SPOOL to file: " + path);
  spool_off();
  spool_ = std::move(file);
  spool_path_ = std::filesystem::absolute(path).string();
}

std::string SqlConsole::spool_off() {
  if (spool_.is_open()) spool_.close();
  return std::exchange(spool_path_, {});
}

SqlConsole& console() {
  static SqlConsole the_console;
  return the_console;
}

}  // namespace oxbow::cli
