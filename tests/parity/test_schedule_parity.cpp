// Parity of the training schedule with a real reference run: every parameter group (8.4.190's 8
// MuSGD groups, in its order, with their sizes and initial lrs), each group's lr and momentum and
// the accumulate value at every iteration (warmup while ni <= nw), when the optimizer steps,
// which epochs run mosaic (close_mosaic), and the results.csv columns.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "core/config_loader.h"
#include "data/loader_options.h"
#include "engine/log/epoch_record.h"
#include "engine/train_step.h"
#include "engine/training_context.h"
#include "parity_oracle.h"
#include "test_support.h"

using namespace trainer;
using nlohmann::json;

TEST_CASE("parity: param groups, lr/momentum/accumulate per iteration, close_mosaic, columns") {
  TRAINER_REQUIRE_ORACLE(python);
  TRAINER_REQUIRE_SHARED_DATA(coco8, "coco8");
  test::TempDir dir;
  const auto data = test::reference_data_yaml(dir.path(), "coco8.yaml", *coco8);
  // 4 train images, batch 2 -> nb 2; warmup 1.5 epochs -> nw 3 (warmup ends inside epoch 1);
  // nbs 8 -> accumulate 4; close_mosaic 3 of 4 epochs -> mosaic in epoch 0 only.
  const std::vector<std::string> keys = {
      "model=yolo26n",       "epochs=4",           "batch=2",         "imgsz=64",  "nbs=8",
      "warmup_epochs=1.5",   "close_mosaic=3",     "optimizer=MuSGD", "lr0=0.01",  "momentum=0.937",
      "warmup_momentum=0.8", "warmup_bias_lr=0.1", "lrf=0.01",        "val=False", "seed=0"};
  std::string args = "schedule '" + (dir / "ref").string() + "' '" + data.string() + "'";
  for (const auto& k : keys) args += " " + k;
  test::run_oracle(*python, args);
  std::ifstream in(dir / "ref" / "schedule.json");
  REQUIRE(in.good());
  const json ref = json::parse(in);

  std::vector<std::string> ours_keys = {"data=" + data.string(), "device=cpu", "workers=0",
                                        "precision=fp32"};
  for (const auto& k : keys) {
    if (k != "val=False") ours_keys.push_back(k);
  }
  ours_keys.push_back("val=false");
  const auto config = core::load_config(std::filesystem::path{}, ours_keys).config;
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  engine::TrainingContext ctx = engine::build_training_context(config, options);

  // Groups: names, sizes and initial lrs in the reference's order.
  const auto& groups = ctx.optimization.optimizer->groups();
  REQUIRE(groups.size() == ref["groups"].size());
  for (size_t g = 0; g < groups.size(); ++g) {
    CAPTURE(g);
    CHECK(groups[g].params.size() == ref["groups"][g]["params"].get<size_t>());
    CHECK(groups[g].initial_lr == doctest::Approx(ref["groups"][g]["initial_lr"].get<double>()));
    const std::string kind = ref["groups"][g]["name"].get<std::string>();
    CHECK(groups[g].name.rfind(kind, 0) == 0);
  }

  // Every iteration: lr and momentum per group, accumulate, and whether the optimizer stepped.
  const int64_t nb = ctx.batches_per_epoch();
  REQUIRE(nb == ref["nb"].get<int64_t>());
  engine::TrainStep step(ctx);
  int64_t last_opt_step = -1;
  const auto& batches = ref["batches"];
  REQUIRE(static_cast<int64_t>(batches.size()) == nb * config.schedule.epochs);
  for (int64_t ni = 0; ni < static_cast<int64_t>(batches.size()); ++ni) {
    CAPTURE(ni);
    const auto& b = batches[ni];
    step.apply_schedule(ni);
    for (size_t g = 0; g < groups.size(); ++g) {
      CAPTURE(g);
      CHECK(groups[g].lr == doctest::Approx(b["lr"][g].get<double>()).epsilon(1e-12));
      CHECK(groups[g].momentum == doctest::Approx(b["momentum"][g].get<double>()).epsilon(1e-12));
    }
    CHECK(step.accumulate() == b["accumulate"].get<int64_t>());
    const bool stepped = ni - last_opt_step >= step.accumulate();  // TrainStep::run's rule
    if (stepped) last_opt_step = ni;
    CHECK(stepped == b["stepped"].get<bool>());
  }

  // close_mosaic: which epochs ran mosaic.
  const auto& mosaic = ref["mosaic"];
  REQUIRE(static_cast<int64_t>(mosaic.size()) == config.schedule.epochs);
  for (int epoch = 0; epoch < static_cast<int>(mosaic.size()); ++epoch) {
    CAPTURE(epoch);
    CHECK(data::mosaic_enabled(config, epoch) == mosaic[epoch].get<bool>());
  }

  // results.csv: the reference's columns are ours, in order; trainer's extras come after them.
  engine::EpochRecord record;
  record.columns = ctx.net.columns;
  record.train_loss.assign(record.columns.loss_names.size(), 0.0);
  record.learning_rates.assign(groups.size(), 0.0);
  const auto header = record.header();
  const auto& ref_header = ref["results_header"];
  REQUIRE(header.size() >= ref_header.size());
  for (size_t c = 0; c < ref_header.size(); ++c) {
    CAPTURE(c);
    CHECK(header[c] == ref_header[c].get<std::string>());
  }
  for (size_t c = ref_header.size(); c < header.size(); ++c) {
    CHECK(header[c].rfind("metrics/coco/", 0) == 0);
  }
}
