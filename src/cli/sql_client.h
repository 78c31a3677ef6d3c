#pragma once
// `oxbow sql [URL]`: ksqlDB's CLI over the SQL server's REST API (docs/sql/cli.md).
#include <string>

namespace oxbow::cli {

struct SqlClientOptions {
  std::string url = "http://localhost:8088";
  std::string execute;             // -e: these statements, then exit
  std::string file;                // -f: this file's statements, then exit
  std::string output = "TABULAR";  // or JSON: the server's entities as they come
};

// Runs -e or -f (exiting 1 at the first statement that fails or when the server cannot be
// reached), else the interactive prompt until EOF or `exit`.
void run_sql_client(const SqlClientOptions& options);

}  // namespace oxbow::cli
