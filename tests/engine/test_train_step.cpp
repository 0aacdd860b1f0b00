// TrainStep: the schedule it applies, when it steps the optimizer, and the flags it keeps on the
// device (non-finite, the gradient norm), on a tiny model and the synthetic dataset.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/train_step.h"
#include "engine/training_context.h"
#include "integration/fit_fixture.h"
#include "optim/lr_schedule.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::test;

namespace {

engine::TrainingContext tiny_context(const std::filesystem::path& project, int64_t nbs) {
  core::TrainConfig config = test::tiny_fit_config(project, "step", 3);
  config.optim.nbs = nbs;  // accumulate = round(nbs / batch 4)
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  return engine::build_training_context(config, options);
}

double total_grad_norm(const std::vector<at::Tensor>& parameters) {
  double sum = 0.0;
  for (const auto& p : parameters) {
    if (p.grad().defined()) sum += p.grad().to(torch::kDouble).pow(2).sum().item<double>();
  }
  return std::sqrt(sum);
}

// Reads the gradients' norm when backward is done, before the clip and the optimizer step.
struct NormAfterBackward : engine::StageClock {
  explicit NormAfterBackward(const std::vector<at::Tensor>& p) : parameters(p) {}
  void mark(const char* stage) override {
    if (std::string(stage) == "backward") norm = total_grad_norm(parameters);
  }
  const std::vector<at::Tensor>& parameters;
  double norm = -1.0;
};

}  // namespace

TEST_CASE("train step: step_settings are the run's config and device, read once") {
  TempDir dir;
  core::TrainConfig config = test::tiny_fit_config(dir.path(), "settings", 1);
  config.run.static_shapes = true;
  config.data.max_instances = 17;
  config.optim.max_grad_norm = 3.5;
  config.run.seed = 42;
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  engine::TrainingContext ctx = engine::build_training_context(config, options);
  const engine::StepSettings s = engine::step_settings(ctx);
  CHECK(s.device == c10::Device(c10::kCPU));
  CHECK_FALSE(s.bf16);  // precision fp32
  CHECK(s.static_shapes);
  CHECK(s.max_instances == 17);
  CHECK_FALSE(s.cuda_graph);
  CHECK(s.max_grad_norm == 3.5);
  CHECK(s.multi_scale == 0.0);
  CHECK(s.imgsz == 128);
  CHECK(s.seed == 42u);
  CHECK(s.world_size == 1);
  // The step holds these values, not the config: a later config edit does not reach it.
  engine::TrainStep step(ctx);
  ctx.config.optim.max_grad_norm = 99.0;
  CHECK(step.settings().max_grad_norm == 3.5);

  // multi_scale (which static_shapes refuses) in a run of its own.
  config.run.static_shapes = false;
  config.augment.multi_scale = 0.25;
  const engine::TrainingContext scaled = engine::build_training_context(config, options);
  CHECK(engine::step_settings(scaled).multi_scale == 0.25);
  CHECK_FALSE(engine::step_settings(scaled).static_shapes);
}

TEST_CASE("train step: apply_schedule sets each group's lr and momentum and the accumulation") {
  TempDir dir;
  engine::TrainingContext ctx = tiny_context(dir.path(), 16);
  engine::TrainStep step(ctx);
  const optim::ScheduleSettings& s = ctx.optimization.schedule;
  REQUIRE(optim::warmup_iterations(s) == 4);  // warmup_epochs 1 x 4 batches
  for (const int64_t ni : {int64_t{0}, int64_t{2}, int64_t{4}, int64_t{9}}) {
    step.apply_schedule(ni);
    CHECK(step.accumulate() == optim::accumulate_at(s, ni));
    for (const auto& group : ctx.optimization.optimizer->groups()) {
      CHECK(group.lr == optim::group_lr(s, group.kind, group.initial_lr, ni));
      CHECK(group.momentum == optim::momentum_at(s, ni, ctx.optimization.choice.momentum));
    }
  }
  // Hand values: nominal accumulate round(16 / 4) = 4 ramps from 1 during warmup.
  step.apply_schedule(0);
  CHECK(step.accumulate() == 1);
  step.apply_schedule(9);
  CHECK(step.accumulate() == 4);
  const auto& first = ctx.optimization.optimizer->groups().front();
  step.apply_schedule(0);  // warmup starts at warmup_momentum (0.8)
  CHECK(first.momentum == doctest::Approx(0.8));
}

TEST_CASE("train step: an optimizer step every `accumulate` batches, EMA after each") {
  TempDir dir;
  engine::TrainingContext ctx = tiny_context(dir.path(), 8);  // accumulate 2 after warmup
  engine::TrainStep step(ctx);
  ctx.inputs.train_loader->start_epoch(0, /*mosaic=*/false);
  const int64_t nw = optim::warmup_iterations(ctx.optimization.schedule);
  // Past warmup (ni > nw), accumulate is the nominal 2: batches nw+1, nw+2, ... step on every
  // second one, counted from the last optimizer step.
  step.set_last_opt_step(nw);
  const int64_t updates_before = ctx.optimization.ema->updates();
  CHECK_FALSE(step.last_grad_norm().defined());
  int64_t ni = nw + 1;
  auto batch = ctx.inputs.train_loader->next();
  REQUIRE(batch.has_value());
  step.apply_schedule(ni);
  REQUIRE(step.accumulate() == 2);
  CHECK_FALSE(step.run(*batch, ni));  // accumulated, not stepped
  CHECK(step.last_opt_step() == nw);
  CHECK(ctx.optimization.ema->updates() == updates_before);
  const double norm = total_grad_norm(ctx.net.trainable);
  CHECK(norm > 0.0);  // the gradients wait for the next batch
  ++ni;
  batch = ctx.inputs.train_loader->next();
  REQUIRE(batch.has_value());
  step.apply_schedule(ni);
  NormAfterBackward clock(ctx.net.trainable);
  CHECK(step.run(*batch, ni, &clock));
  CHECK(step.last_opt_step() == ni);
  CHECK(ctx.optimization.ema->updates() == updates_before + 1);
  CHECK(total_grad_norm(ctx.net.trainable) == 0.0);  // zeroed after the step
  REQUIRE(step.last_grad_norm().defined());
  CHECK(std::isfinite(step.last_grad_norm().item<double>()));
  // The norm of the two batches' summed gradients, before clipping (max_grad_norm 10).
  CHECK(step.last_grad_norm().item<double>() == doctest::Approx(clock.norm).epsilon(1e-5));
  CHECK(clock.norm != doctest::Approx(norm));
  CHECK(step.batches() == 2);
  const at::Tensor mean = step.mean_loss_items();
  CHECK(mean.size(0) == static_cast<int64_t>(ctx.net.columns.loss_names.size()));
  CHECK(torch::isfinite(mean).all().item<bool>());
  CHECK_FALSE(step.saw_non_finite());
}

TEST_CASE("train step: a non-finite loss is flagged until reset_epoch") {
  TempDir dir;
  engine::TrainingContext ctx = tiny_context(dir.path(), 4);
  engine::TrainStep step(ctx);
  ctx.inputs.train_loader->start_epoch(0, false);
  auto batch = ctx.inputs.train_loader->next();
  REQUIRE(batch.has_value());
  step.apply_schedule(0);
  step.poison_next_loss();
  step.run(*batch, 0);
  CHECK(step.saw_non_finite());
  step.reset_epoch();
  CHECK_FALSE(step.saw_non_finite());
  CHECK(step.batches() == 0);
}
