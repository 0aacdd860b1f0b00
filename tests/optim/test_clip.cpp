#include <doctest/doctest.h>
#include <torch/torch.h>

#include "optim/clip.h"

using trainer::optim::clip_grad_norm;

TEST_CASE("clipping to a global L2 norm: hand-computed 3-4-12 case") {
  auto g1 = torch::tensor({3.0f, 4.0f});
  auto g2 = torch::tensor({12.0f});
  const auto total = clip_grad_norm({g1, g2, torch::Tensor()}, 6.5);
  CHECK(total.item<float>() == doctest::Approx(13.0f));
  const float coef = static_cast<float>(6.5 / (13.0 + 1e-6));
  CHECK(g1[0].item<float>() == doctest::Approx(3 * coef));
  CHECK(g2[0].item<float>() == doctest::Approx(12 * coef));
}

TEST_CASE("no clipping below the limit, mixed dtypes, and no gradients at all") {
  auto g1 = torch::tensor({0.3, 0.4}, torch::kDouble);
  auto g2 = torch::tensor({1.0f}, torch::kBFloat16);
  const auto total = clip_grad_norm({g1, g2}, 10.0);
  CHECK((total.scalar_type() == torch::kFloat));
  CHECK(total.item<float>() == doctest::Approx(std::sqrt(1.25f)));
  CHECK(g1[1].item<double>() == doctest::Approx(0.4));
  CHECK(clip_grad_norm({}, 10.0).item<float>() == 0.0f);
}
