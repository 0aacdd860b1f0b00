// The C++ COCO evaluator against pycocotools itself on coco128's instances_train2017.json (crowd
// regions included) and detection sets made from it by pycocotools_reference.py: all 12 stats of
// every set agree to 1e-6 (in practice to the last bit; the largest difference is printed).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "data/coco_json.h"
#include "eval/coco_eval.h"
#include "eval/coco_results.h"
#include "pycocotools_compare.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace trainer;

using test::compare_with_pycocotools;
using test::python_with_pycocotools;

TEST_CASE("all 12 stats agree with pycocotools on coco128 and eleven detection sets (slow)") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  const std::string python = python_with_pycocotools();
  if (python.empty()) {
    TRAINER_SKIP("no python with pycocotools (run scripts/setup.sh, or set TRAINER_PYTHON)");
  }
  const fs::path gt_path = *coco128 / "annotations/instances_train2017.json";
  test::TempDir dir;
  std::string out;
  const std::string command = "'" + python +
                              "' '" TRAINER_EVAL_SCRIPTS "/pycocotools_reference.py' '" +
                              gt_path.string() + "' '" + dir.path().string() + "'";
  REQUIRE_MESSAGE(test::run_command(command, &out) == 0, out);
  const auto reference = nlohmann::json::parse(test::read_text(dir / "stats.json"));
  REQUIRE(reference.size() >= 11);

  const data::CocoFile gt = data::read_coco_json(gt_path);
  size_t crowd = 0;
  for (const auto& a : gt.annotations) crowd += a.iscrowd;
  CHECK(crowd > 0);  // the protocol's crowd rule is exercised
  compare_with_pycocotools(reference, gt, dir.path(), {}, "boxes");
}

namespace {

// Runs pycocotools_keypoints_reference.py into `dir` (with `points` keypoints per person) and
// compares every result set's stats with ours; returns the ground truth it wrote.
data::CocoFile compare_keypoints(const std::string& python, const test::TempDir& dir, int points,
                                 const eval::CocoEvalOptions& options) {
  std::string out;
  REQUIRE_MESSAGE(
      test::run_command("'" + python +
                            "' '" TRAINER_EVAL_SCRIPTS "/pycocotools_keypoints_reference.py' '" +
                            dir.path().string() + "' " + std::to_string(points),
                        &out) == 0,
      out);
  const auto reference = nlohmann::json::parse(test::read_text(dir / "stats.json"));
  REQUIRE(reference.size() >= 8);
  const data::CocoFile gt = data::read_coco_json(dir / "gt.json");
  REQUIRE(gt.annotations.front().keypoints.size() == static_cast<size_t>(3 * points));
  compare_with_pycocotools(reference, gt, dir.path(), options, "keypoints");
  return gt;
}

}  // namespace

TEST_CASE("all 10 keypoint stats agree with pycocotools' COCOeval(iouType='keypoints')") {
  const std::string python = python_with_pycocotools();
  if (python.empty()) {
    TRAINER_SKIP("no python with pycocotools (run scripts/setup.sh, or set TRAINER_PYTHON)");
  }
  test::TempDir dir;
  eval::CocoEvalOptions options;
  options.iou_type = eval::IouType::kKeypoints;
  const data::CocoFile gt = compare_keypoints(python, dir, 17, options);
  size_t unlabelled = 0, crowd = 0;
  for (const auto& a : gt.annotations) {
    unlabelled += a.num_keypoints == 0;
    crowd += a.iscrowd;
  }
  CHECK(unlabelled > 0);  // the ignore rules are exercised
  CHECK(crowd > 0);
}

TEST_CASE("keypoint stats with a dataset's own sigmas (7 points, 1/K) agree with pycocotools") {
  const std::string python = python_with_pycocotools();
  if (python.empty()) {
    TRAINER_SKIP("no python with pycocotools (run scripts/setup.sh, or set TRAINER_PYTHON)");
  }
  test::TempDir dir;
  eval::CocoEvalOptions options;
  options.iou_type = eval::IouType::kKeypoints;
  options.kpt_oks_sigmas.assign(7, 1.0 / 7);
  compare_keypoints(python, dir, 7, options);
}
