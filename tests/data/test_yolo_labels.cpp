// YOLO label parsing and the image/label path rules, with every bad-line message.
#include <doctest/doctest.h>

#include "data/image_files.h"
#include "data/yolo_labels.h"

using doctest::Approx;
using trainer::data::parse_yolo_labels;

TEST_CASE("yolo labels: boxes and classes as written") {
  auto p = parse_yolo_labels("45 0.479492 0.688771 0.955609 0.5955\n\n  3 0.1 0.2 0.3 0.4  \n",
                             "a.txt", 80);
  CHECK_FALSE(p.error);
  REQUIRE(p.boxes.size() == 2);
  CHECK(p.classes[0] == 45);
  CHECK(p.boxes[0][0] == Approx(0.479492));
  CHECK(p.boxes[0][3] == Approx(0.5955));
  CHECK(p.classes[1] == 3);
  CHECK(p.boxes[1][2] == Approx(0.3));
}

TEST_CASE("yolo labels: duplicates removed, polygons boxed, small negatives clipped") {
  auto p =
      parse_yolo_labels("1 0.5 0.5 0.2 0.2\n1 0.5 0.5 0.2 0.2\n2 0.5 0.5 0.2 0.2\n", "d.txt", 3);
  CHECK(p.duplicates == 1);
  CHECK(p.boxes.size() == 2);
  // Polygon (0.1, 0.2) (0.5, 0.2) (0.3, 0.6): box x 0.1..0.5, y 0.2..0.6 -> (0.3, 0.4, 0.4, 0.4).
  p = parse_yolo_labels("0 0.1 0.2 0.5 0.2 0.3 0.6\n", "poly.txt", 1);
  REQUIRE(p.boxes.size() == 1);
  CHECK(p.boxes[0][0] == Approx(0.3));
  CHECK(p.boxes[0][1] == Approx(0.4));
  CHECK(p.boxes[0][2] == Approx(0.4));
  CHECK(p.boxes[0][3] == Approx(0.4));
  p = parse_yolo_labels("0 -0.005 0.5 0.2 0.2\n", "neg.txt", 1);
  CHECK_FALSE(p.error);
  CHECK(p.boxes[0][0] == 0.0f);
  // 8.4.190 tolerates coordinates up to 1.01 (kept as written).
  p = parse_yolo_labels("0 0.5 1.005 0.2 0.2\n", "edge.txt", 1);
  CHECK_FALSE(p.error);
  CHECK(p.boxes[0][1] == 1.005f);
}

TEST_CASE("yolo labels: keypoints as (x, y, v) per box, with the reference's 2-value rule") {
  // kpt_shape [2, 3]: visibilities as written.
  auto p = parse_yolo_labels("0 0.5 0.5 0.2 0.2 0.1 0.15 2 0.2 0.25 0\n", "kpt.txt", 1, {2, 3});
  REQUIRE_FALSE(p.error);
  CHECK(p.boxes[0][3] == Approx(0.2));
  CHECK(p.keypoints == std::vector<float>{0.1f, 0.15f, 2.0f, 0.2f, 0.25f, 0.0f});
  // kpt_shape [3, 2]: v = 0 where x or y is negative (down to -0.01), else 1; values kept as
  // written (the augmentations clip).
  p = parse_yolo_labels("0 0.5 0.5 0.2 0.2 0.3 0.4 -0.005 0.5 0.0 0.0\n", "k2.txt", 1, {3, 2});
  REQUIRE_FALSE(p.error);
  CHECK(p.keypoints == std::vector<float>{0.3f, 0.4f, 1.0f, -0.005f, 0.5f, 0.0f, 0.0f, 0.0f, 1.0f});
  // Rows that differ only in their keypoints are not duplicates; identical rows are.
  p = parse_yolo_labels(
      "0 0.5 0.5 0.2 0.2 0.1 0.1 2\n0 0.5 0.5 0.2 0.2 0.1 0.2 2\n0 0.5 0.5 0.2 0.2 0.1 0.1 2\n",
      "dup.txt", 1, {1, 3});
  CHECK(p.duplicates == 1);
  CHECK(p.keypoints == std::vector<float>{0.1f, 0.1f, 2.0f, 0.1f, 0.2f, 2.0f});
}

TEST_CASE("yolo labels: each bad keypoint row names file, line and point") {
  auto err = [](const std::string& text, trainer::data::KeypointShape shape) {
    auto p = parse_yolo_labels(text, "pose.txt", 1, shape);
    CHECK(p.boxes.empty());
    CHECK(p.keypoints.empty());
    return p.error.value_or("");
  };
  CHECK(err("0 0.5 0.5 0.2 0.2 0.1 0.1\n", {1, 3}) ==
        "pose.txt:1: expected 8 values (class cx cy w h + 1 x 3 keypoint values), got 7");
  CHECK(err("0 0.5 0.5 0.2 0.2 0.1 0.1 3\n", {1, 3}) ==
        "pose.txt:1: keypoint 1 visibility '3' is not 0, 1 or 2");
  CHECK(err("0 0.5 0.5 0.2 0.2 0.1 0.1 0.5\n", {1, 3}) ==
        "pose.txt:1: keypoint 1 visibility '0.5' is not 0, 1 or 2");
  CHECK(err("0 0.5 0.5 0.2 0.2 0.1 0.1 2 1.2 0.1 2\n", {2, 3}) ==
        "pose.txt:1: keypoint 2 (1.2, 0.1) is outside [-0.01, 1.01] (not normalised?)");
  CHECK(err("0 0.5 0.5 0.2 0.2 0.1 -0.3\n", {1, 2}) ==
        "pose.txt:1: keypoint 1 (0.1, -0.3) is outside [-0.01, 1.01] (not normalised?)");
  CHECK(err("0 0.5 0.5 0.2 0.2 nan 0.1 2\n", {1, 3}) ==
        "pose.txt:1: value 6 is not a number: 'nan'");
  // A polygon line is no pose row.
  CHECK(err("0 0.1 0.2 0.5 0.2 0.3 0.6 0.4 0.4\n", {1, 3}) ==
        "pose.txt:1: expected 8 values (class cx cy w h + 1 x 3 keypoint values), got 9");
}

TEST_CASE("yolo labels: each bad line names file and line") {
  auto err = [](const std::string& text, int nc = 80) {
    auto p = parse_yolo_labels(text, "lbl.txt", nc);
    CHECK(p.boxes.empty());
    return p.error.value_or("");
  };
  CHECK(err("0 0.5 0.5 0.2 0.2\n0 0.5 0.5 0.2\n") ==
        "lbl.txt:2: expected 5 values (class cx cy w h), got 4");
  CHECK(err("0 0.5 abc 0.2 0.2\n") == "lbl.txt:1: value 3 is not a number: 'abc'");
  CHECK(err("0 0.5 1.5 0.2 0.2\n") ==
        "lbl.txt:1: coordinate 1.5 is outside [-0.01, 1.01] (not normalised?)");
  CHECK(err("0 0.5 1.02 0.2 0.2\n") ==
        "lbl.txt:1: coordinate 1.02 is outside [-0.01, 1.01] (not normalised?)");
  CHECK(err("0 0.5 -0.2 0.2 0.2\n") ==
        "lbl.txt:1: coordinate -0.2 is outside [-0.01, 1.01] (not normalised?)");
  CHECK(err("80 0.5 0.5 0.2 0.2\n") ==
        "lbl.txt:1: class 80 exceeds the dataset's 80 classes (0..79)");
  CHECK(err("-1 0.5 0.5 0.2 0.2\n") == "lbl.txt:1: class '-1' is not a non-negative integer");
  CHECK(err("1.5 0.5 0.5 0.2 0.2\n") == "lbl.txt:1: class '1.5' is not a non-negative integer");
  CHECK(err("0 0.5 nan 0.2 0.2\n") == "lbl.txt:1: value 3 is not a number: 'nan'");
  CHECK(err("0 0.5 0.5 0.2 0.2 0.1\n") == "lbl.txt:1: expected 5 values (class cx cy w h), got 6");
}

TEST_CASE("yolo labels: an empty file has no boxes and no error") {
  auto p = parse_yolo_labels("", "e.txt", 80);
  CHECK_FALSE(p.error);
  CHECK(p.boxes.empty());
  p = parse_yolo_labels("\n \n", "e.txt", 80);
  CHECK_FALSE(p.error);
}

TEST_CASE("image files: the images -> labels rule replaces the last /images/") {
  using trainer::data::label_path_for_image;
  CHECK(label_path_for_image("/d/coco/images/train2017/0001.jpg") ==
        "/d/coco/labels/train2017/0001.txt");
  CHECK(label_path_for_image("/images/x/images/a.b.png") == "/images/x/labels/a.b.txt");
  CHECK(label_path_for_image("/data/pics/a.jpg") == "/data/pics/a.txt");
  CHECK(trainer::data::has_image_suffix("A.JPG"));
  CHECK_FALSE(trainer::data::has_image_suffix("a.txt"));
}

TEST_CASE("yolo labels: a byte-order mark is dropped, hexadecimal floats are refused") {
  auto p = parse_yolo_labels(
      "\xEF\xBB\xBF"
      "1 0.5 0.5 0.2 0.2\n",
      "bom.txt", 2);
  CHECK_FALSE(p.error);
  REQUIRE(p.classes.size() == 1);
  CHECK(p.classes[0] == 1);
  p = parse_yolo_labels("0 0x1p-1 0.5 0.2 0.2\n", "hex.txt", 1);
  REQUIRE(p.error);
  CHECK(*p.error ==
        "hex.txt:1: value 2 is not a number: '0x1p-1' (hexadecimal floats are not label values)");
  CHECK(parse_yolo_labels("0X1 0.5 0.5 0.2 0.2\n", "hex.txt", 2).error);
  // A mark in the middle of a file is not a byte-order mark.
  CHECK(parse_yolo_labels("0 0.5 0.5 0.2 0.2\n\xEF\xBB\xBF"
                          "0 0.1 0.1 0.1 0.1\n",
                          "mid.txt", 1)
            .error);
}

TEST_CASE(
    "yolo labels: box and polygon rows mixed are each read as what they are, with a warning") {
  // Line 1 a box, line 3 the polygon (0.1, 0.2) (0.5, 0.2) (0.3, 0.6): its box (0.3, 0.4, 0.4,
  // 0.4).
  auto p = parse_yolo_labels("0 0.5 0.5 0.2 0.2\n\n1 0.1 0.2 0.5 0.2 0.3 0.6\n", "mix.txt", 2);
  CHECK_FALSE(p.error);
  REQUIRE(p.boxes.size() == 2);
  CHECK(p.boxes[0][2] == Approx(0.2));
  CHECK(p.boxes[1][0] == Approx(0.3));
  CHECK(p.boxes[1][2] == Approx(0.4));
  REQUIRE(p.warning);
  CHECK(*p.warning ==
        "mix.txt:3: box rows (5 values, first at line 1) and polygon rows (first at line 3) are "
        "mixed; each row is read as what it is: a box as its box, a polygon as its enclosing box");
  CHECK_FALSE(parse_yolo_labels("0 0.5 0.5 0.2 0.2\n1 0.1 0.1 0.2 0.2\n", "boxes.txt", 2).warning);
  CHECK_FALSE(parse_yolo_labels("0 0.1 0.2 0.5 0.2 0.3 0.6\n", "poly.txt", 1).warning);
}
