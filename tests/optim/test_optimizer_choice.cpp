// The optimizer choice: names, the auto rule's hyperparameters, and make_optimizer's kinds.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <stdexcept>

#include "optim/adamw.h"
#include "optim/musgd.h"
#include "optim/optimizer_choice.h"
#include "optim/sgd.h"

using namespace trainer::optim;

TEST_CASE("optimizer kinds are spelled as the reference spells them, and read back") {
  for (auto kind :
       {OptimizerKind::kAuto, OptimizerKind::kMuSGD, OptimizerKind::kSGD, OptimizerKind::kAdamW}) {
    CHECK(optimizer_kind_from_name(optimizer_kind_name(kind)) == kind);
  }
  CHECK(std::string(optimizer_kind_name(OptimizerKind::kMuSGD)) == "MuSGD");
  CHECK_FALSE(optimizer_kind_from_name("Adam").has_value());
}

TEST_CASE("choose_optimizer: an explicit kind keeps the config's values, auto replaces them") {
  OptimizerRequest r;
  r.kind = OptimizerKind::kSGD;
  r.lr0 = 0.02;
  r.momentum = 0.95;
  r.warmup_bias_lr = 0.1;
  r.weight_decay = 5e-4;
  r.batch = 48;
  r.nbs = 64;
  const auto sgd = choose_optimizer(r);
  CHECK(sgd.kind == OptimizerKind::kSGD);
  CHECK(sgd.lr == 0.02);
  CHECK(sgd.momentum == 0.95);
  CHECK(sgd.weight_decay == doctest::Approx(3.75e-4));  // 5e-4 * 48 * 1 / 64
  CHECK_FALSE(sgd.auto_chosen);

  r.kind = OptimizerKind::kAuto;
  r.train_images = 128;  // 2 iterations per epoch x 100 epochs: AdamW
  r.num_classes = 80;
  const auto a = choose_optimizer(r);
  CHECK(a.kind == OptimizerKind::kAdamW);
  CHECK(a.lr == doctest::Approx(0.000119));  // round(0.002 * 5 / 84, 6)
  CHECK(a.momentum == 0.9);
  CHECK(a.warmup_bias_lr == 0.0);
  CHECK(a.auto_chosen);
}

TEST_CASE("make_optimizer builds the kind it is given and refuses an unresolved auto") {
  auto w = torch::zeros({4, 4}, torch::requires_grad());
  auto group = [&] {
    ParamGroup g;
    g.params = {w};
    return std::vector<ParamGroup>{g};
  };
  OptimizerOptions o;
  CHECK(dynamic_cast<MuSGD*>(make_optimizer(OptimizerKind::kMuSGD, group(), o).get()));
  CHECK(dynamic_cast<Sgd*>(make_optimizer(OptimizerKind::kSGD, group(), o).get()));
  CHECK(dynamic_cast<AdamW*>(make_optimizer(OptimizerKind::kAdamW, group(), o).get()));
  CHECK_THROWS_AS(make_optimizer(OptimizerKind::kAuto, group(), o), std::invalid_argument);
  CHECK(uses_muon_groups(OptimizerKind::kMuSGD));
  CHECK_FALSE(uses_muon_groups(OptimizerKind::kAdamW));
  CHECK_FALSE(schedules_momentum(OptimizerKind::kAdamW));
  CHECK(schedules_momentum(OptimizerKind::kSGD));
}
