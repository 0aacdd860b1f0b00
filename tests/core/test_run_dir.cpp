// Run folder: runs/<task>/<name>, then name2, name3, ... unless exist_ok (the reference's rule).
#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

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

TEST_CASE("runs started at the same moment never share a run folder") {
  // 8 threads claim folders at once, 4 each: every claim must be a folder of its own. (The old
  // exists-then-create rule handed the same name to several claimants.)
  TempDir dir;
  RunConfig run;
  run.project = (dir / "runs").string();
  constexpr int kThreads = 8, kEach = 4;
  std::vector<std::filesystem::path> claimed(kThreads * kEach);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready < kThreads) std::this_thread::yield();
      for (int k = 0; k < kEach; ++k) claimed[t * kEach + k] = create_run_dir(run);
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::filesystem::path> distinct(claimed.begin(), claimed.end());
  CHECK(distinct.size() == claimed.size());
  CHECK(distinct.count(dir / "runs/train") == 1);
  CHECK(distinct.count(dir / "runs/train32") == 1);  // 32 claims: train, train2 ... train32
  CHECK(distinct.count(dir / "runs/train33") == 0);
}

TEST_CASE("a file named like a run folder is skipped like a taken name") {
  TempDir dir;
  RunConfig run;
  run.project = dir.path().string();
  trainer::test::write_text(dir / "train", "not a folder");
  CHECK(create_run_dir(run) == dir / "train2");
}

TEST_CASE("a run folder is one with args.yaml and weights/") {
  TempDir dir;
  CHECK_FALSE(is_run_folder(dir.path()));
  std::filesystem::create_directories(dir / "weights");
  CHECK_FALSE(is_run_folder(dir.path()));  // weights/ alone: e.g. a user's download folder
  trainer::test::write_text(dir / "args.yaml", "epochs: 1\n");
  CHECK(is_run_folder(dir.path()));
}

TEST_CASE("a claimed run folder is given back unless kept, with the parents the claim made") {
  TempDir dir;
  RunConfig run;
  run.project = (dir / "runs/detect").string();
  {
    ClaimedRunDir claim(run);
    CHECK(claim.path() == dir / "runs/detect/train");
    trainer::test::write_text(claim.path() / "weights" / "x.txt", "x");
  }
  // Given back: the folder, runs/detect and runs (all made by the claim) are gone, so the next
  // run takes `train` again.
  CHECK_FALSE(std::filesystem::exists(dir / "runs"));
  {
    ClaimedRunDir claim(run);
    CHECK(claim.path() == dir / "runs/detect/train");
    claim.keep();
  }
  CHECK(std::filesystem::is_directory(dir / "runs/detect/train"));
  {
    ClaimedRunDir second(run);
    CHECK(second.path() == dir / "runs/detect/train2");
    ClaimedRunDir moved = std::move(second);  // the claim moves with it, and is given back once
  }
  CHECK_FALSE(std::filesystem::exists(dir / "runs/detect/train2"));
  CHECK(std::filesystem::is_directory(dir / "runs/detect/train"));  // a kept folder stays
  // exist_ok on a folder that was there before: never removed, whatever it holds.
  run.exist_ok = true;
  trainer::test::write_text(dir / "runs/detect/train/results.csv", "epoch\n");
  { ClaimedRunDir reused(run); }
  CHECK(std::filesystem::exists(dir / "runs/detect/train/results.csv"));
}
