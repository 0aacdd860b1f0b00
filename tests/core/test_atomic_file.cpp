#include <doctest/doctest.h>

#include <sys/stat.h>

#include <stdexcept>

#include "core/atomic_file.h"
#include "test_support.h"

using namespace trainer::core;
using trainer::test::read_text;
using trainer::test::TempDir;
using trainer::test::write_text;

TEST_CASE("an atomic write replaces the file and leaves no temporary behind") {
  TempDir dir;
  write_file_atomically(dir / "f.txt", "first");
  write_file_atomically(dir / "f.txt", "second");
  CHECK(read_text(dir / "f.txt") == "second");
  CHECK_FALSE(std::filesystem::exists(dir / "f.txt.tmp"));
}

TEST_CASE("a failed write leaves the previous file intact") {
  TempDir dir;
  write_text(dir / "keep.txt", "previous");
  // The temporary's name is taken by a folder, so the write cannot start.
  std::filesystem::create_directory(dir / "keep.txt.tmp");
  CHECK_THROWS_AS(write_file_atomically(dir / "keep.txt", "new"), std::runtime_error);
  CHECK(read_text(dir / "keep.txt") == "previous");
}
