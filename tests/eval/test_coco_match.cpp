// COCO matching of one image and category (eval/coco_match.h), box by box against hand values.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "eval/coco_match.h"

using namespace trainer::eval;

namespace {

GtBox gt_box(double x, double y, double w, double h, bool crowd = false, int64_t id = 1) {
  return GtBox{{x, y, w, h}, w * h, crowd, id};
}
DtBox dt_box(double x, double y, double w, double h, double score) {
  return DtBox{{x, y, w, h}, score};
}
uint8_t flag(const MatchResult& r, size_t num_dt, size_t t, size_t d) {
  return r.flags[t * num_dt + d];
}

}  // namespace

TEST_CASE("coco_box_iou: overlap, crowd rule, touching boxes") {
  // [0,0,10,10] vs [5,0,10,10]: intersection 5*10 = 50, union 100 + 100 - 50 = 150.
  CHECK(coco_box_iou({0, 0, 10, 10}, {5, 0, 10, 10}, false) ==
        doctest::Approx(1.0 / 3.0).epsilon(1e-15));
  // Crowd: intersection over the detection's own area, 50 / 100.
  CHECK(coco_box_iou({0, 0, 10, 10}, {5, 0, 10, 10}, true) == 0.5);
  // A detection inside a crowd region: 16 / 16.
  CHECK(coco_box_iou({2, 2, 4, 4}, {0, 0, 100, 100}, true) == 1.0);
  // Touching edges (zero-width intersection) are not overlapping.
  CHECK(coco_box_iou({0, 0, 10, 10}, {10, 0, 5, 5}, false) == 0.0);
  CHECK(coco_box_iou({0, 0, 10, 10}, {20, 20, 5, 5}, false) == 0.0);
}

TEST_CASE("detections are matched greedily in score order, each ground truth once") {
  const CocoParams params;
  // gt [0,0,10,10]; d0 (0.9) = [0,0,10,6] has IoU 60/100 = 0.6; d1 (0.8) = [0,0,10,9] has 0.9.
  const std::vector<GtBox> gt = {gt_box(0, 0, 10, 10)};
  const std::vector<DtBox> dt = {dt_box(0, 0, 10, 6, 0.9), dt_box(0, 0, 10, 9, 0.8)};
  std::vector<MatchResult> out;
  std::vector<double> scratch;
  match_image_category(dt, gt, params, &out, &scratch);
  REQUIRE(out.size() == 4);
  const MatchResult& all = out[0];
  CHECK(all.num_gt_counted == 1);
  // t = 0.50, 0.55, 0.60: d0 comes first and takes the gt (0.6 >= 0.6); d1 is a false positive.
  for (size_t t = 0; t < 3; ++t) {
    CHECK(flag(all, 2, t, 0) == kDetectionMatched);
    CHECK(flag(all, 2, t, 1) == 0);
  }
  // t = 0.65 .. 0.90 (0.8999999999999999): only d1 reaches it.
  for (size_t t = 3; t < 9; ++t) {
    CHECK(flag(all, 2, t, 0) == 0);
    CHECK(flag(all, 2, t, 1) == kDetectionMatched);
  }
  // t = 0.95: nothing.
  CHECK(flag(all, 2, 9, 0) == 0);
  CHECK(flag(all, 2, 9, 1) == 0);
  // Area "small" (gt area 100 <= 1024): same; "medium"/"large": gt ignored, and the unmatched
  // detections (areas 60, 90) are outside the range, so everything is ignored.
  CHECK(out[1].num_gt_counted == 1);
  CHECK(out[2].num_gt_counted == 0);
  for (size_t t = 0; t < 10; ++t) {
    CHECK((flag(out[2], 2, t, 0) & kDetectionIgnored));
    CHECK((flag(out[2], 2, t, 1) & kDetectionIgnored));
  }
}

TEST_CASE("a crowd region absorbs any number of detections, which are then ignored") {
  const CocoParams params;
  const std::vector<GtBox> gt = {gt_box(0, 0, 10, 10, false, 11), gt_box(20, 0, 20, 20, true, 12)};
  const std::vector<DtBox> dt = {dt_box(0, 0, 10, 10, 0.9), dt_box(22, 2, 5, 5, 0.8),
                                 dt_box(30, 10, 5, 5, 0.7)};
  std::vector<MatchResult> out;
  std::vector<double> scratch;
  match_image_category(dt, gt, params, &out, &scratch);
  CHECK(out[0].num_gt_counted == 1);  // the crowd region is not counted
  for (size_t t = 0; t < 10; ++t) {
    CHECK(flag(out[0], 3, t, 0) == kDetectionMatched);
    CHECK(flag(out[0], 3, t, 1) == (kDetectionMatched | kDetectionIgnored));
    CHECK(flag(out[0], 3, t, 2) == (kDetectionMatched | kDetectionIgnored));
  }
}

TEST_CASE("counted ground truth is preferred, ignored ground truth only when nothing else fits") {
  const CocoParams params;
  // The crowd region comes first in the file but is visited last. The detection [0,0,10,10] lies
  // inside it (crowd IoU 100 / 100 = 1.0) and has IoU 100 / (100 + 200 - 100) = 0.5 with the
  // counted gt [0,0,10,20].
  const std::vector<GtBox> gt = {gt_box(0, 0, 100, 100, true, 5), gt_box(0, 0, 10, 20, false, 6)};
  const std::vector<DtBox> dt = {dt_box(0, 0, 10, 10, 0.9)};
  std::vector<MatchResult> out;
  std::vector<double> scratch;
  match_image_category(dt, gt, params, &out, &scratch);
  // t = 0.5: the counted gt is found first (IoU 0.5 >= 0.5) and the search stops at the crowd.
  CHECK(flag(out[0], 1, 0, 0) == kDetectionMatched);
  // t >= 0.55: the counted gt is too far, the crowd region takes it: ignored.
  for (size_t t = 1; t < 10; ++t)
    CHECK(flag(out[0], 1, t, 0) == (kDetectionMatched | kDetectionIgnored));
}

TEST_CASE("area ranges use the annotation area, and ignore unmatched detections outside them") {
  const CocoParams params;
  GtBox g = gt_box(0, 0, 10, 10);
  g.area = 2000;  // a medium object by its (segmentation) area, though its box is 10x10
  const std::vector<DtBox> dt = {dt_box(0, 0, 10, 10, 0.9), dt_box(50, 50, 10, 10, 0.8),
                                 dt_box(100, 100, 40, 40, 0.7)};
  std::vector<MatchResult> out;
  std::vector<double> scratch;
  match_image_category(dt, {g}, params, &out, &scratch);
  // small: the gt is outside (ignored); d0 matches it -> ignored; d1 (area 100) is small and
  // unmatched -> a false positive; d2 (area 1600) is not small -> ignored.
  CHECK(out[1].num_gt_counted == 0);
  CHECK(flag(out[1], 3, 0, 0) == (kDetectionMatched | kDetectionIgnored));
  CHECK(flag(out[1], 3, 0, 1) == 0);
  CHECK(flag(out[1], 3, 0, 2) == kDetectionIgnored);
  // medium: the gt counts; d0 matched (its own area does not matter once matched), d1 ignored
  // (area 100 < 1024), d2 (1600) a false positive.
  CHECK(out[2].num_gt_counted == 1);
  CHECK(flag(out[2], 3, 0, 0) == kDetectionMatched);
  CHECK(flag(out[2], 3, 0, 1) == kDetectionIgnored);
  CHECK(flag(out[2], 3, 0, 2) == 0);
}

TEST_CASE("a match to ground truth with id 0 counts as no match, as in pycocotools") {
  const CocoParams params;
  const std::vector<GtBox> gt = {gt_box(0, 0, 10, 10, false, 0)};
  const std::vector<DtBox> dt = {dt_box(0, 0, 10, 10, 0.9), dt_box(0, 0, 10, 10, 0.8)};
  std::vector<MatchResult> out;
  std::vector<double> scratch;
  match_image_category(dt, gt, params, &out, &scratch);
  // dtMatches stores the gt id (0), so d0 is a false positive; the gt is still taken, so d1 too.
  CHECK(flag(out[0], 2, 0, 0) == 0);
  CHECK(flag(out[0], 2, 0, 1) == 0);
}

TEST_CASE("no ground truth or no detections: nothing matched") {
  const CocoParams params;
  std::vector<MatchResult> out;
  std::vector<double> scratch;
  match_image_category({dt_box(0, 0, 50, 50, 0.5)}, {}, params, &out, &scratch);
  CHECK(out[0].num_gt_counted == 0);
  CHECK(out[0].flags.size() == 10);
  CHECK(out[0].flags[0] == 0);
  CHECK(out[1].flags[0] == kDetectionIgnored);  // area 2500 is not small
  match_image_category({}, {gt_box(0, 0, 10, 10)}, params, &out, &scratch);
  CHECK(out[0].num_gt_counted == 1);
  CHECK(out[0].flags.empty());
}

TEST_CASE("coco_keypoint_oks: labelled points, the unlabelled box rule, and a hand value") {
  const std::vector<double> sigmas = coco_keypoint_params().kpt_oks_sigmas;
  REQUIRE(sigmas.size() == 17);
  CHECK(sigmas[0] == .26 / 10.0);  // as NumPy divides: not the literal 0.026
  CHECK(sigmas[16] == doctest::Approx(0.089));
  std::vector<double> gt(51, 0.0), dt(51, 0.0);
  // Only point 0 labelled, at (100, 100); the detection's point 0 is 3, 4 px away (d^2 = 25).
  gt[0] = 100, gt[1] = 100, gt[2] = 2;
  dt[0] = 103, dt[1] = 104;
  // e = 25 / (2 * 0.026)^2 / (10000 + eps) / 2 = 0.4622781...; OKS = exp(-e) = 0.6298...
  const double e = 25.0 / (0.052 * 0.052) / 10000.0 / 2.0;
  CHECK(coco_keypoint_oks(dt, gt, {50, 50, 100, 100}, 10000.0, sigmas) ==
        doctest::Approx(std::exp(-e)).epsilon(1e-12));
  CHECK(std::exp(-e) == doctest::Approx(0.62982).epsilon(1e-4));
  // Two labelled points: the mean of the two terms (point 1 exact: term 1).
  gt[3] = 10, gt[4] = 10, gt[5] = 1;
  dt[3] = 10, dt[4] = 10;
  CHECK(coco_keypoint_oks(dt, gt, {50, 50, 100, 100}, 10000.0, sigmas) ==
        doctest::Approx((std::exp(-e) + 1.0) / 2));
  // No labelled point: distances to the box enlarged to [x - w, x + 2w] x [y - h, y + 2h];
  // every detected point inside it gives exp(0) = 1 for all 17 points.
  std::vector<double> none(51, 0.0), inside(51, 0.0);
  for (int k = 0; k < 17; ++k) inside[3 * k] = -40, inside[3 * k + 1] = 250;  // box [50,50,100,100]
  CHECK(coco_keypoint_oks(inside, none, {50, 50, 100, 100}, 10000.0, sigmas) == 1.0);
  // One point 10 px left of the enlarged box (x0 = -50): only its term drops.
  inside[0] = -60;
  const double e0 = 100.0 / (0.052 * 0.052) / 10000.0 / 2.0;
  CHECK(coco_keypoint_oks(inside, none, {50, 50, 100, 100}, 10000.0, sigmas) ==
        doctest::Approx((16.0 + std::exp(-e0)) / 17.0));
  CHECK_THROWS_AS(coco_keypoint_oks(std::vector<double>(6), gt, {0, 0, 1, 1}, 1.0, sigmas),
                  std::invalid_argument);
}
