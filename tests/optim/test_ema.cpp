// EMA: the decay ramp at hand-computed points, one update by hand, foreach vs scalar over many
// steps.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "optim/ema.h"

using namespace trainer::optim;

namespace {

NamedTensors model_tensors(uint64_t seed) {
  torch::manual_seed(seed);
  return {{"conv.weight", torch::randn({4, 3, 3, 3})},
          {"bn.weight", torch::randn({4})},
          {"bn.running_mean", torch::randn({4})},
          {"bn.num_batches_tracked", torch::tensor(int64_t{0})},
          {"head.weight64", torch::randn({5}, torch::kDouble)},
          {"bn2.num_batches_tracked", torch::tensor(int64_t{5})}};  // two counters: one copy
}

}  // namespace

TEST_CASE("EMA decay d(n) = 0.9999 (1 - exp(-n/2000)) at updates 1, 2000 and 10000") {
  ModelEma ema(model_tensors(0));
  CHECK(ema.decay_at(1) == doctest::Approx(4.99825033e-4).epsilon(1e-9));
  CHECK(ema.decay_at(2000) == doctest::Approx(0.6320573468).epsilon(1e-9));
  CHECK(ema.decay_at(10000) == doctest::Approx(0.9931627268).epsilon(1e-9));
}

TEST_CASE("one EMA update by hand: ema + (1 - d)(live - ema), integers copied") {
  auto live = model_tensors(1);
  ModelEma ema(live);
  const auto start = live[0].second.clone();
  live[0].second.add_(1.0);
  live[3].second.fill_(7);
  ema.update(live);
  const double d = ema.decay_at(1);
  CHECK(torch::allclose(ema.shadow()[0].second, start + (1 - d) * 1.0, 0, 1e-6));
  CHECK(ema.shadow()[3].second.item<int64_t>() == 7);
  CHECK(ema.updates() == 1);
}

TEST_CASE("foreach EMA equals the scalar recurrence over 300 updates, buffers included") {
  auto live = model_tensors(2);
  ModelEma scalar(live, 0.9999, 2000, EmaSchedule::kScalar);
  ModelEma fast(live, 0.9999, 2000, EmaSchedule::kForeach);
  for (int s = 0; s < 300; ++s) {
    torch::manual_seed(s);
    for (auto& [name, t] : live) {
      if (t.is_floating_point())
        t.add_(torch::randn(t.sizes(), t.options()) * 0.1);
      else
        t.add_(1);
    }
    scalar.update(live);
    fast.update(live);
  }
  for (size_t k = 0; k < live.size(); ++k) {
    CAPTURE(live[k].first);
    CHECK(torch::equal(scalar.shadow()[k].second, fast.shadow()[k].second));
  }
  CHECK(fast.shadow()[3].second.item<int64_t>() == 300);
  CHECK(fast.shadow()[5].second.item<int64_t>() == 305);
  CHECK_FALSE(torch::equal(fast.shadow()[0].second, live[0].second));  // it lags, as it should
}

TEST_CASE("EMA state round-trips, copy_to leaves the shadow untouched, bad state is rejected") {
  auto live = model_tensors(3);
  ModelEma ema(live);
  for (int s = 0; s < 5; ++s) ema.update(live);
  ModelEma restored(model_tensors(4));
  restored.load_state_dict(ema.state_dict());
  CHECK(restored.updates() == 5);
  for (size_t k = 0; k < live.size(); ++k)
    CHECK(torch::equal(restored.shadow()[k].second, ema.shadow()[k].second));
  auto eval_model = model_tensors(5);
  ema.copy_to(eval_model);
  eval_model[0].second.mul_(0);  // "evaluation" scribbles on its copy
  CHECK_FALSE(torch::equal(ema.shadow()[0].second, eval_model[0].second));
  auto state = ema.state_dict();
  state.erase("ema.updates");
  CHECK_THROWS_WITH(restored.load_state_dict(state), "EMA state is missing 'ema.updates'");
}

TEST_CASE("EMA split for a graph (device weight, host count) equals update() bit for bit") {
  // 60 updates of moving live weights: lerp_towards with the weight written into a 0-d fp64
  // tensor, then count_update, against update(); fp32 and fp64 entries and the integer counters.
  auto live = model_tensors(3);
  ModelEma eager(live, 0.9999, 20.0);
  ModelEma split(live, 0.9999, 20.0);
  auto weight = torch::zeros({}, torch::kDouble);
  for (int step = 0; step < 60; ++step) {
    for (auto& [name, t] : live) {
      if (t.is_floating_point())
        t.add_(torch::randn_like(t) * 0.1);
      else
        t.add_(1);
    }
    eager.update(live);
    weight.fill_(1.0 - split.decay_at(split.updates() + 1));
    split.lerp_towards(live, weight);
    split.count_update();
  }
  CHECK(split.updates() == eager.updates());
  for (size_t k = 0; k < live.size(); ++k) {
    CAPTURE(live[k].first);
    CHECK(torch::equal(split.shadow()[k].second, eager.shadow()[k].second));
  }
  CHECK_THROWS_AS(split.lerp_towards(live, torch::zeros({}, torch::kFloat)), std::invalid_argument);
}
