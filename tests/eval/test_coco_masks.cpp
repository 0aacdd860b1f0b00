// Segmentations from file to mask: the annotation reader's "segmentation" (polygons, RLE, and its
// errors naming the file and the entry), annToRLE's rules (coco_masks.h), and mask results in the
// results reader and writer (loadRes' box and area rules).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/coco_json.h"
#include "eval/coco_masks.h"
#include "eval/coco_results.h"
#include "eval/rle.h"

using namespace trainer;
using eval::Rle;

namespace {

std::string gt_json(const std::string& segmentation) {
  return R"({"images": [{"id": 1, "file_name": "a.jpg", "width": 6, "height": 6}],
             "categories": [{"id": 3, "name": "car"}],
             "annotations": [{"id": 5, "image_id": 1, "category_id": 3, "bbox": [1, 1, 3, 3],
                              "area": 9, "iscrowd": 0, "segmentation": )" +
         segmentation + "}]}";
}

std::string gt_error(const std::string& segmentation) {
  try {
    data::parse_coco_json(gt_json(segmentation), "gt.json");
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const data::CocoFile& small_mask_gt() {
  static const data::CocoFile gt =
      data::parse_coco_json(gt_json("[[1, 1, 1, 4, 4, 4, 4, 1]]"), "gt.json");
  return gt;
}

std::string results_error(const std::string& text) {
  try {
    eval::parse_coco_results(text, "dets.json", small_mask_gt());
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("coco json: segmentation polygons and RLEs are kept as the file gives them") {
  auto one = [](const std::string& segmentation) {
    return data::parse_coco_json(gt_json(segmentation), "gt.json").annotations.at(0).segmentation;
  };
  const auto polygons = one("[[1, 1, 1, 4, 4, 4, 4, 1], [0.5, 0, 2, 2.5, 3, 0]]");
  REQUIRE(polygons.polygons.size() == 2);
  CHECK(polygons.polygons[1] == std::vector<double>{0.5, 0, 2, 2.5, 3, 0});
  CHECK_FALSE(polygons.rle);
  // A 2-point polygon (4 values) is in COCO's own files: kept.
  CHECK(one("[[26, 31, 50, 31]]").polygons.size() == 1);
  const auto crowd = one(R"({"size": [3, 4], "counts": [2, 5, 5]})");
  REQUIRE(crowd.rle);
  CHECK(crowd.rle->height == 3);
  CHECK(crowd.rle->width == 4);
  CHECK(crowd.rle->counts == std::vector<uint32_t>{2, 5, 5});
  const auto compressed = one(R"({"size": [3, 4], "counts": "255"})");
  CHECK(compressed.rle->compressed == "255");
  CHECK(compressed.rle->counts.empty());
  // None, an empty list, or empty polygons (box-only converters write `[[]]`): no segmentation.
  CHECK(one("[]").empty());
  CHECK(one("[[]]").empty());
  CHECK(one("null").empty());
  CHECK(data::parse_coco_json(R"({"images": [{"id": 1, "file_name": "a.jpg", "width": 6,
      "height": 6}], "annotations": [{"id": 5, "image_id": 1, "category_id": 3,
      "bbox": [1, 1, 3, 3]}]})",
                              "gt.json")
            .annotations.at(0)
            .segmentation.empty());
}

TEST_CASE("coco json: a malformed segmentation names the file and the annotation") {
  CHECK(gt_error("[[1, 1, 1, 4, 4]]") ==
        "gt.json: annotation id 5: \"segmentation\" polygon #0 has 5 values (pairs x, y, at "
        "least 2 points)");
  CHECK(gt_error("[[1, 1, 1, 4, 4, 4], [1, 1]]") ==
        "gt.json: annotation id 5: \"segmentation\" polygon #1 has 2 values (pairs x, y, at "
        "least 2 points)");
  CHECK(gt_error(R"([[1, 1, 1, "4", 4, 4]])") ==
        "gt.json: annotation id 5: \"segmentation\" polygon #0 holds \"4\"");
  CHECK(gt_error("[1, 1, 1, 4, 4, 4]") ==
        "gt.json: annotation id 5: \"segmentation\" polygons must be lists [x1, y1, x2, y2, ...], "
        "got 1");
  CHECK(gt_error("7") ==
        "gt.json: annotation id 5: \"segmentation\" must be a list of polygons or an RLE object, "
        "got 7");
  CHECK(gt_error(R"({"size": [3], "counts": [12]})") ==
        "gt.json: annotation id 5: \"segmentation\" RLE needs \"size\": [height, width] "
        "(non-negative integers)");
  CHECK(gt_error(R"({"size": [3, 4]})") ==
        "gt.json: annotation id 5: \"segmentation\" RLE has no \"counts\"");
  CHECK(gt_error(R"({"size": [3, 4], "counts": [2, 5]})") ==
        "gt.json: annotation id 5: \"segmentation\" RLE counts cover 7 pixels, not 3x4");
  CHECK(gt_error(R"({"size": [3, 4], "counts": [2, -5, 15]})") ==
        "gt.json: annotation id 5: \"segmentation\" RLE count -5 is not a non-negative 32-bit "
        "integer");
  CHECK(gt_error(R"({"size": [3, 4], "counts": "25 5"})") ==
        "gt.json: annotation id 5: \"segmentation\" RLE string holds ' ' (COCO's alphabet is "
        "'0'..'o')");
  CHECK(gt_error(R"({"size": [3, 4], "counts": {}})") ==
        "gt.json: annotation id 5: \"segmentation\" RLE \"counts\" must be a list of run lengths "
        "or a string");
}

TEST_CASE("annToRLE: polygons merged, 4-value polygons as boxes, RLEs in their own size") {
  // Two polygons of one object: their union (9 + 9 pixels, 6 shared).
  data::CocoSegmentation two;
  two.polygons = {{1, 1, 1, 4, 4, 4, 4, 1}, {2, 1, 2, 4, 5, 4, 5, 1}};
  CHECK(eval::rle_area(eval::coco_segmentation_rle(two, 6, 6)) == 12);
  // A first polygon of 4 values: pycocotools' frPyObjects reads every polygon as [x, y, w, h].
  data::CocoSegmentation boxes;
  boxes.polygons = {{1, 1, 3, 3}};
  CHECK(eval::coco_segmentation_rle(boxes, 6, 6).counts ==
        std::vector<uint32_t>{7, 3, 3, 3, 3, 3, 14});
  boxes.polygons.push_back({1, 1, 1, 4, 4, 4});  // pycocotools fails on the mix
  CHECK_THROWS_AS(eval::coco_segmentation_rle(boxes, 6, 6), std::invalid_argument);
  // An uncompressed RLE keeps its own size; a compressed string is decoded.
  data::CocoSegmentation crowd;
  crowd.rle = data::CocoRle{3, 4, {2, 5, 5}, ""};
  const Rle c = eval::coco_segmentation_rle(crowd, 480, 640);
  CHECK(c.height == 3);
  CHECK(c.width == 4);
  CHECK(c.counts == std::vector<uint32_t>{2, 5, 5});
  crowd.rle = data::CocoRle{3, 4, {}, "255"};
  CHECK(eval::coco_segmentation_rle(crowd, 480, 640).counts == std::vector<uint32_t>{2, 5, 5});
  crowd.rle = data::CocoRle{3, 4, {}, "25"};  // 7 of 12 pixels
  CHECK_THROWS_AS(eval::coco_segmentation_rle(crowd, 480, 640), std::invalid_argument);
  CHECK_THROWS_AS(eval::coco_segmentation_rle(data::CocoSegmentation{}, 6, 6),
                  std::invalid_argument);
}

TEST_CASE("mask results: loadRes' box and area rules, and the written form") {
  // With a box in the first entry: every area is the box's (loadRes' bbox branch).
  const auto boxed = eval::parse_coco_results(
      R"([{"image_id": 1, "category_id": 3, "bbox": [0, 0, 5, 5], "score": 0.9,
           "segmentation": {"size": [6, 6], "counts": "733000;"}},
          {"image_id": 1, "category_id": 3, "score": 0.8,
           "segmentation": {"size": [6, 6], "counts": "733000;"}}])",
      "dets.json", small_mask_gt());
  REQUIRE(boxed.size() == 2);
  REQUIRE(boxed[0].segmentation);
  CHECK(boxed[0].segmentation->counts == std::vector<uint32_t>{7, 3, 3, 3, 3, 3, 14});
  CHECK(boxed[0].bbox_xywh == std::array<double, 4>{0, 0, 5, 5});  // as given
  CHECK_FALSE(boxed[0].area_from_mask);
  CHECK(boxed[1].bbox_xywh == std::array<double, 4>{1, 1, 3, 3});  // toBbox of the mask
  CHECK_FALSE(boxed[1].area_from_mask);
  // Without a box in the first entry: areas from the masks (loadRes' segmentation branch).
  // Polygons and uncompressed counts are accepted too (annToRLE in the image's 6 x 6).
  const auto masked = eval::parse_coco_results(
      R"([{"image_id": 1, "category_id": 3, "score": 0.9, "bbox": [],
           "segmentation": [[1, 1, 1, 4, 4, 4, 4, 1]]},
          {"image_id": 1, "category_id": 3, "score": 0.8, "bbox": [0, 0, 2, 2],
           "segmentation": {"size": [6, 6], "counts": [7, 3, 3, 3, 3, 3, 14]}}])",
      "dets.json", small_mask_gt());
  CHECK(masked[0].segmentation->counts == std::vector<uint32_t>{7, 3, 3, 3, 3, 3, 14});
  CHECK(masked[0].bbox_xywh == std::array<double, 4>{1, 1, 3, 3});
  CHECK(masked[0].area_from_mask);
  CHECK(masked[1].area_from_mask);
  CHECK(masked[1].bbox_xywh == std::array<double, 4>{0, 0, 2, 2});

  // Errors name the entry.
  CHECK(results_error(R"([{"image_id": 1, "category_id": 3, "score": 0.9,
                           "segmentation": {"size": [6, 6], "counts": "73"}}])") ==
        "dets.json: detection #0 (image_id 1): \"segmentation\" RLE counts cover 10 pixels, not "
        "6x6");
  CHECK(results_error(R"([{"image_id": 1, "category_id": 3, "score": 0.9,
                           "segmentation": {"size": [6, 6], "counts": "7~"}}])") ==
        "dets.json: detection #0 (image_id 1): \"segmentation\" RLE string holds '~' (COCO's "
        "alphabet is '0'..'o')");
  CHECK(results_error(R"([{"image_id": 1, "category_id": 3, "score": 0.9,
                           "segmentation": []}])") ==
        "dets.json: detection #0 (image_id 1): \"segmentation\" is empty (no polygon or RLE)");
  CHECK(results_error(R"([{"image_id": 9, "category_id": 3, "score": 0.9,
                           "segmentation": {"size": [6, 6], "counts": "733000;"}}])") ==
        "dets.json: detection #0 (image_id 9): unknown image_id 9 (not in the ground truth)");

  // Masks built in memory are checked too.
  eval::Detection bad;
  bad.image_id = 1;
  bad.category_id = 3;
  bad.segmentation = Rle{6, 6, {7, 3}};
  try {
    eval::check_detections({bad}, small_mask_gt(), "detections");
    FAIL("no error");
  } catch (const core::InputError& e) {
    CHECK(std::string(e.what()) ==
          "detections: detection #0 (image_id 1): segmentation counts cover 10 pixels, not 6x6");
  }

  // Written as {"size": [h, w], "counts": "..."}; the string's backslash (92) is escaped.
  eval::Detection d;
  d.image_id = 1;
  d.category_id = 3;
  d.bbox_xywh = {1, 1, 3, 3};
  d.score = 0.5;
  d.segmentation = Rle{6, 6, {7, 3, 3, 3, 3, 3, 14}};
  eval::Detection slash = d;
  slash.segmentation = Rle{10, 10, {44, 56}};  // 44 = 12 + 32 -> '\\' (92), '1'; 56 -> 'h1'
  CHECK(eval::rle_to_string(*slash.segmentation) == "\\1h1");
  const std::string text = eval::format_coco_results({d, slash});
  CHECK(text.find(R"("score": 0.50000, "segmentation": {"size": [6, 6], "counts": "733000;"}})") !=
        std::string::npos);
  CHECK(text.find(R"("counts": "\\1h1")") != std::string::npos);
  const auto back = eval::parse_coco_results(text, "written.json", small_mask_gt());
  REQUIRE(back.size() == 2);
  CHECK(back[0].segmentation->counts == d.segmentation->counts);
  CHECK(back[1].segmentation->counts == slash.segmentation->counts);
}
