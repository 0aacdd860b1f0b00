// One live run per folder: the lock refuses a second holder, names the first, and a lock left by
// a dead process is taken over.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/run_lock.h"
#include "test_support.h"

using trainer::core::RunLock;
using trainer::test::TempDir;

TEST_CASE("a held run lock refuses a second run and names the holder") {
  TempDir dir;
  {
    RunLock held(dir.path());
    CHECK(held.stale_holder().empty());
    const std::string text = trainer::test::read_text(dir / RunLock::kFileName);
    CHECK(text.find(" " + std::to_string(::getpid())) != std::string::npos);
    CHECK_THROWS_WITH_AS(RunLock(dir.path()),
                         doctest::Contains("is in use by a live run (host and pid: "),
                         trainer::core::InputError);
  }
  CHECK_FALSE(std::filesystem::exists(dir / RunLock::kFileName));  // released and removed
  RunLock again(dir.path());
  CHECK(again.stale_holder().empty());
}

TEST_CASE("a lock held by another process refuses, once that process dies it is stale") {
  TempDir dir;
  int to_child[2], to_parent[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(to_parent) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    RunLock held(dir.path());
    char c = 'x';
    (void)!::write(to_parent[1], &c, 1);
    (void)!::read(to_child[0], &c, 1);  // hold until told, then die without releasing
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(to_parent[0], &c, 1) == 1);
  const std::string holder = " " + std::to_string(child) + ")";
  CHECK_THROWS_WITH_AS(RunLock(dir.path()), doctest::Contains(holder.c_str()),
                       trainer::core::InputError);
  REQUIRE(::write(to_child[1], &c, 1) == 1);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  // _exit ran no destructor: the file is still there with the dead holder's line.
  REQUIRE(std::filesystem::exists(dir / RunLock::kFileName));
  RunLock taken(dir.path());
  CHECK(taken.stale_holder().find(" " + std::to_string(child)) != std::string::npos);
}
