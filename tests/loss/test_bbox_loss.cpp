// DFL targets and loss, by hand.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "loss/bbox_loss.h"

using namespace trainer::loss;

TEST_CASE("DFL targets: two neighbouring bins, clamped to [0, reg_max - 1.01]") {
  const auto t = dfl_targets(torch::tensor({3.3f, 15.5f, -1.0f, 0.0f}), 16);
  // 3.3 -> bins 3 and 4 with weights 0.7 and 0.3;
  // 15.5 -> 14.99 -> bins 14 and 15 with weights 0.01 and 0.99;
  // -1 -> 0 -> bin 0 (weight 1) and bin 1 (weight 0).
  CHECK(torch::equal(t.lower, torch::tensor({3, 14, 0, 0}, torch::kLong)));
  CHECK(t.lower_weight[0].item<float>() == doctest::Approx(0.7f));
  CHECK(t.upper_weight[0].item<float>() == doctest::Approx(0.3f));
  CHECK(t.lower_weight[1].item<float>() == doctest::Approx(0.01f).epsilon(1e-4));
  CHECK(t.upper_weight[1].item<float>() == doctest::Approx(0.99f));
  CHECK(t.lower_weight[2].item<float>() == 1.0f);
  CHECK(t.upper_weight[2].item<float>() == 0.0f);
}

TEST_CASE("DFL loss of a reg_max 4 distribution, by hand") {
  // logits [0, 0, ln 2, 0]: softmax = [1/5, 1/5, 2/5, 1/5]. Target 1.25: bins 1 (w 0.75), 2 (0.25).
  // loss = 0.75 ln 5 + 0.25 ln(5/2) = 1.2070784 + 0.2290727 = 1.4361511 on each side; mean of 4.
  const auto row = torch::tensor({0.0, 0.0, std::log(2.0), 0.0}, torch::kDouble);
  const auto pred = row.repeat({4, 1});  // (N * 4, reg_max) with N = 1
  const auto target = torch::full({1, 4}, 1.25, torch::kDouble);
  const auto loss = dfl_loss(pred, target, 4);
  CHECK(loss.sizes() == torch::IntArrayRef({1, 1}));
  CHECK(loss.item<double>() == doctest::Approx(0.75 * std::log(5.0) + 0.25 * std::log(2.5)));
  CHECK(loss.item<double>() == doctest::Approx(1.4361511));
  // Uniform logits over 16 bins: CE = ln 16 on both bins, whatever the target.
  const auto uniform =
      dfl_loss(torch::zeros({8, 16}),
               torch::tensor({{3.3f, 0.0f, 7.0f, 14.2f}, {1.0f, 2.0f, 3.0f, 4.0f}}), 16);
  CHECK(uniform[0][0].item<float>() == doctest::Approx(std::log(16.0)));
  CHECK(uniform[1][0].item<float>() == doctest::Approx(std::log(16.0)));
}
