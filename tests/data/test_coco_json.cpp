// COCO json reader: fields, the 91<->80 map, and each bad-input message.
#include <doctest/doctest.h>

#include "core/error.h"
#include "data/coco_dataset.h"
#include "data/coco_json.h"
#include "test_support.h"

using trainer::data::parse_coco_json;

namespace {
const char* kSmall = R"({
  "images": [{"id": 7, "file_name": "a.jpg", "width": 640, "height": 480}],
  "categories": [{"id": 1, "name": "person"}, {"id": 90, "name": "toothbrush"}],
  "annotations": [
    {"id": 1, "image_id": 7, "category_id": 1, "bbox": [10, 20, 30, 40], "area": 900.5, "iscrowd": 0},
    {"id": 2, "image_id": 7, "category_id": 90, "bbox": [0, 0, 5, 5], "iscrowd": 1}
  ]})";

std::string error_of(const std::string& text) {
  try {
    parse_coco_json(text, "x.json");
  } catch (const trainer::core::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("coco json: fields are read as stored") {
  auto coco = parse_coco_json(kSmall, "small.json");
  REQUIRE(coco.images.size() == 1);
  CHECK(coco.images[0].id == 7);
  CHECK(coco.images[0].width == 640);
  REQUIRE(coco.annotations.size() == 2);
  CHECK(coco.annotations[0].bbox[3] == 40.0);
  CHECK(coco.annotations[0].area == 900.5);
  CHECK_FALSE(coco.annotations[0].iscrowd);
  CHECK(coco.annotations[1].iscrowd);
  CHECK(coco.annotations[1].area == 25.0);  // no "area": w*h = 5*5
  CHECK(coco.categories[1].name == "toothbrush");
}

TEST_CASE("coco json: an image without a size reads as 0, to be taken from its file") {
  const auto coco = trainer::data::parse_coco_json(
      R"({"images": [{"id": 1, "file_name": "a.jpg", "width": 0, "height": 5},
                     {"id": 2, "file_name": "b.jpg"},
                     {"id": 3, "file_name": "c.jpg", "width": null, "height": -4}]})",
      "t.json");
  REQUIRE(coco.images.size() == 3);
  CHECK(coco.images[0].width == 0);
  CHECK(coco.images[0].height == 5);
  CHECK(coco.images[1].width == 0);
  CHECK(coco.images[1].height == 0);
  CHECK(coco.images[2].width == 0);
  CHECK(coco.images[2].height == 0);
  CHECK(error_of(R"({"images": [{"id": 1, "file_name": "a", "width": "wide", "height": 1}]})")
            .find("\"width\" must be an integer") != std::string::npos);
}

TEST_CASE(
    "coco json: a malformed file's message is ours, with line and column, not the library's") {
  const std::string cut = error_of(R"({"images": [{"id": 1, "file_na)");
  CHECK(cut.find("x.json: malformed json at line 1, column ") != std::string::npos);
  CHECK(cut.find("(the file ends there: is it cut short?)") != std::string::npos);
  CHECK(cut.find("json.exception") == std::string::npos);
  CHECK(cut.find("parse error") == std::string::npos);
  const std::string middle = error_of("{\"images\": [}, 1]}");
  CHECK(middle.find("malformed json at line 1, column 13") != std::string::npos);
  CHECK(middle.find("cut short") == std::string::npos);
  CHECK(error_of("") == "x.json: the file is empty (a json document was expected)");
}

TEST_CASE("coco json: the 91 to 80 category map and its inverse") {
  const auto& ids = trainer::data::coco80_to_coco91();
  CHECK(ids[0] == 1);
  CHECK(ids[11] == 13);  // 12 is skipped
  CHECK(ids[79] == 90);
  for (int c = 0; c < 80; ++c) CHECK(trainer::data::coco91_to_coco80(ids[c]) == c);
  CHECK(trainer::data::coco91_to_coco80(12) == -1);
  CHECK(trainer::data::coco91_to_coco80(83) == -1);
}

TEST_CASE("coco json: bad input names the entry") {
  CHECK(error_of("{").find("malformed json") != std::string::npos);
  // A number beyond double's range (fuzz finding: the exception escaped the reader).
  CHECK(error_of(R"({"images": [], "x": 1e999})").find("malformed json") != std::string::npos);
  CHECK(error_of(R"({"images": [{"id": 1, "file_name": "a", "width": 1, "height": 1},
                                {"id": 1, "file_name": "b", "width": 1, "height": 1}]})")
            .find("duplicate image id 1") != std::string::npos);
  CHECK(error_of(R"({"images": [], "annotations": [{"id": 3, "image_id": 5, "category_id": 1,
                    "bbox": [0,0,1,1]}]})")
            .find("annotation id 3: unknown image_id 5") != std::string::npos);
  CHECK(error_of(R"({"images": [{"id": 1, "file_name": "a", "width": 1, "height": 1}],
                    "annotations": [{"id": 3, "image_id": 1, "category_id": 1, "bbox": [0,0,-1,1]}]})")
            .find("negative box size") != std::string::npos);
  CHECK(error_of(R"({"images": [{"id": 1, "width": 1, "height": 1}]})")
            .find("image id 1 has no \"file_name\"") != std::string::npos);
  CHECK(error_of(R"({"images": [{"id": 1, "file_name": "a", "width": 1, "height": 1}],
                    "categories": [{"id": 1}],
                    "annotations": [{"id": 3, "image_id": 1, "category_id": 2, "bbox": [0,0,1,1]}]})")
            .find("unknown category_id 2") != std::string::npos);
  // Ids out of int64's range are refused with the entry named (was undefined behaviour).
  for (const char* id : {"1e30", "-1e30", "18446744073709551615", "1.5"}) {
    CAPTURE(id);
    CHECK(error_of(std::string(R"({"images": [{"id": )") + id +
                   R"(, "file_name": "a", "width": 1, "height": 1}]})")
              .find("\"id\" must be an integer") != std::string::npos);
  }
  CHECK(error_of(R"({"images": [{"id": 9223372036854775807, "file_name": "a", "width": 1,
                    "height": 1}]})")
            .empty());
}

TEST_CASE("coco json: reads coco128's instances file") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(root, "coco128");
  auto coco = trainer::data::read_coco_json(*root / "annotations/instances_train2017.json");
  CHECK(coco.images.size() == 128);
  CHECK(coco.categories.size() == 80);
  CHECK(coco.annotations.size() > 900);
}

TEST_CASE("coco json: person keypoints become pose labels, bad ones are skipped with the id") {
  // Image 100 x 50, two keypoints per person: normalised as x / 100, y / 50, visibility kept.
  const char* text = R"({
    "images": [{"id": 1, "file_name": "p.jpg", "width": 100, "height": 50}],
    "categories": [{"id": 1, "name": "person"}],
    "annotations": [
      {"id": 10, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20],
       "keypoints": [20, 15, 2, 0, 0, 0], "num_keypoints": 1},
      {"id": 11, "image_id": 1, "category_id": 1, "bbox": [50, 10, 20, 20]},
      {"id": 12, "image_id": 1, "category_id": 1, "bbox": [70, 10, 20, 20],
       "keypoints": [1, 2, 2]},
      {"id": 13, "image_id": 1, "category_id": 1, "bbox": [5, 5, 20, 20],
       "keypoints": [1, 2, 3, 4, 5, 1]}
    ]})";
  const auto coco = parse_coco_json(text, "kp.json");
  trainer::data::DatasetStats stats;
  const auto items = trainer::data::coco_to_labels(coco, "/images", 1, stats, 2);
  REQUIRE(items.size() == 1);
  REQUIRE(items[0].boxes.size() == 2);  // ids 12 (3 values) and 13 (visibility 3) skipped
  const std::vector<float> expected = {0.2f, 0.3f, 2, 0, 0, 0,   // id 10
                                       0,    0,    0, 0, 0, 0};  // id 11: no keypoints
  CHECK(items[0].keypoints == expected);
  REQUIRE(stats.problems.size() == 2);
  CHECK(stats.problems[0].find("annotation id 12: 3 keypoint values, kpt_shape needs 6") !=
        std::string::npos);
  CHECK(stats.problems[1].find("annotation id 13") != std::string::npos);
  // Read for detection, the same file has no keypoints.
  trainer::data::DatasetStats box_stats;
  const auto boxes = trainer::data::coco_to_labels(coco, "/images", 1, box_stats);
  CHECK(boxes[0].boxes.size() == 4);
  CHECK(boxes[0].keypoints.empty());
}
