// `--iou-type obb`: the COCO box protocol on the exact IoU of rotated rectangles, checked on
// hand-computed overlaps, and the "rbox" / "poly" fields of ground truth and results.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "data/coco_json.h"
#include "eval/coco_eval.h"
#include "eval/coco_match.h"
#include "eval/coco_results.h"

using namespace trainer;
using doctest::Approx;

namespace {

// One 100 x 100 image, category 1, and the given annotation entries (json objects' bodies).
data::CocoFile gt_with(const std::string& annotations) {
  return data::parse_coco_json(
      "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 100, \"height\": 100}], "
      "\"categories\": [{\"id\": 1, \"name\": \"bar\"}], \"annotations\": [" +
          annotations + "]}",
      "gt.json");
}

eval::Detection rotated(double cx, double cy, double w, double h, double angle, double score) {
  eval::Detection d;
  d.image_id = 1;
  d.category_id = 1;
  d.score = score;
  d.rbox = {cx, cy, w, h, angle};
  return d;
}

}  // namespace

TEST_CASE("rotated IoU: the octagon of a square and its 45-degree turn, crowd, apart") {
  // Two 10 x 10 squares on one centre, one turned by 45 degrees: the overlap is a regular octagon
  // of area 200 (sqrt 2 - 1) = 82.84, IoU = 82.84 / (200 - 82.84) = sqrt(2) / 2.
  const std::vector<double> a = {50, 50, 10, 10, 0}, b = {50, 50, 10, 10, M_PI / 4};
  CHECK(eval::coco_rotated_iou(a, b, false) == Approx(std::sqrt(2.0) / 2).epsilon(1e-9));
  // Crowd ground truth: the overlap over the detection's own area.
  CHECK(eval::coco_rotated_iou(a, b, true) == Approx(2 * (std::sqrt(2.0) - 1)).epsilon(1e-9));
  CHECK(eval::coco_rotated_iou(a, {80, 80, 10, 10, 0.3}, false) == 0.0);
}

TEST_CASE("obb evaluation: the octagon detection counts at 0.50-0.70 only (mAP50-95 = 0.5)") {
  const auto gt = gt_with(
      "{\"id\": 1, \"image_id\": 1, \"category_id\": 1, "
      "\"rbox\": [50, 50, 10, 10, 0]}");
  REQUIRE(gt.annotations[0].rbox.size() == 5);
  CHECK(gt.annotations[0].area == 100.0);            // w x h when "area" is absent
  CHECK(gt.annotations[0].bbox[0] == Approx(45.0));  // the corners' extent
  eval::CocoEvalOptions options;
  options.iou_type = eval::IouType::kObb;
  const auto stats = eval::evaluate_coco(gt, {rotated(50, 50, 10, 10, M_PI / 4, 0.9)}, options);
  // IoU sqrt(2)/2 = 0.707: matched at 0.50, 0.55, 0.60, 0.65, 0.70 (5 of 10 thresholds).
  CHECK(stats.stats[0] == Approx(0.5).epsilon(1e-6));
  CHECK(stats.stats[1] == Approx(1.0).epsilon(1e-6));
  CHECK(stats.stats[2] == Approx(0.0));
  // The same pair scored on axis-aligned extents (14.1 x 14.1 around 10 x 10) has IoU 0.5: at
  // most the 0.50 threshold counts.
  options.iou_type = eval::IouType::kBox;
  eval::Detection extent = rotated(50, 50, 10, 10, M_PI / 4, 0.9);
  const double half = 5 * std::sqrt(2.0);
  extent.bbox_xywh = {50 - half, 50 - half, 2 * half, 2 * half};
  CHECK(eval::evaluate_coco(gt, {extent}, options).stats[0] <= 0.1 + 1e-6);
}

TEST_CASE("obb json: poly corners become their rectangle, missing rotated boxes are named") {
  const auto gt = gt_with(
      "{\"id\": 7, \"image_id\": 1, \"category_id\": 1, "
      "\"poly\": [40, 45, 60, 45, 60, 55, 40, 55]}");
  REQUIRE(gt.annotations[0].rbox.size() == 5);
  CHECK(gt.annotations[0].rbox[0] == Approx(50));
  CHECK(gt.annotations[0].rbox[2] == Approx(20));  // w the long side
  CHECK(gt.annotations[0].rbox[3] == Approx(10));
  const auto results = eval::parse_coco_results(
      "[{\"image_id\": 1, \"category_id\": 1, \"score\": 0.8, \"rbox\": [50, 50, 20, 10, 0]}]",
      "dt.json", gt);
  REQUIRE(results[0].rbox.size() == 5);
  CHECK(results[0].bbox_xywh[2] == Approx(20));
  eval::CocoEvalOptions options;
  options.iou_type = eval::IouType::kObb;
  CHECK(eval::evaluate_coco(gt, results, options).stats[0] == Approx(1.0).epsilon(1e-6));
  // A ground truth without a rotated box, and a malformed rbox, are errors naming the entry.
  const auto plain = gt_with(
      "{\"id\": 3, \"image_id\": 1, \"category_id\": 1, "
      "\"bbox\": [0, 0, 10, 10]}");
  CHECK_THROWS_WITH_AS(eval::evaluate_coco(plain, results, options),
                       doctest::Contains("annotation id 3 has no \"rbox\""), core::InputError);
  CHECK_THROWS_WITH_AS(
      eval::parse_coco_results(
          "[{\"image_id\": 1, \"category_id\": 1, \"score\": 0.8, \"rbox\": [50, 50, 20]}]",
          "dt.json", gt),
      doctest::Contains("\"rbox\": a rotated box is 5 values"), core::InputError);
}
