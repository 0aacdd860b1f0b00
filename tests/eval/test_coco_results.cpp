// The COCO results reader (eval/coco_results.h): accepted forms and entry-level errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "data/coco_json.h"
#include "eval/coco_results.h"
#include "test_support.h"

using namespace trainer;

namespace {

data::CocoFile small_gt() {
  return data::parse_coco_json(
      R"({"images": [{"id": 42, "file_name": "a.jpg", "width": 10, "height": 10},
                     {"id": 7, "file_name": "b.jpg", "width": 10, "height": 10}],
          "categories": [{"id": 1, "name": "person"}, {"id": 18, "name": "dog"}],
          "annotations": []})",
      "gt.json");
}

std::string parse_error(const std::string& text) {
  try {
    eval::parse_coco_results(text, "dets.json", small_gt());
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("results are read in file order with ids, boxes and scores") {
  const auto dets = eval::parse_coco_results(
      R"([{"image_id": 42, "category_id": 18, "bbox": [1.5, 2, 3.25, 4], "score": 0.875},
          {"image_id": 7.0, "category_id": 1, "bbox": [0, 0, 0, 0], "score": 0, "extra": [1]}])",
      "dets.json", small_gt());
  REQUIRE(dets.size() == 2);
  CHECK(dets[0].image_id == 42);
  CHECK(dets[0].category_id == 18);
  CHECK(dets[0].bbox_xywh == std::array<double, 4>{1.5, 2, 3.25, 4});
  CHECK(dets[0].score == 0.875);
  CHECK(dets[1].image_id == 7);
  CHECK(dets[1].bbox_xywh[2] == 0.0);  // zero sizes are allowed
  CHECK(eval::parse_coco_results("[]", "dets.json", small_gt()).empty());
}

TEST_CASE("bad results name the file and the entry") {
  CHECK(parse_error("[{]").find("dets.json: malformed json") == 0);
  CHECK(parse_error(R"({"image_id": 42})") ==
        "dets.json: the top level is not a list of detections (COCO results form)");
  CHECK(parse_error(R"([3])") == "dets.json: detection #0 is not an object");
  CHECK(parse_error(R"([{"category_id": 1, "bbox": [0, 0, 1, 1], "score": 1}])") ==
        "dets.json: detection #0 has no \"image_id\"");
  const std::string ok =
      R"({"image_id": 42, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5})";
  CHECK(
      parse_error("[" + ok +
                  R"(, {"image_id": 43, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}])") ==
      "dets.json: detection #1 (image_id 43): unknown image_id 43 (not in the ground truth)");
  CHECK(parse_error(R"([{"image_id": 7, "category_id": 2, "bbox": [0, 0, 1, 1], "score": 0.5}])") ==
        "dets.json: detection #0 (image_id 7): unknown category_id 2 (not in the ground truth)");
  // Python's json.dump writes NaN as a bare token; it is reported, not a parse error.
  CHECK(
      parse_error("[" + ok +
                  R"(, {"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 1], "score": NaN}])") ==
      "dets.json: detection #1 (image_id 7): score is NaN");
  CHECK(parse_error(
            R"([{"image_id": 7, "category_id": 1, "bbox": [0, 0, -Infinity, 1], "score": 1}])") ==
        "dets.json: detection #0 (image_id 7): a bbox value is -Infinity");
  // A negative size is an inverted box (the reference writes YOLO26's as they come); pycocotools
  // scores it as given, and so do we (the "inverted" set of test_pycocotools).
  CHECK(parse_error(R"([{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, -2], "score": 1}])") ==
        "(no error)");
  CHECK(parse_error(R"([{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1], "score": 1}])") ==
        "dets.json: detection #0 (image_id 7): \"bbox\" must be [x, y, w, h], got [0,0,1]");
  CHECK(parse_error(
            R"([{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 1], "score": "high"}])") ==
        "dets.json: detection #0 (image_id 7): score is high");
  CHECK(parse_error(R"([{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 1]}])") ==
        "dets.json: detection #0 (image_id 7) has no \"score\"");
  CHECK(parse_error(R"([{"image_id": 7.5, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1}])") ==
        "dets.json: detection #0: \"image_id\" must be an integer, got 7.5");
  // Found by the fuzzer (tests/fuzz/regressions/coco_results): a number beyond double's range was
  // an exception escaping the reader, an id beyond int64's range an undefined cast.
  CHECK(parse_error(R"([{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 1e999], "score": 1}])")
            .find("dets.json: malformed json") == 0);
  for (const char* id : {"1e30", "-1e30", "18446744073709551615"}) {
    CAPTURE(id);
    CHECK(parse_error(std::string(R"([{"image_id": )") + id +
                      R"(, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1}])")
              .find("\"image_id\" must be an integer") != std::string::npos);
  }
  // "NaN" inside a string is left alone.
  CHECK(
      parse_error(
          R"([{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1, "note": "NaN"}])") ==
      "(no error)");
}

TEST_CASE("a missing results file is reported with its path") {
  test::TempDir dir;
  CHECK_THROWS_WITH(eval::read_coco_results(dir / "none.json", small_gt()),
                    doctest::Contains("none.json: cannot open results file"));
}

TEST_CASE("format_coco_results rounds like the reference and reads back") {
  const std::vector<eval::Detection> dets = {{42, 18, {1.23456, 2.0, 3.0006, 4.9999}, 0.123456789},
                                             {7, 1, {0, 0, 10, 10}, 1.0}};
  const std::string text = eval::format_coco_results(dets);
  CHECK(
      text.find(
          R"({"image_id": 42, "category_id": 18, "bbox": [1.235, 2.000, 3.001, 5.000], "score": 0.12346})") !=
      std::string::npos);
  const auto back = eval::parse_coco_results(text, "dets.json", small_gt());
  REQUIRE(back.size() == 2);
  CHECK(back[0].bbox_xywh[0] == 1.235);
  CHECK(back[0].score == 0.12346);
  CHECK(back[1].bbox_xywh[3] == 10.0);
  CHECK(eval::format_coco_results({}) == "[]\n");
}

TEST_CASE("format_coco_results writes keypoints unrounded after the score") {
  std::vector<eval::Detection> dets = {{42, 1, {1, 2, 3, 4}, 0.5, {10.125, 20.5, 0.75}}};
  const std::string text = eval::format_coco_results(dets);
  CHECK(text.find(R"("score": 0.50000, "keypoints": [10.125, 20.5, 0.75]})") != std::string::npos);
  const auto back = eval::parse_coco_results(text, "dets.json", small_gt());
  REQUIRE(back.size() == 1);
  CHECK(back[0].keypoints == std::vector<double>{10.125, 20.5, 0.75});
}

TEST_CASE(
    "format_coco_results writes file_name only when asked (predict), as the reference's val does "
    "not") {
  std::vector<eval::Detection> dets = {{42, 1, {1, 2, 3, 4}, 0.5}};
  dets[0].file_name = "clip_3";
  CHECK(eval::format_coco_results(dets).find("file_name") == std::string::npos);
  const std::string text = eval::format_coco_results(dets, {/*file_name=*/true});
  CHECK(text.find(R"("score": 0.50000, "file_name": "clip_3"})") != std::string::npos);
  CHECK(eval::parse_coco_results(text, "dets.json", small_gt()).size() == 1);  // still readable
  // An OBB entry has it once, where the reference's OBB json puts it.
  dets[0].rbox = {5, 5, 2, 2, 0};
  dets[0].poly = {4, 4, 6, 4, 6, 6, 4, 6};
  const std::string obb = eval::format_coco_results(dets, {true});
  CHECK(obb.find("file_name") == obb.rfind("file_name"));
}

TEST_CASE("large results files (read on several threads) report the same first error") {
  const data::CocoFile gt = small_gt();
  const auto file = [](size_t bad_at, const std::string& bad, size_t bad2_at,
                       const std::string& bad2) {
    std::string text = "[";
    for (size_t i = 0; i < 6000; ++i) {
      text += i ? ",\n" : "";
      text += i == bad_at ? bad
              : i == bad2_at
                  ? bad2
                  : R"({"image_id": 42, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5})";
    }
    return text + "]";
  };
  const auto error = [&](const std::string& text) {
    try {
      const auto dets = eval::parse_coco_results(text, "big.json", gt);
      CHECK(dets.size() == 6000);
    } catch (const core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string unknown =
      R"({"image_id": 5, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1})";
  CHECK(error(file(7000, "", 7000, "")) == "(no error)");
  // The first bad entry in file order, wherever the threads reach first.
  CHECK(error(file(5000, unknown, 100, unknown)) ==
        "big.json: detection #100 (image_id 5): unknown image_id 5 (not in the ground truth)");
  // Malformed json anywhere comes before any entry's error, as the whole-document reader says.
  CHECK(error(file(10, unknown, 4500, "{\"image_id\": }")).find("big.json: malformed json") == 0);
}
