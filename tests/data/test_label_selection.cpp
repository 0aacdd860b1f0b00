// fraction, classes and single_cls on a parsed split: hand-built labels, hand-counted results.
#include <doctest/doctest.h>

#include "core/error.h"
#include "data/label_selection.h"

using namespace trainer::data;
using trainer::core::ConfigError;

namespace {

ImageLabels image(const char* name, std::vector<int> classes) {
  ImageLabels item;
  item.image = name;
  for (size_t j = 0; j < classes.size(); ++j) {
    item.classes.push_back(classes[j]);
    const float c = 0.1f * static_cast<float>(j + 1);
    item.boxes.push_back({c, c, 0.1f, 0.1f});
  }
  return item;
}

DatasetIndex three_images() {
  DatasetIndex split;
  split.names = {"person", "bicycle", "car"};
  split.items = {image("a.jpg", {0, 2, 1}), image("b.jpg", {1}), image("c.jpg", {2, 2})};
  split.stats.images = 3;
  split.stats.boxes = 6;
  return split;
}

}  // namespace

TEST_CASE("classes keeps only the listed classes, images left without labels become backgrounds") {
  auto split = three_images();
  select_labels(split, {{0, 2}, false});
  CHECK(split.items[0].classes == std::vector<int>{0, 2});
  // The kept boxes are the first and second of a.jpg, in their order.
  CHECK(split.items[0].boxes[0][0] == doctest::Approx(0.1));
  CHECK(split.items[0].boxes[1][0] == doctest::Approx(0.2));
  CHECK(split.items[1].classes.empty());
  CHECK(split.items[1].boxes.empty());
  CHECK(split.items[2].classes == std::vector<int>{2, 2});
  CHECK(split.stats.boxes == 4);
  CHECK(split.stats.backgrounds == 1);
  CHECK(split.names.size() == 3);  // the reference keeps nc: class ids are not renumbered
}

TEST_CASE("single_cls makes every label class 0 of one class named item") {
  auto split = three_images();
  select_labels(split, {{}, true});
  CHECK(split.items[0].classes == std::vector<int>{0, 0, 0});
  CHECK(split.items[2].classes == std::vector<int>{0, 0});
  CHECK(split.names == std::vector<std::string>{"item"});
  CHECK(split.nc() == 1);
  CHECK(split.stats.boxes == 6);
}

TEST_CASE("classes then single_cls, keypoints and crowd boxes follow their boxes") {
  auto split = three_images();
  split.keypoints_per_box = 1;
  split.items[0].keypoints = {1, 1, 2, 2, 2, 2, 3, 3, 2};  // one point per box: x = y = box number
  split.items[1].keypoints = {4, 4, 2};
  split.items[2].keypoints = {5, 5, 2, 6, 6, 1};
  split.items[1].crowd_classes = {1, 2};
  split.items[1].crowd_boxes = {NormBox{0.5f, 0.5f, 0.2f, 0.2f}, NormBox{0.6f, 0.6f, 0.2f, 0.2f}};
  select_labels(split, {{2, 1}, true});
  CHECK(split.items[0].classes == std::vector<int>{0, 0});
  CHECK(split.items[0].keypoints == std::vector<float>{2, 2, 2, 3, 3, 2});
  CHECK(split.items[1].keypoints == std::vector<float>{4, 4, 2});
  CHECK(split.items[1].crowd_classes == std::vector<int>{0, 0});
  CHECK(split.stats.crowd == 2);
  CHECK(split.stats.boxes == 5);
}

TEST_CASE("parse_class_list reads N and [i, j] and refuses classes the dataset does not have") {
  CHECK(parse_class_list("", 80).empty());
  CHECK(parse_class_list("3", 80) == std::vector<int>{3});
  CHECK(parse_class_list("[0, 2, 2, 5]", 80) == std::vector<int>{0, 2, 5});
  CHECK_THROWS_WITH_AS(parse_class_list("[0, 80]", 80),
                       doctest::Contains("class 80 does not exist (the dataset has classes 0..79)"),
                       ConfigError);
}

TEST_CASE("fraction: a ratio keeps max(1, round(n * f)) images, a whole number above 1 a count") {
  CHECK(fraction_count(128, 1.0) == 128);
  CHECK(fraction_count(128, 0.5) == 64);
  CHECK(fraction_count(128, 0.1) == 13);   // 12.8 rounds to 13
  CHECK(fraction_count(10, 0.25) == 2);    // 2.5 rounds to even, as Python's round() does
  CHECK(fraction_count(10, 0.35) == 4);    // 3.5 rounds to even: 4
  CHECK(fraction_count(128, 0.001) == 1);  // never empty
  CHECK(fraction_count(128, 20) == 20);
  CHECK(fraction_count(8, 20) == 8);
  CHECK_THROWS_AS(fraction_count(8, 0.0), ConfigError);
  CHECK_THROWS_AS(fraction_count(8, 2.5), ConfigError);

  auto split = three_images();
  take_fraction(split, 2);
  REQUIRE(split.items.size() == 2);
  CHECK(split.items[1].image == "b.jpg");
  CHECK(split.stats.images == 2);
  CHECK(split.stats.boxes == 4);
}
