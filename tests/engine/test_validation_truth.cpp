// The ground truth of a validation, hand-computed: category ids (COCO's 91-id map for 80 classes,
// class + 1 otherwise), image ids (unique numeric stems, else the index), COCO areas (box w x h,
// shoelace for outlines), crowd boxes, keypoints in original pixels, and the letterboxed truth.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "engine/validation_truth.h"

namespace core = trainer::core;
namespace data = trainer::data;
namespace engine = trainer::engine;

namespace {

data::DatasetIndex two_images(int nc) {
  data::DatasetIndex index;
  for (int c = 0; c < nc; ++c) index.names.push_back("c" + std::to_string(c));
  data::ImageLabels a;
  a.image = "/x/000000000009.jpg";
  a.width = 200;
  a.height = 100;
  a.coco_image_id = 9;
  a.classes = {1};
  a.boxes = {{0.5f, 0.5f, 0.5f, 0.2f}};  // 100 x 20 px centred at (100, 50)
  a.crowd_classes = {0};
  a.crowd_boxes = {{0.25f, 0.25f, 0.1f, 0.1f}};
  data::ImageLabels b;
  b.image = "/x/000000000012.jpg";
  b.width = 64;
  b.height = 64;
  b.coco_image_id = 12;
  index.items = {a, b};
  index.source = "two images";
  return index;
}

}  // namespace

TEST_CASE("validation truth: class + 1 ids, numeric stems as image ids, box areas, crowd boxes") {
  const auto truth = engine::build_validation_truth(two_images(3), {}, core::TrainConfig{});
  CHECK(truth.category_ids == std::vector<int64_t>{1, 2, 3});
  CHECK(truth.image_ids == std::vector<int64_t>{9, 12});
  REQUIRE(truth.coco.images.size() == 2);
  CHECK(truth.coco.images[0].id == 9);
  CHECK(truth.coco.images[0].file_name == "000000000009.jpg");
  REQUIRE(truth.coco.annotations.size() == 2);
  const auto& box = truth.coco.annotations[0];
  CHECK(box.category_id == 2);
  CHECK(box.bbox[0] == doctest::Approx(50.0));  // 100 - 100 / 2
  CHECK(box.bbox[1] == doctest::Approx(40.0));  // 50 - 20 / 2
  CHECK(box.area == doctest::Approx(2000.0));   // 100 x 20
  CHECK_FALSE(box.iscrowd);
  const auto& crowd = truth.coco.annotations[1];
  CHECK(crowd.iscrowd);
  CHECK(crowd.category_id == 1);
  CHECK(crowd.area == doctest::Approx(200.0));  // 20 x 10
}

TEST_CASE("validation truth: 80 classes take COCO's 91-id map, repeated stems take the index") {
  auto index = two_images(80);
  index.items[1].coco_image_id = 9;  // two images with the same stem: ids are the indices
  const auto truth = engine::build_validation_truth(index, {}, core::TrainConfig{});
  REQUIRE(truth.category_ids.size() == 80);
  CHECK(truth.category_ids[0] == 1);
  CHECK(truth.category_ids[11] == 13);  // COCO skips id 12
  CHECK(truth.category_ids[79] == 90);
  CHECK(truth.image_ids == std::vector<int64_t>{0, 1});
  CHECK(truth.coco.annotations[0].image_id == 0);
}

TEST_CASE("validation truth: outline areas by the shoelace formula, keypoints in pixels") {
  auto index = two_images(3);
  index.polygons = data::PolygonKind::kOutlines;
  // A right triangle (0, 0), (0.5, 0), (0, 1) of a 200 x 100 image: legs 100 and 100 px.
  index.items[0].segments = {{0.0f, 0.0f, 0.5f, 0.0f, 0.0f, 1.0f}};
  const auto outlined = engine::build_validation_truth(index, {}, core::TrainConfig{});
  CHECK(outlined.coco.annotations[0].area == doctest::Approx(5000.0));
  REQUIRE(outlined.coco.annotations[0].segmentation.polygons.size() == 1);
  CHECK(outlined.coco.annotations[0].segmentation.polygons[0] ==
        std::vector<double>{0, 0, 100, 0, 0, 100});

  auto pose = two_images(3);
  pose.keypoints_per_box = 2;
  pose.items[0].keypoints = {0.5f, 0.5f, 2.0f, 0.0f, 0.0f, 0.0f};
  const auto points = engine::build_validation_truth(pose, {}, core::TrainConfig{});
  CHECK(points.coco.annotations[0].keypoints == std::vector<double>{100, 50, 2, 0, 0, 0});
  CHECK(points.coco.annotations[0].num_keypoints == 1);
}

TEST_CASE("coco_truth_of_images: only the images run and their annotations") {
  const auto truth = engine::build_validation_truth(two_images(3), {}, core::TrainConfig{});
  const auto part = engine::coco_truth_of_images(truth.coco, {12});
  REQUIRE(part.images.size() == 1);
  CHECK(part.images[0].id == 12);
  CHECK(part.annotations.empty());
  CHECK(part.categories.size() == 3);
}

TEST_CASE(
    "letterboxed_truth: ground truth in letterboxed pixels, split per image (8.4.190 space)") {
  // Two rows for image 1 and one for image 0 of a 3-image batch at 64 x 32 (w x h).
  const at::Tensor labels = at::tensor({1.0f, 2.0f, 0.5f, 0.5f, 0.25f, 0.5f,   //
                                        0.0f, 0.0f, 0.25f, 0.75f, 0.5f, 0.5f,  //
                                        1.0f, 1.0f, 0.125f, 0.25f, 0.25f, 0.5f})
                                .view({3, 6});
  const auto truth = engine::letterboxed_truth(labels, 3, 64.0f, 32.0f);
  REQUIRE(truth.size() == 3);
  using Box = std::array<float, 4>;
  // Image 0: centre (16, 24), size 32 x 16 -> (0, 16, 32, 32).
  CHECK((truth[0].boxes == std::vector<Box>{{0, 16, 32, 32}}));
  CHECK(truth[0].classes == std::vector<int>{0});
  // Image 1: (32, 16) 16 x 16 -> (24, 8, 40, 24); (8, 8) 16 x 16 -> (0, 0, 16, 16).
  CHECK((truth[1].boxes == std::vector<Box>{{24, 8, 40, 24}, {0, 0, 16, 16}}));
  CHECK(truth[1].classes == std::vector<int>{2, 1});
  CHECK(truth[2].boxes.empty());
  CHECK_THROWS_AS(engine::letterboxed_truth(labels, 1, 64.0f, 32.0f), std::logic_error);
}
