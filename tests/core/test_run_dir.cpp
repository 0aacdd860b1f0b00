// Run folder: runs/<task>/<name>, then name2, name3, ... unless exist_ok (the reference's rule).
#include <doctest/doctest.h>

#include "core/run_dir.h"
#include "test_support.h"

using namespace trainer::core;
using trainer::test::TempDir;

TEST_CASE("run folders increment train, train2, train3 and exist_ok reuses") {
  TempDir dir;
  RunConfig run;
  run.project = (dir / "runs/detect").string();
  CHECK(create_run_dir(run) == dir / "runs/detect/train");
  CHECK(create_run_dir(run) == dir / "runs/detect/train2");
  CHECK(create_run_dir(run) == dir / "runs/detect/train3");
  CHECK(choose_run_dir(run) == dir / "runs/detect/train4");  // choosing creates nothing
  CHECK_FALSE(std::filesystem::exists(dir / "runs/detect/train4"));
  run.exist_ok = true;
  CHECK(create_run_dir(run) == dir / "runs/detect/train");
  run.exist_ok = false;
  run.name = "exp";
  CHECK(create_run_dir(run) == dir / "runs/detect/exp");
}

TEST_CASE("the default project is runs/<task>") {
  RunConfig run;
  run.task = Task::kPose;
  run.name = "a-name-that-does-not-exist-here";
  CHECK(choose_run_dir(run) == std::filesystem::path("runs/pose/a-name-that-does-not-exist-here"));
}
