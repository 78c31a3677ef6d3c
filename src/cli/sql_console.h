#pragma once
// Where `oxbow sql` writes: stdout and stderr and, while SPOOL is on, a file too, which gets the
// lines typed (after "ksql> ") and all that is printed, as ksqlDB's CLI spools a session.
#include <fstream>
#include <string>
#include <string_view>

namespace oxbow::cli {

class SqlConsole {
 public:
  void out(std::string_view text);
  void error(std::string_view text);
  // What the user typed: the terminal shows it already, so only the spool gets it.
  void typed(std::string_view line);
  // Starts spooling into `path` (truncated); throws when it cannot be opened.
  void spool(const std::string& path);
  // Ends spooling; returns the file's path, empty when there was none.
  std::string spool_off();

 private:
  std::ofstream spool_;
  std::string spool_path_;
};

// The one console of the process.
SqlConsole& console();

}  // namespace oxbow::cli
