// The pose assigner's changes to the task-aligned assigner, on small cases worked out by hand:
// keypoint OKS as the overlap, the pyramid-level gate and its fallback.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "loss/pose_assigner.h"

using namespace trainer::loss;

TEST_CASE("keypoint OKS: visible keypoints only, area with eps, at least one divisor") {
  const auto sigmas = torch::tensor({0.5f, 0.5f});
  // d^2 = (0, 25), area 1: e = 25 / (1 x (1 + 1e-9) x 2) = 12.5.
  const auto pd = torch::zeros({1, 2, 2});
  auto gt = torch::tensor({0.0f, 0.0f, 1.0f, 3.0f, 4.0f, 2.0f}).view({1, 2, 3});
  const auto area = torch::ones({1, 1});
  CHECK(keypoint_oks(pd, gt, area, sigmas).item<double>() ==
        doctest::Approx((1 + std::exp(-12.5)) / 2).epsilon(1e-6));
  gt.index_put_({0, 1, 2}, 0.0f);  // the far keypoint not labelled: only the exact one counts
  CHECK(keypoint_oks(pd, gt, area, sigmas).item<double>() == doctest::Approx(1.0));
  gt.index_put_({0, 0, 2}, 0.0f);  // none labelled: 0 / max(0, 1)
  CHECK(keypoint_oks(pd, gt, area, sigmas).item<double>() == 0.0);
}

TEST_CASE("level gate: 2 s <= sqrt(area) <= 12 s, open at the finest and coarsest levels") {
  // One anchor per stride 8, 16, 32, all candidates of every GT.
  const auto strides = torch::tensor({8.0f, 16.0f, 32.0f});
  const auto all = torch::ones({1, 5, 3}, torch::kBool);
  const auto boxes = torch::tensor({0.0f, 0.0f, 10.0f,  10.0f,    // side 10: below 2 x 8, finest
                                    0.0f, 0.0f, 20.0f,  20.0f,    // 20: only stride 8 (16 < 32)
                                    0.0f, 0.0f, 100.0f, 100.0f,   // 100: > 12 x 8; 16 and 32 fit
                                    0.0f, 0.0f, 500.0f, 500.0f,   // 500: only the coarsest
                                    0.0f, 0.0f, 40.0f,  160.0f})  // sqrt(6400) = 80: 8 (96), 16, 32
                         .view({1, 5, 4});
  const auto gated = gate_candidates_by_level(all, boxes, strides).to(torch::kInt);
  const auto expect =
      torch::tensor({1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1}, torch::kInt).view({1, 5, 3});
  CHECK(torch::equal(gated, expect));

  SUBCASE("a GT the gate would empty keeps its ungated candidates") {
    // Side 20 fits only stride 8, but its only candidates are on strides 16 and 32.
    const auto some = torch::tensor({false, true, true}).view({1, 1, 3});
    const auto box = boxes.narrow(1, 1, 1);
    CHECK(torch::equal(gate_candidates_by_level(some, box, strides), some));
    // Candidates on 8 and 16: the gate keeps 8 only.
    const auto two = torch::tensor({true, true, false}).view({1, 1, 3});
    CHECK(torch::equal(gate_candidates_by_level(two, box, strides),
                       torch::tensor({true, false, false}).view({1, 1, 3})));
  }
}

namespace {

// A 4 x 4 grid of stride 8 (one level: the gate keeps everything).
torch::Tensor pose_grid_points() {
  std::vector<float> xy;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) xy.insert(xy.end(), {4.0f + 8 * c, 4.0f + 8 * r});
  return torch::tensor(xy).view({16, 2});
}

AssignerOptions options(int64_t topk) {
  AssignerOptions o;
  o.num_classes = 2;
  o.topk = topk;
  o.strides = {8};
  return o;
}

}  // namespace

TEST_CASE("pose assigner: without visible keypoints it is the detection assigner") {
  torch::manual_seed(5);
  const auto points = pose_grid_points();
  const auto scores = torch::rand({1, 16, 2});
  const auto bboxes = torch::cat({points - 6 + torch::rand({16, 2}), points + 6}, -1).unsqueeze(0);
  const auto labels = torch::tensor({0.0f, 1.0f}).view({1, 2, 1});
  const auto gt =
      torch::tensor({0.0f, 0.0f, 16.0f, 16.0f, 10.0f, 10.0f, 30.0f, 28.0f}).view({1, 2, 4});
  const auto mask = torch::ones({1, 2, 1}, torch::kBool);
  const auto pd_kpts = torch::rand({1, 16, 3, 2}) * 32;
  const auto gt_kpts = torch::cat({torch::rand({1, 2, 3, 2}) * 32, torch::zeros({1, 2, 3, 1})}, -1);
  const TaskAlignedAssigner det(options(3));
  const PoseTaskAlignedAssigner pose(options(3), {0.1, 0.2, 0.3});
  const auto a = det(scores, bboxes, points, labels, gt, mask);
  const auto b =
      pose(scores, bboxes, points, labels, gt, mask, pd_kpts, gt_kpts, torch::full({16}, 8.0f));
  CHECK(torch::equal(a.fg_mask, b.fg_mask));
  CHECK(torch::equal(a.target_gt_idx, b.target_gt_idx));
  CHECK(torch::equal(a.target_scores, b.target_scores));
}

TEST_CASE("pose assigner: keypoint OKS picks the anchor and sets the soft target") {
  // GT [0, 0, 16, 16] holds anchors 0, 1, 4, 5 with identical scores and boxes; only anchor 5's
  // keypoints are exact, so with topk 1 it is the positive, with target score = its OKS = 1.
  const auto points = pose_grid_points();
  const auto scores = torch::full({1, 16, 2}, 0.5f);
  const auto bboxes = torch::tensor({0.0f, 0.0f, 16.0f, 16.0f}).expand({1, 16, 4});
  const auto labels = torch::zeros({1, 1, 1});
  const auto gt = torch::tensor({0.0f, 0.0f, 16.0f, 16.0f}).view({1, 1, 4});
  const auto mask = torch::ones({1, 1, 1}, torch::kBool);
  const auto gt_kpts = torch::tensor({4.0f, 4.0f, 2.0f, 12.0f, 12.0f, 1.0f}).view({1, 1, 2, 3});
  auto pd_kpts = torch::tensor({5.0f, 5.0f, 11.0f, 13.0f}).view({1, 1, 2, 2}).repeat({1, 16, 1, 1});
  pd_kpts.index_put_({0, 5}, torch::tensor({4.0f, 4.0f, 12.0f, 12.0f}).view({2, 2}));
  const PoseTaskAlignedAssigner pose(options(1), {0.5, 0.5});
  const auto a =
      pose(scores, bboxes, points, labels, gt, mask, pd_kpts, gt_kpts, torch::full({16}, 8.0f));
  REQUIRE(a.fg_mask.sum().item<int64_t>() == 1);
  CHECK(a.fg_mask[0][5].item<bool>());
  CHECK(a.target_scores[0][5][0].item<double>() == doctest::Approx(1.0).epsilon(1e-6));
}
