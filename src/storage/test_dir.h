#pragma once
// A fresh temporary directory per test, removed afterwards.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace oxbow::storage::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "oxbow-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace oxbow::storage::testing
