// Helpers for the daemon unit tests: temp directories, files, child processes.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vf::test {

// A fresh directory under $TMPDIR (or /tmp), removed with its content.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, const std::string& text);

struct RunResult {
  int status = -1;  // exit status, or 128+signal
  std::string out, err;
};
// Runs argv[0] (PATH lookup) with the current environment changed by `set`
// (value) and `unset` (nullopt), capturing stdout and stderr.
RunResult run(const std::vector<std::string>& argv,
              const std::map<std::string, std::optional<std::string>>& env = {});

// True when this process may create character device nodes (root with
// CAP_MKNOD); tests that need nodes skip otherwise.
bool can_mknod();

// 1-based number of the first line of `text` containing `needle`; 0 if none.
int line_of(const std::string& text, const std::string& needle);

}  // namespace vf::test
