// Helpers shared by the test suites: temporary folders, file writing, the shared COCO data.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace trainer::test {

// A fresh folder under the system temp dir, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void write_text(const std::filesystem::path& file, const std::string& text);
std::string read_text(const std::filesystem::path& file);

// ../shared/data (or $TRAINER_SHARED_DATA) if it holds `subset`, else nullopt. Tests that need it
// call this and skip with a message naming the variable when absent.
std::optional<std::filesystem::path> shared_data(const std::string& subset);

// Runs a shell command, capturing stdout+stderr; returns the exit status.
int run_command(const std::string& command, std::string* output);

// How many times `what` occurs in `text` (a log line counted, e.g. "reading weights file").
size_t count_of(const std::string& text, const std::string& what);

// The project's python: $TRAINER_PYTHON, else the venv scripts/setup.sh makes
// ($TRAINER_CACHE or ~/.cache/trainer, then venv/bin/python). The path may not exist.
std::string project_python();

// True under CI (CI=true): there a missing data set, oracle or tool is a failure, not a skip, so
// CI can never go green while testing nothing.
bool in_ci();

}  // namespace trainer::test

// Skips the rest of a test case (doctest has no skip-at-runtime): prints why and returns; under
// CI=true it fails the test case instead.
#define TRAINER_SKIP(why)                                                 \
  do {                                                                    \
    if (::trainer::test::in_ci()) FAIL("missing under CI=true: " << why); \
    MESSAGE("skipped: " << why);                                          \
    return;                                                               \
  } while (false)

#define TRAINER_SKIP_IF_NO_SHARED_DATA(var, subset)                                \
  const auto var = ::trainer::test::shared_data(subset);                           \
  if (!var) {                                                                      \
    TRAINER_SKIP("../shared/data/" subset " not found (set TRAINER_SHARED_DATA)"); \
  }
