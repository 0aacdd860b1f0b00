// `trainer eval GT_JSON PRED_JSON [--json OUT]` end to end (boxes, keypoints, masks): the printed
// summary, the JSON file, and bad input (exit status 2, the entry named, nothing written).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_support.h"

using trainer::test::run_command;
using trainer::test::TempDir;
using trainer::test::write_text;

namespace {

const std::string kTrainer = TRAINER_BINARY;

void write_inputs(const TempDir& dir) {
  write_text(dir / "gt.json", R"({
    "images": [{"id": 1, "file_name": "1.jpg", "width": 640, "height": 480},
               {"id": 2, "file_name": "2.jpg", "width": 640, "height": 480}],
    "categories": [{"id": 1, "name": "person"}, {"id": 3, "name": "car"}],
    "annotations": [
      {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 100, 100], "area": 10000, "iscrowd": 0},
      {"id": 2, "image_id": 1, "category_id": 1, "bbox": [200, 0, 100, 100], "area": 10000, "iscrowd": 0},
      {"id": 3, "image_id": 2, "category_id": 3, "bbox": [10, 10, 20, 20], "area": 400, "iscrowd": 0}]})");
  // person: TP 0.9, FP 0.8, TP 0.7 -> AP 253/303 (see test_coco_eval.cpp); car: missed -> 0.
  write_text(dir / "dets.json", R"([
    {"image_id": 1, "category_id": 1, "bbox": [0, 0, 100, 100], "score": 0.9},
    {"image_id": 1, "category_id": 1, "bbox": [400, 400, 50, 50], "score": 0.8},
    {"image_id": 1, "category_id": 1, "bbox": [200, 0, 100, 100], "score": 0.7}])");
}

}  // namespace

TEST_CASE("trainer eval prints the 12 pycocotools lines and writes them as JSON") {
  TempDir dir;
  write_inputs(dir);
  std::string out;
  REQUIRE(run_command(kTrainer + " eval " + (dir / "gt.json").string() + " " +
                          (dir / "dets.json").string() + " --json " +
                          (dir / "stats.json").string() + " --per-category",
                      &out) == 0);
  // (253/303 + 0) / 2 = 0.41749...
  CHECK(
      out.find(" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.417") !=
      std::string::npos);
  CHECK(
      out.find(" Average Recall     (AR) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = 0.000") !=
      std::string::npos);
  CHECK(out.find("person") != std::string::npos);
  const auto j = nlohmann::json::parse(trainer::test::read_text(dir / "stats.json"));
  CHECK(j.at("AP").get<double>() == doctest::Approx(253.0 / 303.0 / 2).epsilon(1e-12));
  CHECK(j.at("stats").size() == 12);
  CHECK(j.at("APl").get<double>() == 1.0);  // the car (area 400) is not large: only person counts
  CHECK(j.at("per_category").at(0).at("name") == "person");
  CHECK(j.at("num_detections") == 3);
}

TEST_CASE("trainer eval: bad results exit 2 naming the entry, and write nothing") {
  TempDir dir;
  write_inputs(dir);
  write_text(dir / "bad.json",
             R"([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},
                 {"image_id": 5, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}])");
  std::string out;
  CHECK(run_command(kTrainer + " eval " + (dir / "gt.json").string() + " " +
                        (dir / "bad.json").string() + " --json " + (dir / "stats.json").string(),
                    &out) == 2);
  CHECK(out.find("bad.json: detection #1 (image_id 5): unknown image_id 5") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "stats.json"));
  CHECK(run_command(kTrainer + " eval " + (dir / "gt.json").string() + " " +
                        (dir / "missing.json").string(),
                    &out) == 2);
  CHECK(out.find("missing.json: cannot open results file") != std::string::npos);
}

TEST_CASE("trainer eval --iou-type keypoints prints pycocotools' 10 OKS lines") {
  TempDir dir;
  std::string points;  // 17 labelled points on a diagonal of the person's box
  for (int k = 0; k < 17; ++k) {
    points +=
        (k ? ", " : "") + std::to_string(10 + 5 * k) + ", " + std::to_string(20 + 5 * k) + ", 2";
  }
  write_text(dir / "gt.json",
             R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 640, "height": 480}],
    "categories": [{"id": 1, "name": "person"}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 100, 100],
                     "area": 5000, "iscrowd": 0, "num_keypoints": 17, "keypoints": [)" +
                 points + "]}]}");
  // The exact points (no box: it comes from their extent) and a far-off false positive.
  write_text(dir / "kps.json",
             R"([{"image_id": 1, "category_id": 1, "score": 0.9, "keypoints": [)" + points + R"(]},
    {"image_id": 1, "category_id": 1, "score": 0.5, "bbox": [300, 300, 50, 50],
     "keypoints": [)" +
                 std::string(points).replace(0, 2, "99") + "]}]");
  std::string out;
  REQUIRE(run_command(kTrainer + " eval " + (dir / "gt.json").string() + " " +
                          (dir / "kps.json").string() + " --iou-type keypoints --json " +
                          (dir / "stats.json").string(),
                      &out) == 0);
  CHECK(
      out.find(" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets= 20 ] = 1.000") !=
      std::string::npos);
  CHECK(out.find(
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets= 20 ] = -1.000") !=
        std::string::npos);
  const auto j = nlohmann::json::parse(trainer::test::read_text(dir / "stats.json"));
  CHECK(j.at("iou_type") == "keypoints");
  CHECK(j.at("stats").size() == 10);
  CHECK(j.at("APm").get<double>() == doctest::Approx(1.0));
  // A box results file has no keypoints: a clear error naming the detection.
  write_text(dir / "boxes.json",
             R"([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 9, 9], "score": 1}])");
  CHECK(run_command(kTrainer + " eval " + (dir / "gt.json").string() + " " +
                        (dir / "boxes.json").string() + " --iou-type keypoints",
                    &out) == 2);
  CHECK(out.find("detection #0 (image_id 1) has 0 keypoint values, expected 51") !=
        std::string::npos);
}

TEST_CASE("trainer eval --iou-type segm scores RLE masks against polygons and a crowd RLE") {
  TempDir dir;
  // 10 x 10 image: two polygons (9 and 16 pixels) and a crowd region (x 0..3, y 6..9) as
  // uncompressed counts.
  write_text(dir / "gt.json", R"({
    "images": [{"id": 1, "file_name": "1.jpg", "width": 10, "height": 10}],
    "categories": [{"id": 1, "name": "person"}],
    "annotations": [
      {"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 3, 3], "area": 9, "iscrowd": 0,
       "segmentation": [[1, 1, 1, 4, 4, 4, 4, 1]]},
      {"id": 2, "image_id": 1, "category_id": 1, "bbox": [5, 5, 4, 4], "area": 16, "iscrowd": 0,
       "segmentation": [[5, 5, 5, 9, 9, 9, 9, 5]]},
      {"id": 3, "image_id": 1, "category_id": 1, "bbox": [0, 6, 4, 4], "area": 16, "iscrowd": 1,
       "segmentation": {"size": [10, 10], "counts": [6, 4, 6, 4, 6, 4, 6, 4, 60]}}]})");
  // The first polygon's mask exactly (0.9), a false positive (0.8), a fragment of the crowd
  // region (0.85, ignored), the second polygon's mask (0.7): TP, FP, TP -> AP 253/303 at every
  // threshold (pycocotools: 0.8349835); both objects are small. No "bbox": areas from the masks.
  write_text(dir / "masks.json", R"([
    {"image_id": 1, "category_id": 1, "score": 0.9, "segmentation": {"size": [10, 10], "counts": ";37000k1"}},
    {"image_id": 1, "category_id": 1, "score": 0.8, "segmentation": {"size": [10, 10], "counts": "l137000:"}},
    {"image_id": 1, "category_id": 1, "score": 0.85, "segmentation": {"size": [10, 10], "counts": "a0280o1"}},
    {"image_id": 1, "category_id": 1, "score": 0.7, "segmentation": {"size": [10, 10], "counts": "g146000005"}}])");
  std::string out;
  REQUIRE(run_command(kTrainer + " eval " + (dir / "gt.json").string() + " " +
                          (dir / "masks.json").string() + " --iou-type segm --json " +
                          (dir / "stats.json").string(),
                      &out) == 0);
  CHECK(
      out.find(" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.835") !=
      std::string::npos);
  const auto j = nlohmann::json::parse(trainer::test::read_text(dir / "stats.json"));
  CHECK(j.at("iou_type") == "segm");
  CHECK(j.at("stats").size() == 12);
  CHECK(j.at("AP").get<double>() == doctest::Approx(253.0 / 303.0).epsilon(1e-12));
  CHECK(j.at("APs").get<double>() == doctest::Approx(253.0 / 303.0).epsilon(1e-12));
  CHECK(j.at("APm").get<double>() == -1.0);
  CHECK(j.at("AR1").get<double>() == 0.5);
  CHECK(j.at("AR10").get<double>() == 1.0);
  // Ground truth without a segmentation cannot be scored by mask: exit 2 naming the annotation.
  write_text(dir / "boxes_gt.json", R"({
    "images": [{"id": 1, "file_name": "1.jpg", "width": 10, "height": 10}],
    "categories": [{"id": 1, "name": "person"}],
    "annotations": [{"id": 4, "image_id": 1, "category_id": 1, "bbox": [1, 1, 3, 3], "area": 9}]})");
  CHECK(run_command(kTrainer + " eval " + (dir / "boxes_gt.json").string() + " " +
                        (dir / "masks.json").string() + " --iou-type segm",
                    &out) == 2);
  CHECK(out.find("annotation id 4 has no \"segmentation\" (polygons or RLE); --iou-type segm "
                 "needs masks") != std::string::npos);
}
