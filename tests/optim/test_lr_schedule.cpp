// Warmup, LR decay, momentum, accumulation, weight-decay scaling and optimizer=auto, by hand.
#include <doctest/doctest.h>

#include "optim/lr_schedule.h"
#include "optim/optimizer_choice.h"

using namespace trainer::optim;

namespace {
ScheduleSettings ten_by_ten() {
  ScheduleSettings s;
  s.epochs = 10;
  s.batches_per_epoch = 10;  // nw = 30
  return s;
}
}  // namespace

TEST_CASE("warmup iterations: round(min(warmup_epochs, epochs - 1) * nb)") {
  auto s = ten_by_ten();
  CHECK(warmup_iterations(s) == 30);
  s.epochs = 2;
  CHECK(warmup_iterations(s) == 10);
  s.warmup_epochs = 0;
  CHECK(warmup_iterations(s) == 0);
  s = ten_by_ten();
  s.warmup_epochs = 0.25;  // 2.5 -> 2 (half to even, as Python's round)
  CHECK(warmup_iterations(s) == 2);
}

TEST_CASE("LR factor: linear and cosine at chosen epochs") {
  auto s = ten_by_ten();
  CHECK(lr_factor(s, 0) == doctest::Approx(1.0));
  CHECK(lr_factor(s, 1) == doctest::Approx(0.901));
  CHECK(lr_factor(s, 3) == doctest::Approx(0.703));
  CHECK(lr_factor(s, 10) == doctest::Approx(0.01));
  s.cos_lr = true;
  CHECK(lr_factor(s, 5) == doctest::Approx(0.505));
  CHECK(lr_factor(s, 10) == doctest::Approx(0.01));
}

TEST_CASE("group lr during and after warmup, bias group from warmup_bias_lr") {
  const auto s = ten_by_ten();
  CHECK(group_lr(s, GroupKind::kBias, 0.01, 0) == doctest::Approx(0.1));
  CHECK(group_lr(s, GroupKind::kWeight, 0.01, 0) == doctest::Approx(0.0));
  CHECK(group_lr(s, GroupKind::kBias, 0.01, 15) == doctest::Approx(0.054505));
  CHECK(group_lr(s, GroupKind::kMuon, 0.01, 15) == doctest::Approx(0.004505));
  CHECK(group_lr(s, GroupKind::kMuon, 0.01, 35) == doctest::Approx(0.00703));
  auto frac = ten_by_ten();
  frac.warmup_epochs = 1.5;  // nw = 15 ends inside epoch 1: ni == 15 lands on epoch 1's target
  CHECK(group_lr(frac, GroupKind::kWeight, 0.01, 14) == doctest::Approx(14.0 / 15.0 * 0.00901));
  CHECK(group_lr(frac, GroupKind::kWeight, 0.01, 15) == doctest::Approx(0.00901));
  CHECK(group_lr(frac, GroupKind::kBias, 0.01, 15) == doctest::Approx(0.00901));
  CHECK(group_lr(frac, GroupKind::kWeight, 0.01, 17) == doctest::Approx(0.00901));
  CHECK(group_lr(frac, GroupKind::kWeight, 0.01, 25) == doctest::Approx(0.00802));
}

TEST_CASE("momentum warms up 0.8 -> 0.937 (ni <= nw, 8.4.190) and then stays at 0.937") {
  const auto s = ten_by_ten();
  CHECK(*warmup_momentum_at(s, 0) == doctest::Approx(0.8));
  CHECK(*warmup_momentum_at(s, 15) == doctest::Approx(0.8685));
  CHECK(*warmup_momentum_at(s, 30) == doctest::Approx(0.937));  // ni == nw is warmup's last step
  CHECK_FALSE(warmup_momentum_at(s, 31).has_value());
  CHECK(momentum_at(s, 29, 0.9) == doctest::Approx(0.8 + 29.0 / 30.0 * 0.137));
  CHECK(momentum_at(s, 30, 0.9) == doctest::Approx(0.937));
  CHECK(momentum_at(s, 500, 0.9) == doctest::Approx(0.937));
  auto three = s;  // the example: 3 warmup steps left 0.8913 behind before the fix
  three.batches_per_epoch = 1;
  three.warmup_epochs = 3;
  CHECK(momentum_at(three, 2, 0.9) == doctest::Approx(0.8 + 2.0 / 3.0 * 0.137));
  CHECK(momentum_at(three, 3, 0.9) == doctest::Approx(0.937));
  CHECK(momentum_at(three, 7, 0.9) == doctest::Approx(0.937));
  auto none = s;
  none.warmup_epochs = 0;
  CHECK(momentum_at(none, 5, 0.9) == 0.9);  // no warmup: the optimizer's own momentum
}

TEST_CASE("accumulation ramps 1 -> nbs/batch during warmup") {
  const auto s = ten_by_ten();  // nbs 64, batch 16 -> 4
  CHECK(accumulate_at(s, 0) == 1);
  CHECK(accumulate_at(s, 15) == 2);  // interp 2.5, rounded half to even
  CHECK(accumulate_at(s, 20) == 3);
  CHECK(accumulate_at(s, 25) == 4);  // interp 3.5, rounded half to even
  CHECK(accumulate_at(s, 30) == 4);
  CHECK(accumulate_at(s, 40) == 4);
}

TEST_CASE("accumulation is capped at the run's batch count (nb * epochs)") {
  ScheduleSettings s;
  s.epochs = 1;
  s.batches_per_epoch = 2;  // nbs 64 / batch 16 = 4, but the run has only 2 batches
  s.warmup_epochs = 0;
  CHECK(nominal_accumulate(s) == 2);
  CHECK(accumulate_at(s, 0) == 2);
  s.epochs = 3;
  CHECK(nominal_accumulate(s) == 4);
}

TEST_CASE("weight decay scaling examples from the reference") {
  CHECK(scaled_weight_decay(5e-4, 16, 64) == doctest::Approx(5e-4));
  CHECK(scaled_weight_decay(5e-4, 48, 64) == doctest::Approx(3.75e-4));
  CHECK(scaled_weight_decay(5e-4, 128, 64) == doctest::Approx(1e-3));
}

TEST_CASE("optimizer=auto: MuSGD for long COCO runs, AdamW otherwise") {
  const auto coco6 = choose_auto_optimizer(118287, 16, 64, 6, 80);
  CHECK(coco6.iterations == 11094);
  CHECK(coco6.kind == OptimizerKind::kMuSGD);
  CHECK(coco6.lr == 0.01);
  const auto coco5 = choose_auto_optimizer(118287, 16, 64, 5, 80);
  CHECK(coco5.kind == OptimizerKind::kAdamW);
  CHECK(coco5.lr == doctest::Approx(0.000119));
  CHECK(coco5.momentum == 0.9);
  CHECK(coco5.warmup_bias_lr == 0.0);
}
