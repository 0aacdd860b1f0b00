// Atomic writes: the target replaced whole, its mode kept (or the umask's for a new file), failures
// leaving it as it was, and the temporaries of interrupted writes removed.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/atomic_file.h"
#include "test_support.h"

using namespace trainer::core;
using trainer::test::read_text;
using trainer::test::TempDir;
using trainer::test::write_text;

namespace {
// Files in `dir` whose name starts with `prefix` (temporaries left behind).
int count_with_prefix(const std::filesystem::path& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

mode_t mode_of(const std::filesystem::path& file) {
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Sets the process umask for one test and restores the previous one.
class UmaskGuard {
 public:
  explicit UmaskGuard(mode_t mask) : previous_(::umask(mask)) {}
  ~UmaskGuard() { ::umask(previous_); }
  UmaskGuard(const UmaskGuard&) = delete;
  UmaskGuard& operator=(const UmaskGuard&) = delete;

 private:
  mode_t previous_;
};
}  // namespace

TEST_CASE("an atomic write replaces the file, mode 0644 under umask 022, no temporary behind") {
  const UmaskGuard umask(022);
  TempDir dir;
  write_text(dir / "f.txt.tmp", "a stale temporary of an older writer");  // not in the way
  write_file_atomically(dir / "f.txt", "first");
  write_file_atomically(dir / "f.txt", "second");
  CHECK(read_text(dir / "f.txt") == "second");
  CHECK(count_with_prefix(dir.path(), "f.txt.tmp.") == 0);
  CHECK(read_text(dir / "f.txt.tmp") == "a stale temporary of an older writer");
  CHECK(mode_of(dir / "f.txt") == 0644);
}

TEST_CASE("an atomic rewrite keeps the target's mode, a new file gets 0666 less the umask") {
  TempDir dir;
  {
    const UmaskGuard umask(077);
    write_file_atomically(dir / "private.txt", "secret");
    CHECK(mode_of(dir / "private.txt") == 0600);  // 0666 & ~077
  }
  {
    const UmaskGuard umask(022);
    write_file_atomically(dir / "f.txt", "first");
    REQUIRE(::chmod((dir / "f.txt").c_str(), 0600) == 0);
    write_file_atomically(dir / "f.txt", "second");
    CHECK(read_text(dir / "f.txt") == "second");
    CHECK(mode_of(dir / "f.txt") == 0600);  // the user's chmod, not the umask's 0644
    REQUIRE(::chmod((dir / "f.txt").c_str(), 0664) == 0);
    write_file_atomically(dir / "f.txt", "third");
    CHECK(mode_of(dir / "f.txt") == 0664);
    write_file_atomically(dir / "private.txt", "rewritten");
    CHECK(mode_of(dir / "private.txt") == 0600);  // kept, though umask 022 would give 0644
  }
}

TEST_CASE("a failed write names the path, leaves the target as it was and no temporary") {
  TempDir dir;
  // The target is a non-empty folder: the rename fails after the temporary was written.
  write_text(dir / "keep" / "inside.txt", "previous");
  try {
    write_file_atomically(dir / "keep", "new");
    FAIL("expected a runtime_error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find((dir / "keep").string()) != std::string::npos);
  }
  CHECK(read_text(dir / "keep" / "inside.txt") == "previous");
  CHECK(count_with_prefix(dir.path(), "keep.tmp.") == 0);
  // A folder that does not exist: nothing can be created, the error names the temporary.
  CHECK_THROWS_AS(write_file_atomically(dir / "missing" / "f.txt", "x"), std::runtime_error);
}

TEST_CASE("stale temporaries of interrupted writes are removed, nothing else") {
  TempDir dir;
  write_text(dir / "last.ckpt", "kept");
  write_text(dir / "last.ckpt.tmp.a1B2c3", "half a checkpoint");
  write_text(dir / "results.csv.tmp.XyZ789", "half a table");
  write_text(dir / "notes.tmp.short", "not mkostemp's six characters");
  write_text(dir / ".tmp.abcdef", "no target name");
  write_text(dir / "f.txt.tmp", "no suffix");
  std::filesystem::create_directories(dir / "sub.tmp.abcdef");  // a folder, not a file
  auto removed = remove_stale_temporaries(dir.path());
  std::sort(removed.begin(), removed.end());
  CHECK(removed == std::vector<std::filesystem::path>{dir / "last.ckpt.tmp.a1B2c3",
                                                      dir / "results.csv.tmp.XyZ789"});
  CHECK(read_text(dir / "last.ckpt") == "kept");
  for (const char* kept : {"notes.tmp.short", ".tmp.abcdef", "f.txt.tmp", "sub.tmp.abcdef"}) {
    CHECK(std::filesystem::exists(dir / kept));
  }
  CHECK(remove_stale_temporaries(dir / "missing").empty());
}
