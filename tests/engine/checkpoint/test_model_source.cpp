// The model source of a run: a weights file given as model= read once for its architecture,
// task and tensors (fit), and the run's task taken from the source without reading it again.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "core/config_loader.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/model_source.h"
#include "engine/trainer.h"
#include "integration/fit_fixture.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::test;

namespace {

// A finished one-epoch run of the tiny model; returns its last.ckpt.
std::filesystem::path trained_checkpoint(const std::filesystem::path& project) {
  core::TrainConfig config = test::tiny_fit_config(project, "source", 1);
  config.run.val = false;
  const auto result = engine::fit(config);
  return result.run_dir / "weights" / "last.ckpt";
}

}  // namespace

TEST_CASE("model source: fit reads a model= .ckpt once and starts from its EMA (slow)") {
  TempDir dir;
  const auto ckpt_path = trained_checkpoint(dir.path());
  const engine::Checkpoint ckpt = engine::load_checkpoint(ckpt_path);
  core::TrainConfig config = test::tiny_fit_config(dir.path(), "tuned", 1);
  config.model.model = ckpt_path.string();
  config.run.val = false;

  const int64_t before = engine::checkpoint_loads();
  const auto result = engine::fit(config);
  CHECK(engine::checkpoint_loads() - before == 1);  // was 8: task, context, splits, source, ...

  // The run recorded the checkpoint's task and architecture source.
  const auto args =
      core::load_config_text(read_text(result.run_dir / "args.yaml"), "args.yaml", result.run_dir);
  REQUIRE(args.config.run.task.has_value());
  CHECK(*args.config.run.task == core::Task::kDetect);

  // read_model_source read its EMA weights with its architecture, in one load.
  const int64_t again = engine::checkpoint_loads();
  const engine::ModelSource source = engine::read_model_source(config);
  CHECK(engine::checkpoint_loads() - again == 1);
  CHECK(source.name.display() == "yolo26t");
  CHECK(source.weights == ckpt_path);
  REQUIRE(source.pretrained.has_value());
  const auto ema = engine::ema_weights(ckpt);
  REQUIRE(source.pretrained->weights.size() == ema.size());
  CHECK(source.pretrained->weights.front().first == ema.front().first);
  CHECK(torch::equal(source.pretrained->weights.front().second, ema.front().second));
  CHECK(engine::resolved_task(config, source) == core::Task::kDetect);
}

TEST_CASE("model source: resolve reads no tensors, pretrained=false and resume read none (slow)") {
  TempDir dir;
  const auto ckpt_path = trained_checkpoint(dir.path());
  core::TrainConfig config = test::tiny_fit_config(dir.path(), "x", 1);
  config.model.model = ckpt_path.string();
  CHECK_FALSE(engine::resolve_model_source(config).pretrained.has_value());
  config.model.pretrained = "false";
  auto source = engine::read_model_source(config);
  CHECK(source.weights.empty());
  CHECK_FALSE(source.pretrained.has_value());
  config.model.pretrained = "true";
  config.run.resume = ckpt_path.string();  // a resume loads its own state later
  source = engine::read_model_source(config);
  CHECK_FALSE(source.pretrained.has_value());
  CHECK(source.name.display() == "yolo26t");
}

TEST_CASE(
    "model source: the run's task from the source: `task` first, then the file's, then the name") {
  core::TrainConfig config;
  engine::ModelSource source;
  source.name.task = core::Task::kPose;
  config.model.model = "runs/x/weights/best.pt";
  CHECK(engine::resolved_task(config, source) == core::Task::kPose);  // the weights file's own
  config.run.task = core::Task::kDetect;
  CHECK(engine::resolved_task(config, source) == core::Task::kDetect);  // `task` given wins
  config.run.task.reset();
  config.model.model = "yolo26n-seg";
  CHECK(engine::resolved_task(config, source) == core::Task::kSegment);  // the name's suffix
}
