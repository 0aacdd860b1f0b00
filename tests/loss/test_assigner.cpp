// The task-aligned assigner on small constructed cases whose picks can be worked out by hand.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "loss/task_aligned_assigner.h"

using namespace trainer::loss;

namespace {

// A 4 x 4 grid of stride 8: anchor i = 4 row + col at pixel (4 + 8 col, 4 + 8 row).
torch::Tensor grid_points() {
  std::vector<float> xy;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) xy.insert(xy.end(), {4.0f + 8 * c, 4.0f + 8 * r});
  return torch::tensor(xy).view({16, 2});
}

std::vector<int64_t> positives(const torch::Tensor& mask_row) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < mask_row.size(0); ++i)
    if (mask_row[i].item<double>() > 0) out.push_back(i);
  return out;
}

// CIoU(GT [0,0,16,16], pred [0,0,16,8]) with e = 1e-7: IoU = 128 / (256 + 16e + 128 + 8e - 128 + e)
// = 0.49999999355, rho2 = (0 + (8 - 16)^2) / 4 = 16, c2 = 512 + e,
// v = 4/pi^2 (atan(16 / (8 + e)) - atan(16 / (16 + e)))^2 = 0.041956461, alpha = v / (v + 0.5 + e)
// = 0.077416648: CIoU = 0.5 - 16/512 - v alpha = 0.46550186497.
constexpr double kCiouHalf = 0.46550186497297985;
// CIoU of a 4 x 4 box with itself: 16 / (16 + 9e) = 0.99999994375.
constexpr double kCiouSame = 0.9999999437500029;

struct Case {
  torch::Tensor scores, bboxes, points, labels, gt_bboxes, mask;
};

// GT0 = [0,0,16,16] class 0 holds anchors 0, 1, 4, 5. GT1 = [21,21,25,25] class 1 is 4 px wide:
// no anchor centre lies inside it, but STAL widens it to [15,15,31,31] for the candidate test,
// which holds anchors 10, 11, 14, 15. A third padding row must be ignored.
// Class scores: GT0's anchors 0.9, 0.8, 0.7, 0.6; GT1's anchors 0.5, 0.4, 0.3, 0.2.
// Predicted boxes: GT0's anchors [0,0,16,8] (CIoU kCiouHalf), GT1's exactly GT1 (kCiouSame).
Case constructed_case() {
  Case c;
  c.points = grid_points();
  c.scores = torch::full({1, 16, 2}, 0.1f);
  c.bboxes = torch::tensor({0.0f, 0.0f, 1.0f, 1.0f}).repeat({1, 16, 1});
  const int64_t gt0[] = {0, 1, 4, 5}, gt1[] = {10, 11, 14, 15};
  for (int k = 0; k < 4; ++k) {
    c.scores[0][gt0[k]][0] = 0.9f - 0.1f * k;
    c.scores[0][gt1[k]][1] = 0.5f - 0.1f * k;
    c.bboxes[0][gt0[k]] = torch::tensor({0.0f, 0.0f, 16.0f, 8.0f});
    c.bboxes[0][gt1[k]] = torch::tensor({21.0f, 21.0f, 25.0f, 25.0f});
  }
  c.labels = torch::tensor({0.0f, 1.0f, 0.0f}).view({1, 3, 1});
  c.gt_bboxes =
      torch::tensor(
          {{0.0f, 0.0f, 16.0f, 16.0f}, {21.0f, 21.0f, 25.0f, 25.0f}, {0.0f, 0.0f, 0.0f, 0.0f}})
          .view({1, 3, 4});
  c.mask = torch::tensor({true, true, false}).view({1, 3, 1});
  return c;
}

Assignment run(const Case& c, int64_t topk, int64_t topk2) {
  AssignerOptions o;
  o.num_classes = 2;
  o.topk = topk;
  o.topk2 = topk2;
  o.strides = {8, 16, 32};
  return TaskAlignedAssigner(o)(c.scores, c.bboxes, c.points, c.labels, c.gt_bboxes, c.mask);
}

}  // namespace

TEST_CASE("candidates: strictly inside, with the STAL rule per side for sides under 16 px") {
  // 8.4.190's rule: a valid GT side < stride_val = strides[1] (16 px) becomes 16 px about its
  // centre (older releases tested < strides[0], 8 px).
  AssignerOptions o;
  const auto points = grid_points();
  // [21,21,25,25]: 4 x 4 -> 16 x 16 around (23, 23) = [15,15,31,31]: anchors 10, 11, 14, 15.
  // [21,9,25,27]: 4 x 18 -> only the width widens: x in (15, 31), y in (9, 27): 6, 7, 10, 11.
  // [20.5,20.5,28.5,28.5]: 8 px < 16 -> [16.5,16.5,32.5,32.5]: anchors 10, 11, 14, 15.
  // [0,0,16,16] on a padding row (mask false) is neither widened nor special: 0, 1, 4, 5.
  const auto gts = torch::tensor({{21.0f, 21.0f, 25.0f, 25.0f},
                                  {21.0f, 9.0f, 25.0f, 27.0f},
                                  {20.5f, 20.5f, 28.5f, 28.5f},
                                  {0.0f, 0.0f, 16.0f, 16.0f}})
                       .view({1, 4, 4});
  const auto mask = torch::tensor({true, true, true, false}).view({1, 4, 1});
  const auto in = select_candidates_in_gts(points, gts, mask, o);
  CHECK(positives(in[0][0]) == std::vector<int64_t>{10, 11, 14, 15});
  CHECK(positives(in[0][1]) == std::vector<int64_t>{6, 7, 10, 11});
  CHECK(positives(in[0][2]) == std::vector<int64_t>{10, 11, 14, 15});
  CHECK(positives(in[0][3]) == std::vector<int64_t>{0, 1, 4, 5});
  // An anchor on the border is not inside (margin must exceed eps): [4,4,20,20] is 16 px wide
  // (not widened) and holds only (12, 12) = anchor 5; (4, .) and (20, .) lie on its border.
  const auto border =
      select_candidates_in_gts(points, torch::tensor({4.0f, 4.0f, 20.0f, 20.0f}).view({1, 1, 4}),
                               torch::ones({1, 1, 1}, torch::kBool), o);
  CHECK(positives(border[0][0]) == std::vector<int64_t>{5});
}

TEST_CASE("assigner picks: top-k by alignment, STAL target, normalised scores") {
  const auto c = constructed_case();
  const auto a = run(c, /*topk=*/2, /*topk2=*/2);
  // Top-2 of GT0 by align = s^0.5 u^6 with equal u: scores 0.9 and 0.8 -> anchors 0 and 1.
  // Top-2 of GT1: scores 0.5 and 0.4 -> anchors 10 and 11.
  CHECK(positives(a.fg_mask[0]) == std::vector<int64_t>{0, 1, 10, 11});
  CHECK(a.target_gt_idx[0][1].item<int64_t>() == 0);
  CHECK(a.target_gt_idx[0][11].item<int64_t>() == 1);
  CHECK(a.target_labels[0][0].item<int64_t>() == 0);
  CHECK(a.target_labels[0][10].item<int64_t>() == 1);
  CHECK(torch::equal(a.target_bboxes[0][11], torch::tensor({21.0f, 21.0f, 25.0f, 25.0f})));
  // Scores: align x (GT's best IoU) / (GT's best align): the best anchor gets the best IoU;
  // anchor 1 gets sqrt(0.8 / 0.9) of it, anchor 11 sqrt(0.4 / 0.5).
  CHECK(a.target_scores[0][0][0].item<float>() == doctest::Approx(kCiouHalf).epsilon(1e-5));
  CHECK(a.target_scores[0][1][0].item<float>() ==
        doctest::Approx(std::sqrt(0.8 / 0.9) * kCiouHalf).epsilon(1e-5));
  CHECK(a.target_scores[0][10][1].item<float>() == doctest::Approx(kCiouSame).epsilon(1e-5));
  CHECK(a.target_scores[0][11][1].item<float>() == doctest::Approx(std::sqrt(0.8)).epsilon(1e-5));
  CHECK(a.target_scores[0][0][1].item<float>() == 0.0f);  // one-hot
  CHECK(a.target_scores.sum().item<float>() ==
        doctest::Approx(kCiouHalf * (1 + std::sqrt(0.8 / 0.9)) + kCiouSame * (1 + std::sqrt(0.8)))
            .epsilon(1e-5));
}

TEST_CASE("assigner with topk2 = 1 keeps one positive per GT (the one-to-one branch)") {
  const auto c = constructed_case();
  const auto a = run(c, /*topk=*/7, /*topk2=*/1);
  // topk 7 takes all 4 candidates of each GT (the other 3 picks are outside the GT), then the
  // second pass keeps the best aligned: anchor 0 (0.9) and anchor 10 (0.5).
  CHECK(positives(a.fg_mask[0]) == std::vector<int64_t>{0, 10});
  CHECK(a.target_scores[0][0][0].item<float>() == doctest::Approx(kCiouHalf).epsilon(1e-5));
  CHECK(a.target_scores[0][10][1].item<float>() == doctest::Approx(kCiouSame).epsilon(1e-5));
  // With topk2 = topk all 4 candidates per GT stay.
  const auto all = run(c, 7, 7);
  CHECK(positives(all.fg_mask[0]) == std::vector<int64_t>{0, 1, 4, 5, 10, 11, 14, 15});
}

TEST_CASE("conflicts go to the highest overlap, then the topk2 pass") {
  // 2 GTs x 3 anchors. Anchor 1 is claimed by both; GT1 overlaps it more (0.6 > 0.3).
  const auto mask_pos = torch::tensor({{1.0f, 1.0f, 0.0f}, {0.0f, 1.0f, 1.0f}}).view({1, 2, 3});
  const auto overlaps = torch::tensor({{0.9f, 0.3f, 0.0f}, {0.0f, 0.6f, 0.8f}}).view({1, 2, 3});
  const auto align = torch::tensor({{0.5f, 0.2f, 0.0f}, {0.0f, 0.4f, 0.7f}}).view({1, 2, 3});
  const auto r = select_highest_overlaps(mask_pos, overlaps, align, 2, 2);
  CHECK(torch::equal(r.mask_pos[0], torch::tensor({{1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 1.0f}})));
  CHECK(torch::equal(r.fg_mask[0], torch::tensor({1.0f, 1.0f, 1.0f})));
  CHECK(torch::equal(r.target_gt_idx[0], torch::tensor({0, 1, 1}, torch::kLong)));
  // topk2 = 1: GT0 keeps anchor 0; GT1 keeps anchor 2 (align 0.7 > 0.4); anchor 1 is background.
  const auto r1 = select_highest_overlaps(mask_pos, overlaps, align, 2, 1);
  CHECK(torch::equal(r1.mask_pos[0], torch::tensor({{1.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f}})));
  CHECK(torch::equal(r1.fg_mask[0], torch::tensor({1.0f, 0.0f, 1.0f})));
}

TEST_CASE("top-k selection ignores padding GTs") {
  const auto metric =
      torch::tensor({{0.1f, 0.5f, 0.3f, 0.0f}, {0.2f, 0.1f, 0.0f, 0.0f}}).view({1, 2, 4});
  const auto valid = torch::tensor({true, false}).view({1, 2, 1});
  const auto m = select_topk_candidates(metric, valid, 2);
  CHECK(torch::equal(m[0], torch::tensor({{0.0f, 1.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}})));
}

TEST_CASE("assigner without GTs: everything is background") {
  auto c = constructed_case();
  AssignerOptions o;
  o.num_classes = 2;
  const TaskAlignedAssigner assign(o);
  const auto none = assign(c.scores, c.bboxes, c.points, torch::zeros({1, 0, 1}),
                           torch::zeros({1, 0, 4}), torch::zeros({1, 0, 1}, torch::kBool));
  CHECK(none.fg_mask.sum().item<int64_t>() == 0);
  CHECK(none.target_scores.sum().item<float>() == 0.0f);
  CHECK((none.target_labels == 2).all().item<bool>());
  // Padding rows only.
  const auto pad = assign(c.scores, c.bboxes, c.points, torch::zeros({1, 2, 1}),
                          torch::zeros({1, 2, 4}), torch::zeros({1, 2, 1}, torch::kBool));
  CHECK(pad.fg_mask.sum().item<int64_t>() == 0);
  CHECK(pad.target_scores.sum().item<float>() == 0.0f);
}
