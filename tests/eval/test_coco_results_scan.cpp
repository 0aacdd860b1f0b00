// The fast results-entry scanner (eval/coco_results_scan.h): what it reads, what it leaves to the
// general reader, and that its numbers are the general reader's doubles to the bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "eval/coco_results_scan.h"

using trainer::eval::scan_results_entry;
using trainer::eval::ScannedEntry;

TEST_CASE("results scan: the common mask entry, escapes resolved, other keys skipped") {
  ScannedEntry e;
  REQUIRE(scan_results_entry(
      R"( {"image_id": 42, "category_id": 18, "bbox": [1.5, -2e1, 3.25, 0],
           "score": 0.875, "file_name": "a \"b\".jpg", "extra": {"x": [1, null, true, false, {}]},
           "segmentation": {"size": [6, 6], "counts": "73\\3000;", "note": []}} )",
      &e));
  CHECK(e.image_id == 42);
  CHECK(e.category_id == 18);
  CHECK(e.bbox_values == 4);
  CHECK(e.bbox == std::array<double, 4>{1.5, -20, 3.25, 0});
  CHECK(e.score == 0.875);
  CHECK(e.has_score);
  CHECK(e.has_segmentation);
  CHECK(e.height == 6);
  CHECK(e.width == 6);
  CHECK(e.counts == "73\\3000;");
  // A box result, and "bbox": [] beside a mask.
  REQUIRE(scan_results_entry(
      R"({"image_id": 1, "category_id": 2, "bbox": [0, 0, 1, 1], "score": 1})", &e));
  CHECK_FALSE(e.has_segmentation);
  CHECK(e.counts.empty());
  REQUIRE(scan_results_entry(
      R"({"image_id": 1, "category_id": 2, "bbox": [], "score": 1,
          "segmentation": {"counts": "6", "size": [2, 3]}})",
      &e));
  CHECK(e.bbox_values == 0);
  CHECK(e.width == 3);
}

TEST_CASE("results scan: anything else goes to the general reader") {
  ScannedEntry e;
  for (const char* entry : {
           R"([1, 2])",  // not an object
           R"({"image_id": 7.0, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1})",  // float id
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1], "score": 1})",       // 3 values
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": NaN})",
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": "1"})",
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 01], "score": 1})",  // 01
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1.], "score": 1})",  // 1.
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1e999], "score": 1})",
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1,})",  // comma
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1} x)",
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1] "score": 1})",
           R"({"image_id": 1, "category_id": 1, "keypoints": [1, 2, 2], "score": 1})",
           R"({"image_id": 1, "category_id": 1, "rbox": [5, 5, 2, 1, 0], "score": 1})",
           R"({"image_id": 1, "category_id": 1, "score": 1, "segmentation": [[1, 1, 4, 1, 4, 4]]})",
           R"({"image_id": 1, "category_id": 1, "score": 1,
               "segmentation": {"size": [2, 3], "counts": [6]}})",
           R"({"image_id": 1, "category_id": 1, "score": 1,
               "segmentation": {"size": [-2, 3], "counts": "6"}})",
           R"({"image_id": 1, "category_id": 1, "score": 1,
               "segmentation": {"size": [2, 3], "counts": "6\u0030"}})",
           R"({"image_id": 1, "category_id": 1, "score": 1, "segmentation": {"size": [2, 3]}})",
           "{\"image_id\": 1, \"category_id\": 1, \"bbox\": [0, 0, 1, 1], \"score\": 1, \"n\": "
           "\"\xc3\xa9\"}",  // UTF-8
           R"({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1, "n": "a)",
           R"({"category_id": 1, "bbox": [0, 0, 1, 1], "score": 1})",  // no image_id
       }) {
    CAPTURE(entry);
    CHECK_FALSE(scan_results_entry(entry, &e));
  }
}

TEST_CASE("results scan: numbers are the general reader's doubles, bit for bit") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> value(-1e4, 1e4);
  std::uniform_int_distribution<int> digits(1, 17), exponent(-30, 30);
  ScannedEntry e;
  for (int i = 0; i < 2000; ++i) {
    char text[64];
    if (i % 3 == 0) {
      std::snprintf(text, sizeof(text), "%.*g", digits(rng), value(rng));
    } else if (i % 3 == 1) {
      std::snprintf(text, sizeof(text), "%.*e", digits(rng),
                    value(rng) * std::pow(10.0, exponent(rng)));
    } else {
      std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(rng() >> (i % 60)));
    }
    const std::string entry = std::string(R"({"image_id": 1, "category_id": 1, "bbox": [)") + text +
                              ", 0, 0, 0], \"score\": " + text + "}";
    CAPTURE(entry);
    REQUIRE(scan_results_entry(entry, &e));
    const auto j = nlohmann::json::parse(entry);
    CHECK(e.bbox[0] == j["bbox"][0].get<double>());
    CHECK(e.score == j["score"].get<double>());
  }
}
