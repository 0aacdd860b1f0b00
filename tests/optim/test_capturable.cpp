// The optimizers' capturable mode (what a CUDA graph replays) against their eager steps: the same
// trajectory under a schedule that changes lr and momentum every step, the refusals, and the host
// counts a replay cannot advance (AdamW's step numbers) kept by prepare_step().
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "optim/adamw.h"
#include "optim/musgd.h"
#include "optim/sgd.h"

using namespace trainer::optim;

namespace {

// A Muon group (two matrices, a 4-d kernel and a vector), a plain weight group and a bias group
// with its own lr, as the trainer's param groups look.
std::vector<ParamGroup> mixed_groups() {
  torch::manual_seed(21);
  ParamGroup muon;
  muon.name = "muon";
  muon.kind = GroupKind::kMuon;
  muon.use_muon = true;
  muon.weight_decay = 5e-4;
  muon.params = {torch::randn({6, 4}), torch::randn({4, 3, 3, 3}), torch::randn({5})};
  ParamGroup weight;
  weight.name = "weight";
  weight.weight_decay = 5e-4;
  weight.params = {torch::randn({3, 2, 1, 1}), torch::randn({8})};
  ParamGroup bias;
  bias.name = "bias";
  bias.kind = GroupKind::kBias;
  bias.nesterov = false;
  bias.params = {torch::randn({6})};
  return {muon, weight, bias};
}

// Warmup-like: every group's lr and the momentum change every step (the bias group's lr falls
// while the others rise, as in the reference's warmup).
void schedule(Optimizer& opt, int step) {
  for (size_t g = 0; g < opt.groups().size(); ++g) {
    ParamGroup& group = opt.groups()[g];
    group.lr = g == 2 ? 0.1 - 0.002 * step : 0.01 * (1.0 + step) / 30.0;
    group.momentum = 0.8 + 0.137 * step / 30.0;
  }
}

void random_grads(Optimizer& opt, int step) {
  torch::manual_seed(500 + step);
  for (auto& group : opt.groups())
    for (auto& p : group.params) p.mutable_grad() = torch::randn(p.sizes());
}

// Runs `steps` scheduled steps; capturable mode when `capturable`.
void run_capturable_steps(Optimizer& opt, int steps, bool capturable) {
  if (capturable) opt.make_capturable(torch::kCPU);
  for (int s = 0; s < steps; ++s) {
    schedule(opt, s);
    random_grads(opt, s);
    if (capturable) opt.prepare_step();
    opt.step();
    if (capturable) opt.count_step();
  }
}

// max |a - b| / max |a| over every parameter.
double relative_gap(Optimizer& a, Optimizer& b) {
  double gap = 0;
  for (size_t g = 0; g < a.groups().size(); ++g) {
    for (size_t i = 0; i < a.groups()[g].params.size(); ++i) {
      const auto& x = a.groups()[g].params[i];
      const auto& y = b.groups()[g].params[i];
      gap = std::max(gap, ((x - y).abs().max() / x.abs().max()).item<double>());
    }
  }
  return gap;
}

// How far `opt` moved from the start (max relative): a step that did nothing would be caught.
double moved(Optimizer& opt) {
  const auto initial = mixed_groups();
  double most = 0;
  for (size_t g = 0; g < initial.size(); ++g) {
    for (size_t i = 0; i < initial[g].params.size(); ++i) {
      const auto& x = initial[g].params[i];
      most = std::max(most,
                      ((opt.groups()[g].params[i] - x).abs().max() / x.abs().max()).item<double>());
    }
  }
  return most;
}

}  // namespace

TEST_CASE("capturable SGD follows the eager foreach step over 30 scheduled steps") {
  // Slot lr and momentum multiply before adding (no tensor alpha in ATen): equal to rounding.
  // 1e-5 relative after 30 steps; one step moves the weights by ~1e-3 relative or more.
  Sgd eager(mixed_groups(), /*foreach=*/true);
  Sgd slots(mixed_groups(), /*foreach=*/true);
  run_capturable_steps(eager, 30, false);
  run_capturable_steps(slots, 30, true);
  CHECK(slots.capturable());
  CHECK(relative_gap(eager, slots) < 1e-5);
  CHECK(moved(eager) > 1e-2);
  CHECK(eager.state_dict().size() == slots.state_dict().size());
}

TEST_CASE("capturable MuSGD follows the eager step over 30 scheduled steps") {
  // Both SGD gains: 1 (the trainer's) and 0.5, where the eager step splits a Muon group's
  // matrices from its vectors; the padded and the exact-shape batched schedules. Newton-Schulz
  // runs on momenta that differ by rounding (measured 8e-8 relative after 30 steps): 1e-6
  // bounds it; a wrong slot (lr, gain, momentum) is off by > 1e-2.
  for (const double sgd_gain : {1.0, 0.5}) {
    for (const auto schedule_kind : {MuonSchedule::kPadded, MuonSchedule::kBatched}) {
      CAPTURE(sgd_gain);
      MuSGDOptions options;
      options.sgd_gain = sgd_gain;
      options.schedule = schedule_kind;
      MuSGD eager(mixed_groups(), options);
      MuSGD slots(mixed_groups(), options);
      run_capturable_steps(eager, 30, false);
      run_capturable_steps(slots, 30, true);
      CHECK(relative_gap(eager, slots) < 1e-6);
      CHECK(moved(eager) > 1e-2);
    }
  }
}

TEST_CASE("capturable AdamW follows the eager step and keeps its step numbers") {
  // Bias corrections and step size from the slots, divides of their own where the eager step
  // uses addcdiv with a Scalar: 1e-5 relative after 30 steps. count_step() advances the step
  // numbers (a replay runs no host code), so the checkpoint's counts equal the eager ones.
  AdamW eager(mixed_groups(), AdamWOptions{});
  AdamW slots(mixed_groups(), AdamWOptions{});
  run_capturable_steps(eager, 30, false);
  run_capturable_steps(slots, 30, true);
  CHECK(relative_gap(eager, slots) < 1e-5);
  CHECK(moved(eager) > 1e-2);
  const auto a = eager.state_dict();
  const auto b = slots.state_dict();
  REQUIRE(a.size() == b.size());
  for (const auto& [key, value] : a) {
    if (key.size() > 5 && key.substr(key.size() - 5) == ".step") {
      CAPTURE(key);
      CHECK(b.at(key).item<int64_t>() == 30);
      CHECK(value.item<int64_t>() == 30);
    }
  }
}

TEST_CASE("capturable optimizers refuse what a replay would get wrong") {
  SUBCASE("step() without prepare_step() reads the previous step's slots") {
    Sgd opt(mixed_groups(), true);
    opt.make_capturable(torch::kCPU);
    random_grads(opt, 0);
    CHECK_THROWS_AS(opt.step(), std::logic_error);
    opt.prepare_step();
    CHECK_NOTHROW(opt.step());
    CHECK_THROWS_AS(opt.step(), std::logic_error);  // one prepare per step
  }
  SUBCASE("prepare_step() is idempotent: a retry prepares the same AdamW step again") {
    AdamW once(mixed_groups(), AdamWOptions{});
    AdamW twice(mixed_groups(), AdamWOptions{});
    for (AdamW* opt : {&once, &twice}) {
      opt->make_capturable(torch::kCPU);
      for (int s = 0; s < 3; ++s) {
        schedule(*opt, s);
        random_grads(*opt, s);
        opt->prepare_step();
        if (opt == &twice) opt->prepare_step();
        opt->step();
        opt->count_step();
      }
    }
    CHECK(relative_gap(once, twice) == 0.0);
    CHECK(twice.state_dict().at("g0.p0.step").item<int64_t>() == 3);
  }
  SUBCASE("MuSGD's scalar schedule passes host scalars") {
    MuSGDOptions options;
    options.schedule = MuonSchedule::kScalar;
    MuSGD opt(mixed_groups(), options);
    opt.make_capturable(torch::kCPU);
    random_grads(opt, 0);
    opt.prepare_step();
    CHECK_THROWS_AS(opt.step(), std::logic_error);
  }
  SUBCASE("AdamW parameters at different step numbers share no bias correction") {
    AdamW opt(mixed_groups(), AdamWOptions{});
    random_grads(opt, 0);
    opt.groups()[0].params[1].mutable_grad() = at::Tensor();  // one parameter skips a step
    opt.step();
    random_grads(opt, 1);
    opt.make_capturable(torch::kCPU);
    CHECK_THROWS_WITH_AS(opt.prepare_step(), doctest::Contains("different step numbers"),
                         std::runtime_error);
  }
  SUBCASE("an eager optimizer has no slots and prepare_step() does nothing") {
    Sgd opt(mixed_groups(), true);
    CHECK_FALSE(opt.capturable());
    random_grads(opt, 0);
    opt.prepare_step();
    CHECK_NOTHROW(opt.step());
    CHECK_NOTHROW(opt.step());
  }
}
