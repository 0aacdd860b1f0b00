// The pose metric's keypoint OKS (the reference's kpt_iou) by hand, and matching by a given overlap
// matrix.
#include <doctest/doctest.h>

#include <cmath>

#include "eval/keypoint_similarity.h"
#include "eval/reference_metric.h"

using namespace trainer::eval;

TEST_CASE("reference_keypoint_oks by hand: visible points only, area as given") {
  // Two keypoints, sigmas 0.1 and 0.2, area 100. Point 0 is 5 px off: d = 25,
  // e = 25 / ((0.2)^2 * 100 * 2) = 3.125; point 1 is exact: e = 0.
  const std::vector<double> sigmas = {0.1, 0.2};
  const std::vector<float> gt = {0, 0, 2, 10, 0, 1};
  const std::vector<float> pred = {3, 4, 0.9f, 10, 0, 0.1f};  // predicted visibility is ignored
  const auto both = reference_keypoint_oks(gt, pred, {100.0f}, 2, 3, sigmas);
  REQUIRE(both.size() == 1);
  CHECK(both[0] == doctest::Approx((std::exp(-3.125) + 1.0) / 2.0).epsilon(1e-6));
  // The exact point invisible in the ground truth: only point 0 counts.
  const std::vector<float> gt_one = {0, 0, 2, 10, 0, 0};
  CHECK(reference_keypoint_oks(gt_one, pred, {100.0f}, 2, 3, sigmas)[0] ==
        doctest::Approx(std::exp(-3.125)).epsilon(1e-6));
  // No visible point: 0. Two-value predictions (x, y) read the same.
  const std::vector<float> gt_none = {0, 0, 0, 10, 0, 0};
  CHECK(reference_keypoint_oks(gt_none, pred, {100.0f}, 2, 3, sigmas)[0] == 0.0f);
  const std::vector<float> pred_xy = {3, 4, 10, 0};
  CHECK(reference_keypoint_oks(gt, pred_xy, {100.0f}, 2, 2, sigmas)[0] == both[0]);
}

TEST_CASE("reference_keypoint_oks: the matrix is [gt][pred]") {
  const std::vector<double> sigmas = {0.5};
  const std::vector<float> gt = {0, 0, 2, 100, 100, 2};  // two GTs with one point each
  const std::vector<float> pred = {0, 0, 1, 100, 100, 1, 50, 50, 1};
  const auto oks = reference_keypoint_oks(gt, pred, {4.0f, 4.0f}, 1, 3, sigmas);
  REQUIRE(oks.size() == 6);
  CHECK(oks[0] == doctest::Approx(1.0 / (1.0 + 1e-7)));  // gt 0, pred 0
  CHECK(oks[1] < 1e-6f);                                 // gt 0, pred 1 (far)
  CHECK(oks[4] == doctest::Approx(1.0 / (1.0 + 1e-7)));  // gt 1, pred 1
}

TEST_CASE("matching by an overlap matrix equals matching by box IoU when given the IoUs") {
  const std::vector<std::array<float, 4>> preds = {{0, 0, 10, 9}, {0, 0, 10, 10}, {20, 20, 30, 30}};
  const std::vector<std::array<float, 4>> gts = {{0, 0, 10, 10}, {20, 20, 30, 31}};
  const std::vector<int> pred_cls = {0, 0, 1}, gt_cls = {0, 1};
  std::vector<float> iou;
  for (const auto& g : gts) {
    for (const auto& p : preds) iou.push_back(reference_box_iou(g, p));
  }
  CHECK(reference_match_overlaps(iou, pred_cls, gt_cls) ==
        reference_match(preds, pred_cls, gts, gt_cls));
  ReferenceMetric by_box(2), by_matrix(2);
  by_box.add_image(preds, {0.9f, 0.8f, 0.7f}, pred_cls, gts, gt_cls);
  by_matrix.add_image_overlaps(iou, {0.9f, 0.8f, 0.7f}, pred_cls, gt_cls);
  CHECK(by_box.compute().map50_95 == by_matrix.compute().map50_95);
  CHECK(by_box.compute().precision == by_matrix.compute().precision);
  CHECK_THROWS(by_matrix.add_image_overlaps({0.5f}, {0.9f}, {0}, {0, 1}));
}
