// The ranks agreeing on one checkpoint without a shared file system (checkpoint_exchange.h), and
// how a fit starts: a resume whose file only some nodes hold, an elastic restart of a job that
// recorded its run (fit_start.h). Each rank has its own folder, as each node would.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/config_writer.h"
#include "core/error.h"
#include "distributed/rank_threads.h"
#include "engine/checkpoint/checkpoint_exchange.h"
#include "engine/checkpoint/fit_start.h"
#include "engine/checkpoint/run_config_fixture.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::test;
namespace fs = std::filesystem;

namespace {

// A checkpoint of `epoch` of run `run_id` whose weights tell it apart (w = epoch + salt).
engine::Checkpoint checkpoint(int64_t epoch, const std::string& run_id, double salt = 0.0) {
  engine::Checkpoint c;
  c.config_yaml = core::config_to_yaml(small_run_config("runs"));
  c.epoch = epoch;
  c.best_epoch = epoch;
  c.run_id = run_id;
  c.model["w"] = torch::full({3}, static_cast<double>(epoch) + salt);
  c.ema["ema.w"] = torch::full({3}, static_cast<double>(epoch) + salt + 0.5);
  return c;
}

// Each rank's copy of the agreement.
struct Seen {
  std::vector<engine::AgreedCheckpoint> agreed;
  std::mutex mutex;
  explicit Seen(int n) : agreed(static_cast<size_t>(n)) {}
};

// Every rank offers `node(r)/last.ckpt`.
void agree(const std::string& name, int size, const std::vector<fs::path>& nodes,
           const engine::CheckpointWanted& wanted, Seen& seen) {
  run_ranks(name, size, [&](int rank, distributed::Group& g) {
    auto a =
        engine::agree_on_checkpoint(&g, nodes[static_cast<size_t>(rank)] / "last.ckpt", wanted);
    std::lock_guard<std::mutex> lock(seen.mutex);
    seen.agreed[static_cast<size_t>(rank)] = std::move(a);
  });
}

std::vector<fs::path> node_folders(const TempDir& dir, int n) {
  std::vector<fs::path> nodes;
  for (int r = 0; r < n; ++r) {
    nodes.push_back(dir / ("node" + std::to_string(r)));
    fs::create_directories(nodes.back());
  }
  return nodes;
}

}  // namespace

TEST_CASE("checkpoint exchange: a file only rank 0 holds reaches ranks 1 and 2 intact") {
  TempDir dir;
  const auto nodes = node_folders(dir, 3);
  engine::save_checkpoint(checkpoint(2, "run-a"), nodes[0] / "last.ckpt");
  Seen seen(3);
  agree("exchange-one", 3, nodes, {"run-a", -1}, seen);
  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r);
    const auto& a = seen.agreed[static_cast<size_t>(r)];
    REQUIRE(a.checkpoint);
    CHECK(a.holder == 0);
    CHECK(a.sent_to == std::vector<int>{1, 2});
    CHECK(a.checkpoint->epoch == 2);
    CHECK(a.checkpoint->run_id == "run-a");
    CHECK(torch::equal(a.checkpoint->model.at("w"), torch::full({3}, 2.0)));
    CHECK(torch::equal(a.checkpoint->ema.at("ema.w"), torch::full({3}, 2.5)));
    CHECK(a.where.find((nodes[0] / "last.ckpt").string()) != std::string::npos);
    CHECK(a.offers[1].epoch == -1);
    CHECK(a.offers[1].why == "no such file");
  }
}

TEST_CASE("checkpoint exchange: the newest epoch wins, the same file is read locally") {
  TempDir dir;
  const auto nodes = node_folders(dir, 3);
  engine::save_checkpoint(checkpoint(1, "run-a"), nodes[0] / "last.ckpt");
  engine::save_checkpoint(checkpoint(3, "run-a"), nodes[1] / "last.ckpt");
  fs::copy_file(nodes[1] / "last.ckpt", nodes[2] / "last.ckpt");  // the same bytes: not sent
  Seen seen(3);
  agree("exchange-newest", 3, nodes, {"run-a", -1}, seen);
  for (const auto& a : seen.agreed) {
    REQUIRE(a.checkpoint);
    CHECK(a.holder == 1);  // the lowest rank holding epoch 3
    CHECK(a.sent_to == std::vector<int>{0});
    CHECK(a.checkpoint->epoch == 3);
    CHECK(torch::equal(a.checkpoint->model.at("w"), torch::full({3}, 3.0)));
  }
  // Every rank holding the same file: nothing is sent.
  fs::copy_file(nodes[1] / "last.ckpt", nodes[0] / "last.ckpt",
                fs::copy_options::overwrite_existing);
  Seen same(3);
  agree("exchange-same", 3, nodes, {"", -1}, same);
  for (const auto& a : same.agreed) {
    CHECK(a.holder == 0);
    CHECK(a.sent_to.empty());
    REQUIRE(a.checkpoint);
    CHECK(a.checkpoint->epoch == 3);
  }
}

TEST_CASE("checkpoint exchange: another run's file, another epoch or a torn file is not offered") {
  TempDir dir;
  const auto nodes = node_folders(dir, 3);
  engine::save_checkpoint(checkpoint(1, "run-a"), nodes[0] / "last.ckpt");
  engine::save_checkpoint(checkpoint(7, "run-b"), nodes[1] / "last.ckpt");  // newer, not ours
  write_text(nodes[2] / "last.ckpt", "PK torn");
  Seen seen(3);
  agree("exchange-foreign", 3, nodes, {"run-a", -1}, seen);
  for (const auto& a : seen.agreed) {
    REQUIRE(a.checkpoint);
    CHECK(a.holder == 0);
    CHECK(a.checkpoint->epoch == 1);
    CHECK(a.sent_to == std::vector<int>{1, 2});
    CHECK(a.offers[1].why.find("another run's") != std::string::npos);
    CHECK(a.offers[2].why.find("not a readable checkpoint") != std::string::npos);
  }
  // The rollback asks for the epoch the run last saved: a later file is not it.
  Seen rollback(3);
  agree("exchange-epoch", 3, nodes, {"run-b", 3}, rollback);
  for (const auto& a : rollback.agreed) {
    CHECK_FALSE(a.checkpoint);
    CHECK(a.holder == -1);
    const std::string offers = a.describe_offers();
    CHECK(offers.find("rank 0 (") != std::string::npos);
    CHECK(offers.find("another run's") != std::string::npos);
    CHECK(offers.find("holds epoch 8, not epoch 4") != std::string::npos);
  }
}

TEST_CASE("checkpoint exchange: a single process reads its own file") {
  TempDir dir;
  engine::save_checkpoint(checkpoint(4, "run-a"), dir / "last.ckpt");
  const auto a = engine::agree_on_checkpoint(nullptr, dir / "last.ckpt", {"run-a", 4});
  REQUIRE(a.checkpoint);
  CHECK(a.holder == 0);
  CHECK(a.sent_to.empty());
  CHECK_FALSE(engine::agree_on_checkpoint(nullptr, dir / "none.ckpt", {}).checkpoint);
  CHECK(engine::checkpoint_checksum({}) == 14695981039346656037ull);   // FNV-1a's offset basis
  CHECK(engine::checkpoint_checksum({'a'}) == 0xaf63dc4c8601ec8cull);  // FNV-1a 64 of "a"
}

TEST_CASE("fit start: a resume whose file only rank 0's node holds gives every rank its config") {
  TempDir dir;
  const auto nodes = node_folders(dir, 2);
  const core::TrainConfig original = small_run_config(dir.path());
  engine::Checkpoint ckpt = checkpoint(2, "run-a");
  ckpt.config_yaml = core::config_to_yaml(original);
  const fs::path last = nodes[0] / "runs" / "run" / "weights" / "last.ckpt";
  engine::save_checkpoint(ckpt, last);
  std::mutex m;
  std::vector<engine::FitStart> starts(2);
  run_ranks("start-resume", 2, [&](int rank, distributed::Group& g) {
    // Rank 1 names a path its node lacks: the command line's config, resume= still naming it.
    core::TrainConfig given;
    given.run.resume = rank == 0 ? last.string() : (nodes[1] / "missing.ckpt").string();
    auto start = engine::agree_fit_start(&g, g.records().get(), given, {}, {"workers=3"});
    std::lock_guard<std::mutex> lock(m);
    starts[static_cast<size_t>(rank)] = std::move(start);
  });
  // Rank 1's path is not rank 0's: each offers its own, rank 0's is the only one.
  for (const auto& s : starts) {
    REQUIRE(s.checkpoint);
    CHECK(s.checkpoint->epoch == 2);
    CHECK(s.config.optim.lr0 == doctest::Approx(0.02));  // the checkpoint's config
    CHECK(s.config.schedule.epochs == 5);
    CHECK(s.config.data.workers == 3);  // a changeable key from the command line
    CHECK(s.restart_dir.empty());
    CHECK(s.attempt == 0);
  }
}

TEST_CASE("fit start: a restart resumes the recorded run from its last checkpoint") {
  TempDir dir;
  const core::TrainConfig original = small_run_config(dir.path());
  const fs::path run_dir = dir / "runs" / "job";
  engine::Checkpoint ckpt = checkpoint(3, "run-a");
  ckpt.config_yaml = core::config_to_yaml(original);
  engine::save_checkpoint(ckpt, run_dir / "weights" / "last.ckpt");
  // Attempt 0 recorded its run (FitRun does so once its folder is open).
  run_ranks("start-restart", 2, [&](int rank, distributed::Group& g) {
    if (rank == 0) g.records()->set(engine::kRunRecord, engine::run_record("run-a", run_dir));
    g.barrier();
  });
  std::mutex m;
  std::vector<engine::FitStart> starts(2);
  run_ranks(
      "start-restart", 2,
      [&](int rank, distributed::Group& g) {
        // The same command line as attempt 0's (a new run): the record turns it into a resume.
        auto start = engine::agree_fit_start(&g, g.records().get(), original, {}, {});
        std::lock_guard<std::mutex> lock(m);
        starts[static_cast<size_t>(rank)] = std::move(start);
      },
      {std::chrono::seconds(60), std::chrono::seconds(60), std::chrono::seconds(60)}, 1);
  for (const auto& s : starts) {
    CHECK(s.attempt == 1);
    CHECK(s.restart_dir == run_dir);
    CHECK(s.run_id == "run-a");
    REQUIRE(s.checkpoint);
    CHECK(s.checkpoint->epoch == 3);
    CHECK(s.config.run.resume == fs::absolute(run_dir / "weights" / "last.ckpt").string());
  }
}

TEST_CASE("fit start: a restart whose run committed an epoch nobody can read stops, naming it") {
  TempDir dir;
  const fs::path run_dir = dir / "runs" / "gone";
  run_ranks("start-gone", 2, [&](int rank, distributed::Group& g) {
    if (rank == 0) {
      g.records()->set(engine::kRunRecord, engine::run_record("run-g", run_dir));
      g.records()->set(engine::kCommittedRecord,
                       engine::committed_record(4, "nodeA:/data/runs/gone/weights/last.ckpt"));
    }
    g.barrier();
  });
  std::mutex m;
  std::vector<std::string> errors(2);
  run_ranks(
      "start-gone", 2,
      [&](int rank, distributed::Group& g) {
        try {
          (void)engine::agree_fit_start(&g, g.records().get(), small_run_config(dir.path()), {},
                                        {});
        } catch (const core::InputError& e) {
          std::lock_guard<std::mutex> lock(m);
          errors[static_cast<size_t>(rank)] = e.what();
        }
      },
      {std::chrono::seconds(60), std::chrono::seconds(60), std::chrono::seconds(60)}, 1);
  for (const auto& e : errors) {
    CHECK(e.find("restart 1:") != std::string::npos);
    CHECK(e.find("completed epoch 5") != std::string::npos);
    CHECK(e.find("nodeA:/data/runs/gone/weights/last.ckpt") != std::string::npos);
    CHECK(e.find("no such file") != std::string::npos);
  }
}

TEST_CASE("fit start: a restart of a run that completed no epoch starts again in its folder") {
  TempDir dir;
  const fs::path run_dir = dir / "runs" / "early";
  run_ranks("start-early", 2, [&](int rank, distributed::Group& g) {
    if (rank == 0) g.records()->set(engine::kRunRecord, engine::run_record("run-e", run_dir));
    g.barrier();
  });
  std::mutex m;
  std::vector<engine::FitStart> starts(2);
  run_ranks(
      "start-early", 2,
      [&](int rank, distributed::Group& g) {
        auto start =
            engine::agree_fit_start(&g, g.records().get(), small_run_config(dir.path()), {}, {});
        std::lock_guard<std::mutex> lock(m);
        starts[static_cast<size_t>(rank)] = std::move(start);
      },
      {std::chrono::seconds(60), std::chrono::seconds(60), std::chrono::seconds(60)}, 1);
  for (const auto& s : starts) {
    CHECK_FALSE(s.checkpoint);
    CHECK(s.restart_dir == run_dir);
    CHECK(s.run_id == "run-e");
    CHECK(s.config.run.resume.empty());
  }
}

TEST_CASE("fit start: a restart that leaves a single worker (no group) resumes from the records") {
  TempDir dir;
  const core::TrainConfig original = small_run_config(dir.path());
  const fs::path run_dir = dir / "runs" / "shrunk";
  engine::Checkpoint ckpt = checkpoint(1, "run-s");
  ckpt.config_yaml = core::config_to_yaml(original);
  engine::save_checkpoint(ckpt, run_dir / "weights" / "last.ckpt");
  run_ranks("start-single", 2, [&](int rank, distributed::Group& g) {
    if (rank == 0) g.records()->set(engine::kRunRecord, engine::run_record("run-s", run_dir));
    g.barrier();
  });
  // Attempt 1 with one worker: its records without a group (the torchrun client's role).
  run_ranks(
      "start-single", 1,
      [&](int, distributed::Group& g) {
        const auto start = engine::agree_fit_start(nullptr, g.records().get(), original, {}, {});
        CHECK(start.attempt == 1);
        CHECK(start.restart_dir == run_dir);
        REQUIRE(start.checkpoint);
        CHECK(start.checkpoint->epoch == 1);
      },
      {std::chrono::seconds(60), std::chrono::seconds(60), std::chrono::seconds(60)}, 1);
  // No records (outside torchrun's agent): the config as it is.
  const auto plain = engine::agree_fit_start(nullptr, nullptr, original, {}, {});
  CHECK_FALSE(plain.checkpoint);
  CHECK(plain.restart_dir.empty());
}
