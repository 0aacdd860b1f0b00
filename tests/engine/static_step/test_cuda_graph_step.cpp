// `cuda_graph: true`: its refusals, and the graph-ready step (static input buffers, the
// capturable optimizer, the EMA weight slot, gradients zeroed in place, running sums kept in
// place) against the plain static step. On the CPU nothing is captured: CudaGraphStep runs the
// same bodies eagerly, so these tests check everything a capture would record; the capture and
// replay themselves run in tests/cuda on a GPU.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/static_step/cuda_graph_config.h"
#include "engine/static_step/cuda_graph_step.h"
#include "engine/train_step.h"
#include "engine/training_context.h"
#include "integration/fit_fixture.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::test;

namespace {

core::TrainConfig graph_config(const std::filesystem::path& project, const std::string& optimizer,
                               int64_t nbs) {
  core::TrainConfig config = test::tiny_fit_config(project, "graph", 2);
  config.run.static_shapes = true;
  config.data.max_instances = 12;
  config.optim.optimizer = optimizer;
  config.optim.nbs = nbs;
  return config;
}

engine::TrainingContext context_of(const core::TrainConfig& config) {
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  return engine::build_training_context(config, options);
}

// ||a - b|| / ||a - origin|| over all tensors together: how far two runs from `origin` ended
// apart, relative to how far they went. Global on purpose: BatchNorm biases and attention
// matrices whose gradients are at rounding level (1e-12) get unit-size AdamW and Muon updates
// whose signs follow that rounding, so a per-tensor ratio measures noise.
double relative_gap(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b,
                    const std::vector<at::Tensor>& origin = {}) {
  REQUIRE(a.size() == b.size());
  double diff = 0, moved = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]).to(at::kDouble).pow(2).sum().item<double>();
    const at::Tensor from = origin.empty() ? at::zeros_like(a[i]) : origin[i];
    moved += (a[i] - from).to(at::kDouble).pow(2).sum().item<double>();
  }
  return moved > 0 ? std::sqrt(diff / moved) : std::sqrt(diff);
}

// The first `n` training batches, across epochs when one has fewer.
std::vector<data::Batch> take_batches(engine::TrainingContext& ctx, size_t n) {
  std::vector<data::Batch> out;
  for (int epoch = 0; out.size() < n; ++epoch) {
    REQUIRE(epoch < 10);
    ctx.inputs.train_loader->start_epoch(epoch, /*mosaic=*/true);
    while (auto batch = ctx.inputs.train_loader->next()) {
      out.push_back(*batch);
      if (out.size() == n) break;
    }
  }
  return out;
}

std::vector<at::Tensor> params_of(engine::TrainingContext& ctx) {
  std::vector<at::Tensor> out;
  for (const auto& p : ctx.net.trainable) out.push_back(p.detach().clone());
  return out;
}

std::vector<at::Tensor> ema_of(engine::TrainingContext& ctx) {
  std::vector<at::Tensor> out;
  for (const auto& [name, t] : ctx.optimization.ema->shadow()) {
    if (t.is_floating_point()) out.push_back(t.clone());
  }
  return out;
}

}  // namespace

TEST_CASE("cuda_graph: the configurations a captured step cannot run are refused") {
  TempDir dir;
  core::TrainConfig config = graph_config(dir.path(), "MuSGD", 4);
  config.run.cuda_graph = true;
  const c10::Device cuda(c10::DeviceType::CUDA, 0);
  CHECK_NOTHROW(engine::check_cuda_graph_config(config, cuda, 1));
  config.run.static_shapes = false;
  CHECK_THROWS_WITH_AS(engine::check_cuda_graph_config(config, cuda, 1),
                       doctest::Contains("set static_shapes: true"), core::ConfigError);
  config.run.static_shapes = true;
  CHECK_THROWS_WITH_AS(engine::check_cuda_graph_config(config, cuda, 2),
                       doctest::Contains("one rank"), core::ConfigError);
  CHECK_THROWS_WITH_AS(engine::check_cuda_graph_config(config, c10::Device(c10::kCPU), 1),
                       doctest::Contains("needs a CUDA device (device: cpu)"), core::ConfigError);
  config.optim.impl = core::OptimizerImpl::kScalar;
  CHECK_THROWS_WITH_AS(engine::check_cuda_graph_config(config, cuda, 1),
                       doctest::Contains("optimizer_impl: scalar"), core::ConfigError);
  config.optim.impl = core::OptimizerImpl::kPadded;
  config.run.cuda_graph = false;
  config.run.static_shapes = false;
  CHECK_NOTHROW(engine::check_cuda_graph_config(config, c10::Device(c10::kCPU), 4));
  // Wired into the run's checks: a fit on the CPU with cuda_graph stops before building anything.
  config.run.cuda_graph = true;
  config.run.static_shapes = true;
  CHECK_THROWS_WITH_AS(context_of(config), doctest::Contains("cuda_graph: true needs a CUDA"),
                       core::ConfigError);
}

TEST_CASE("cuda_graph: the graph-ready step follows the static step") {
  // The same 4 batches through the plain static step, the graph-ready one (forced on the CPU
  // after the context's checks) and, as the noise floor, the plain step from weights jittered by
  // 1e-7 relative (fp32 rounding): SGD and MuSGD with an optimizer step every batch, AdamW with
  // accumulation over 2 batches, all in warmup, where lr and momentum change every batch. The
  // capturable optimizer multiplies by slot tensors where the eager one passes Scalars, equal to
  // rounding (tests/optim/test_capturable.cpp), but this model from scratch amplifies rounding:
  // tensors whose gradients are at rounding level (BatchNorm biases near 0, 1e-12) take updates
  // whose direction follows the rounding (Muon and AdamW normalise them to unit size), so a
  // tolerance is meaningless here; the bound is the jittered run's own distance. Measured: the
  // graph-ready run ends 10x (SGD, MuSGD) and 3x (AdamW) closer to the plain one than the floor;
  // a wrong slot (an lr 1.5x too large) ends farther than the floor.
  struct Case {
    const char* optimizer;
    int64_t nbs;
  };
  for (const Case c : {Case{"SGD", 4}, Case{"MuSGD", 4}, Case{"AdamW", 8}}) {
    CAPTURE(c.optimizer);
    TempDir dir;
    engine::TrainingContext plain = context_of(graph_config(dir.path() / "a", c.optimizer, c.nbs));
    engine::TrainingContext graph = context_of(graph_config(dir.path() / "b", c.optimizer, c.nbs));
    engine::TrainingContext jitter = context_of(graph_config(dir.path() / "c", c.optimizer, c.nbs));
    graph.config.run.cuda_graph = true;
    const auto start = params_of(plain);
    const auto start_ema = ema_of(plain);
    REQUIRE(relative_gap(start, params_of(graph)) == 0.0);
    {
      torch::NoGradGuard no_grad;
      torch::manual_seed(77);
      for (auto& p : jitter.net.trainable) p.mul_(1.0 + 1e-7 * torch::randn(p.sizes()));
    }
    engine::TrainStep plain_step(plain);
    engine::TrainStep graph_step(graph);
    engine::TrainStep jitter_step(jitter);
    REQUIRE(graph_step.graph() != nullptr);
    CHECK(plain_step.graph() == nullptr);
    CHECK(graph.optimization.optimizer->capturable());
    const auto batches = take_batches(plain, 4);
    for (int64_t ni = 0; ni < static_cast<int64_t>(batches.size()); ++ni) {
      for (engine::TrainStep* step : {&plain_step, &graph_step, &jitter_step}) {
        step->apply_schedule(ni);
        step->run(batches[static_cast<size_t>(ni)], ni);
      }
    }
    CHECK(graph_step.last_opt_step() == plain_step.last_opt_step());
    CHECK(graph.optimization.ema->updates() == plain.optimization.ema->updates());
    CHECK(graph.optimization.ema->updates() >= 2);
    CHECK(relative_gap(params_of(plain), start) > 1e-3);  // the runs went somewhere
    const double gap = relative_gap(params_of(plain), params_of(graph), start);
    const double floor = relative_gap(params_of(plain), params_of(jitter), start);
    const double ema_gap = relative_gap(ema_of(plain), ema_of(graph), start_ema);
    const double ema_floor = relative_gap(ema_of(plain), ema_of(jitter), start_ema);
    const double loss_gap =
        relative_gap({plain_step.mean_loss_items()}, {graph_step.mean_loss_items()});
    MESSAGE(c.optimizer << ": update gap " << gap << " (floor " << floor << "), EMA " << ema_gap
                        << " (floor " << ema_floor << "), loss items " << loss_gap);
    CHECK(gap < floor);
    CHECK(ema_gap < ema_floor);
    CHECK(loss_gap < 1e-3);
    CHECK_FALSE(graph_step.saw_non_finite());
    // Nothing captured on the CPU: every batch ran eagerly through the static buffers.
    CHECK(graph_step.graph()->captures() == 0);
    CHECK(graph_step.graph()->eager_batches() == 4);
    CHECK_FALSE(graph_step.graph()->replaying());
    // Gradients stay allocated (zeroed in place) for a graph's fixed addresses.
    for (const auto& p : graph.net.trainable) CHECK(p.grad().defined());
    // The checkpoint's optimizer state has the same entries either way.
    CHECK(graph.optimization.optimizer->state_dict().size() ==
          plain.optimization.optimizer->state_dict().size());
  }
}

TEST_CASE("cuda_graph: running sums stay where they are and a poisoned batch is flagged") {
  TempDir dir;
  engine::TrainingContext graph = context_of(graph_config(dir.path(), "MuSGD", 4));
  graph.config.run.cuda_graph = true;
  engine::TrainStep step(graph);
  const at::Tensor sums_before = step.mean_loss_items();  // batches 0: the running sum itself
  const void* address = sums_before.data_ptr();
  graph.inputs.train_loader->start_epoch(0, true);
  auto batch = graph.inputs.train_loader->next();
  REQUIRE(batch.has_value());
  step.apply_schedule(0);
  step.run(*batch, 0);
  step.reset_epoch();
  CHECK(step.mean_loss_items().data_ptr() == address);  // zeroed in place
  CHECK(step.mean_loss_items().abs().sum().item<double>() == 0.0);
  step.poison_next_loss();
  step.apply_schedule(1);
  step.run(*batch, 1);
  CHECK(step.saw_non_finite());
  step.state_replaced("test");
  CHECK(step.graph()->eager_batches() == 0);
}

TEST_CASE("cuda_graph: the breakdown clock sees the replays as h2d, backward and optimizer") {
  struct Recorder : engine::StageClock {
    std::vector<std::string> marks;
    void mark(const char* stage) override { marks.emplace_back(stage); }
  };
  TempDir dir;
  engine::TrainingContext graph = context_of(graph_config(dir.path(), "MuSGD", 4));
  graph.config.run.cuda_graph = true;
  engine::TrainStep step(graph);
  graph.inputs.train_loader->start_epoch(0, true);
  auto batch = graph.inputs.train_loader->next();
  REQUIRE(batch.has_value());
  Recorder clock;
  step.apply_schedule(0);
  REQUIRE(step.accumulate() == 1);  // nbs 4 = the batch: a step after every batch
  step.run(*batch, 0, &clock);
  CHECK(clock.marks == std::vector<std::string>{"h2d", "backward", "optimizer"});
}
