// End-to-end: fit a tiny model on the synthetic set; exact resume; broken checkpoints.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "engine/checkpoint.h"
#include "engine/results_log.h"
#include "engine/trainer.h"
#include "fit_fixture.h"
#include "test_support.h"

using namespace trainer;

namespace {

bool equal_maps(const engine::TensorMap& a, const engine::TensorMap& b, std::string* first_diff) {
  if (a.size() != b.size()) {
    *first_diff = "sizes differ";
    return false;
  }
  for (const auto& [key, tensor] : a) {
    auto it = b.find(key);
    if (it == b.end() || !torch::equal(tensor, it->second)) {
      *first_diff = key;
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("fit: a tiny model trains, validates, checkpoints and logs results") {
  test::TempDir dir;
  auto config = test::tiny_fit_config(dir.path(), "run", 4);
  config.run.plots = true;
  const auto result = engine::fit(config);
  CHECK(result.epochs_completed == 4);
  const auto run = result.run_dir;
  CHECK(std::filesystem::exists(run / "weights" / "last.ckpt"));
  CHECK(std::filesystem::exists(run / "weights" / "best.ckpt"));
  CHECK(std::filesystem::exists(run / "weights" / "last.pt"));
  CHECK(std::filesystem::exists(run / "args.yaml"));
  CHECK(std::filesystem::exists(run / "results.png"));
  CHECK(std::filesystem::exists(run / "train_batch0.jpg"));
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  engine::read_results_csv(run / "results.csv", &columns, &rows);
  REQUIRE(rows.size() == 4);
  CHECK(columns[2] == "train/box_loss");
  CHECK(columns[8] == "metrics/mAP50-95(B)");
  const double first = rows.front()[2] + rows.front()[3] + rows.front()[4];
  const double last = rows.back()[2] + rows.back()[3] + rows.back()[4];
  MESSAGE("train loss sum epoch 1 " << first << " -> epoch 4 " << last);
  CHECK(last < first);
  for (const auto& row : rows) CHECK(std::isfinite(row[8]));  // validation ran every epoch
  REQUIRE(result.last_validation);
  CHECK(result.last_validation->images == 8);
  CHECK(result.last_validation->coco.has_value());
}

TEST_CASE("fit: N epochs straight equal N/2, then resume, then N/2, bit for bit") {
  test::TempDir dir;
  auto config = test::tiny_fit_config(dir.path(), "straight", 4);
  config.run.val = false;  // validation does not touch the training state; keep the test short
  config.run.save_period = 2;
  const auto straight = engine::fit(config);
  const auto full = engine::load_checkpoint(straight.run_dir / "weights" / "last.ckpt");
  // Resume from the epoch-2 checkpoint of the same run: it continues in that run's folder.
  const auto half = straight.run_dir / "weights" / "epoch2.ckpt";
  REQUIRE(std::filesystem::exists(half));
  const auto resumed_config = engine::resume_config(half, {});
  const auto resumed = engine::fit(resumed_config);
  CHECK(resumed.epochs_completed == 2);
  const auto after = engine::load_checkpoint(straight.run_dir / "weights" / "last.ckpt");
  std::string diff;
  CHECK_MESSAGE(equal_maps(full.model, after.model, &diff), "model differs at " << diff);
  CHECK_MESSAGE(equal_maps(full.ema, after.ema, &diff), "EMA differs at " << diff);
  CHECK_MESSAGE(equal_maps(full.optimizer, after.optimizer, &diff),
                "optimizer differs at " << diff);
  CHECK(full.last_opt_step == after.last_opt_step);
  CHECK(full.loss_updates == after.loss_updates);
  // results.csv: the resumed run kept rows 1-2 and appended 3-4.
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  engine::read_results_csv(straight.run_dir / "results.csv", &columns, &rows);
  CHECK(rows.size() == 4);
}

TEST_CASE("fit: resume refuses config changes that would break exactness") {
  test::TempDir dir;
  auto config = test::tiny_fit_config(dir.path(), "r", 2);
  config.run.val = false;
  const auto run = engine::fit(config);
  CHECK_THROWS_WITH_AS(engine::resume_config(run.run_dir / "weights" / "last.ckpt", {"lr0=0.1"}),
                       doctest::Contains("lr0: cannot be changed when resuming"),
                       core::ConfigError);
  // The run is complete: resuming it is an error that says so.
  auto finished = engine::resume_config(run.run_dir / "weights" / "last.ckpt", {});
  CHECK_THROWS_WITH_AS(engine::fit(finished), doctest::Contains("already finished"),
                       core::ConfigError);
}
