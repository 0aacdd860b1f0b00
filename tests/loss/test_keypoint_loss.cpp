// The pose loss terms on cases worked out by hand: the keypoint location loss, keypoint
// objectness, the RLE loss with a closed-form flow, the sigma rules and the keypoint packing.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "loss/keypoint_flow.h"
#include "loss/keypoint_loss.h"
#include "loss/keypoint_sigmas.h"
#include "loss/keypoint_targets.h"
#include "loss/rle_loss.h"
#include "model/real_nvp.h"

using namespace trainer;
using namespace trainer::loss;

namespace {

const double kLn2Pi = std::log(2.0 * M_PI);

// The standard 2-D normal: what a RealNVP with zeroed coupling nets reduces to.
KeypointFlow normal_flow(std::vector<at::Tensor> params = {}) {
  return {[](const at::Tensor& z) { return -0.5 * z.pow(2).sum(-1) - kLn2Pi; }, std::move(params)};
}

}  // namespace

TEST_CASE("keypoint location loss: one positive, two keypoints, by hand") {
  // sigmas (0.5, 0.25), area 4. Keypoint 0: d^2 = 1, e = 1 / (1 x 4 x 2) = 0.125.
  // Keypoint 1: d^2 = 4, e = 4 / (0.25 x 4 x 2) = 2.
  const auto pred = torch::tensor({1.0f, 1.0f, 3.0f, 2.0f}).view({1, 2, 2});
  auto gt = torch::tensor({0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 1.0f}).view({1, 2, 3});
  const auto area = torch::tensor({4.0f}).view({1, 1});
  const auto sigmas = torch::tensor({0.5f, 0.25f});
  const double l0 = 1 - std::exp(-0.125), l1 = 1 - std::exp(-2.0);
  SUBCASE("both visible: factor 2 / 2, mean over 2") {
    const auto mask = gt.select(-1, 2).ne(0);
    CHECK(keypoint_location_loss(pred, gt, mask, area, sigmas).item<double>() ==
          doctest::Approx((l0 + l1) / 2).epsilon(1e-6));
  }
  SUBCASE("keypoint 1 not labelled: factor 2 / 1, only keypoint 0 counts") {
    gt.index_put_({0, 1, 2}, 0.0f);
    const auto mask = gt.select(-1, 2).ne(0);
    CHECK(keypoint_location_loss(pred, gt, mask, area, sigmas).item<double>() ==
          doctest::Approx(2 * l0 / 2).epsilon(1e-6));
  }
}

TEST_CASE("keypoint objectness: mean BCE of the visibility logits against labelled") {
  const auto logits = torch::tensor({0.0f, 2.0f}).view({1, 2});
  const auto mask = torch::tensor({true, false}).view({1, 2});
  const double expected = (std::log(2.0) + std::log(1 + std::exp(2.0))) / 2;
  CHECK(keypoint_objectness_loss(logits, mask).item<double>() ==
        doctest::Approx(expected).epsilon(1e-6));
}

TEST_CASE("RLE formula and loss with a standard-normal flow") {
  // One visible keypoint: sigma = sigmoid(0) = 0.5 per axis, residual (0.5, 0.5) -> e = (1, 1);
  // log phi = -0.5 (1 + 1) - ln 2 pi. Per axis: ln 0.5 - log phi + ln 1 + 1.
  const double log_phi = -1.0 - kLn2Pi;
  const double per_kpt = 2 * (std::log(0.5) - log_phi + 0.0 + 1.0);
  const auto pred = torch::tensor({1.0f, 2.0f, 7.0f, 7.0f}).view({1, 2, 2});
  const auto sigma_raw = torch::zeros({1, 2, 2});
  const auto gt = torch::tensor({0.5f, 1.5f, 2.0f, 0.0f, 0.0f, 0.0f}).view({1, 2, 3});
  const auto mask = gt.select(-1, 2).ne(0);
  const double tiny = std::numeric_limits<float>::min();
  SUBCASE("weight 1 and 1.5") {
    CHECK(
        rle_loss(pred, sigma_raw, gt, mask, torch::ones({2}), normal_flow(), tiny).item<double>() ==
        doctest::Approx(per_kpt).epsilon(1e-6));
    CHECK(rle_loss(pred, sigma_raw, gt, mask, torch::tensor({1.5f, 1.0f}), normal_flow(), tiny)
              .item<double>() == doctest::Approx(1.5 * per_kpt).epsilon(1e-6));
  }
  SUBCASE("the mean runs over the visible keypoints; a non-finite residual is dropped") {
    auto both = gt.clone();
    both.index_put_({0, 1}, torch::tensor({6.5f, 6.5f, 1.0f}));  // same residual (0.5, 0.5)
    const auto mask2 = both.select(-1, 2).ne(0);
    CHECK(rle_loss(pred, sigma_raw, both, mask2, torch::ones({2}), normal_flow(), tiny)
              .item<double>() == doctest::Approx(per_kpt).epsilon(1e-6));
    auto bad = pred.clone();
    bad.index_put_({0, 1, 0}, std::numeric_limits<float>::infinity());
    CHECK(rle_loss(bad, sigma_raw, both, mask2, torch::ones({2}), normal_flow(), tiny)
              .item<double>() == doctest::Approx(per_kpt).epsilon(1e-6));
  }
  SUBCASE("residuals are clamped to [-100, 100]") {
    // sigma = sigmoid(-10) = 4.54e-5: e = 0.5 / sigma ~ 11013 -> 100 on both axes.
    const auto small = torch::full({1, 2, 2}, -10.0f);
    const double s = 1 / (1 + std::exp(10.0));
    const double lp = -0.5 * (2 * 100.0 * 100.0) - kLn2Pi;
    const double expected = 2 * (std::log(s) - lp + std::log(2 * s) + 100.0);
    CHECK(rle_loss(pred, small, gt, mask, torch::ones({2}), normal_flow(), tiny).item<double>() ==
          doctest::Approx(expected).epsilon(1e-5));
  }
  SUBCASE("the result is clamped at 0") {
    // sigma ~ 1e-4 and a tiny residual: ln sigma terms dominate (very negative).
    const auto exact = torch::tensor({0.5f, 1.5f, 7.0f, 7.0f}).view({1, 2, 2});
    CHECK(rle_loss(exact, torch::full({1, 2, 2}, -9.0f), gt, mask, torch::ones({2}), normal_flow(),
                   tiny)
              .item<double>() == 0.0);
  }
}

TEST_CASE("RLE without visible keypoints: a zero that touches every flow parameter") {
  model::RealNvp flow;
  const auto pred = torch::randn({2, 3, 2}, torch::requires_grad());
  const auto gt = torch::zeros({2, 3, 3});
  const auto out = rle_loss(pred, torch::zeros({2, 3, 2}), gt, gt.select(-1, 2).ne(0),
                            torch::ones({3}), keypoint_flow(flow), 1e-38);
  CHECK(out.item<double>() == 0.0);
  out.backward();
  REQUIRE(pred.grad().defined());
  for (const auto& p : flow->parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(p.grad().abs().sum().item<double>() == 0.0);
  }
}

TEST_CASE("RealNVP: 53,784 parameters, zeroed coupling nets give the standard normal") {
  model::RealNvp flow;
  int64_t n = 0;
  for (const auto& p : flow->parameters()) n += p.numel();
  CHECK(n == 53784);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : flow->parameters()) p.zero_();
  }
  const auto x = torch::tensor({0.3f, -1.2f, 2.0f, 0.5f}).view({2, 2});
  const auto expected = normal_flow().log_prob(x);
  const auto got = keypoint_flow(flow).log_prob(x);
  CHECK((got - expected).abs().max().item<double>() < 1e-6);
}

TEST_CASE("keypoint sigmas: dataset values, COCO for 17 x 3, else 1 / K") {
  CHECK(default_keypoint_sigmas(17, 3) == coco_keypoint_sigmas());
  CHECK(default_keypoint_sigmas(17, 3)[5] == doctest::Approx(0.079));
  CHECK(default_keypoint_sigmas(17, 2) == std::vector<double>(17, 1.0 / 17));
  CHECK(default_keypoint_sigmas(4, 3) == std::vector<double>(4, 0.25));
  CHECK(default_keypoint_sigmas(2, 3, {0.1, 0.2}) == std::vector<double>{0.1, 0.2});
  CHECK_THROWS_AS(default_keypoint_sigmas(3, 3, {0.1, 0.2}), std::invalid_argument);
  CHECK_THROWS_AS(default_keypoint_sigmas(2, 3, {0.1, 0.0}), std::invalid_argument);
  const auto w = rle_keypoint_weights(17, 3);
  REQUIRE(w.size() == 17);
  CHECK(w[0] == 1.0);
  CHECK(w[7] == 1.2);
  CHECK(w[10] == 1.5);
  CHECK(w[16] == 1.5);
  CHECK(rle_keypoint_weights(5, 3) == std::vector<double>(5, 1.0));
}

TEST_CASE("pack_keypoints: the slots of pack_targets, pixels, visibility appended for ndim 2") {
  // Rows: image 1, image 0, image 1 -> image 0 slot 0 = row 1; image 1 slots 0, 1 = rows 0, 2.
  const auto labels = torch::tensor({1.0f, 0.0f, 0.5f, 0.5f, 0.1f, 0.1f,  //
                                     0.0f, 0.0f, 0.5f, 0.5f, 0.1f, 0.1f,  //
                                     1.0f, 0.0f, 0.5f, 0.5f, 0.1f, 0.1f})
                          .view({3, 6});
  const auto kpts = torch::tensor({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}).view({3, 1, 2});
  const auto packed = pack_keypoints(labels, kpts, 2, /*image_h=*/100, /*image_w=*/200, at::kCPU);
  REQUIRE(packed.sizes() == at::IntArrayRef({2, 2, 1, 3}));
  const auto expect = torch::tensor({60.0f, 40.0f, 1.0f, 0.0f, 0.0f, 0.0f,  //
                                     20.0f, 20.0f, 1.0f, 100.0f, 60.0f, 1.0f})
                          .view({2, 2, 1, 3});
  CHECK(torch::allclose(packed, expect));
  const auto vis = torch::tensor({0.1f, 0.2f, 2.0f}).view({1, 1, 3});
  const auto one = pack_keypoints(labels.narrow(0, 1, 1), vis, 1, 100, 200, at::kCPU);
  CHECK(torch::allclose(one, torch::tensor({20.0f, 20.0f, 2.0f}).view({1, 1, 1, 3})));
  CHECK(pack_keypoints(labels.narrow(0, 0, 0), torch::zeros({0, 4, 3}), 2, 64, 64, at::kCPU)
            .sizes() == at::IntArrayRef({2, 0, 4, 3}));
}
