// Predicted boxes back to original pixels, hand-computed (the validator's one geometry rule).
#include <doctest/doctest.h>

#include "data/data_test_util.h"
#include "data/dataset.h"
#include "engine/validator.h"
#include "test_support.h"

using trainer::engine::to_original_xyxy;
namespace core = trainer::core;
namespace data = trainer::data;
namespace engine = trainer::engine;

TEST_CASE("validator: letterboxed boxes map back to original pixels with per-axis gains") {
  // A 200 x 100 (w x h) image: x gain 0.5, y gain 0.4, padded 4 px left, 10 px top.
  const trainer::data::ImageGeometry g{100, 200, 0.5, 0.4, 4.0, 10.0};
  using Box = std::array<float, 4>;
  // (14 - 4) / 0.5 = 20, (20 - 10) / 0.4 = 25, (54 - 4) / 0.5 = 100, (40 - 10) / 0.4 = 75.
  CHECK(to_original_xyxy({14, 20, 54, 40}, g) == Box{20, 25, 100, 75});
  // Outside the image: clipped to [0, 200] x [0, 100].
  CHECK(to_original_xyxy({0, 0, 500, 500}, g) == Box{0, 0, 200, 100});
  // x2 < x1 and y2 < y1 (a YOLO26 box with negative side distances): kept inverted, as 8.4.190.
  CHECK(to_original_xyxy({54, 40, 14, 20}, g) == Box{100, 75, 20, 25});
  CHECK(to_original_xyxy({14, 40, 54, 20}, g) == Box{20, 75, 100, 25});
}

TEST_CASE("validator: ground truth in letterboxed pixels, split per image (8.4.190 space)") {
  // Two rows for image 1 and one for image 0 of a 3-image batch at 64 x 32 (w x h).
  const at::Tensor labels = at::tensor({1.0f, 2.0f, 0.5f, 0.5f, 0.25f, 0.5f,   //
                                        0.0f, 0.0f, 0.25f, 0.75f, 0.5f, 0.5f,  //
                                        1.0f, 1.0f, 0.125f, 0.25f, 0.25f, 0.5f})
                                .view({3, 6});
  const auto truth = trainer::engine::letterboxed_truth(labels, 3, 64.0f, 32.0f);
  REQUIRE(truth.size() == 3);
  using Box = std::array<float, 4>;
  // Image 0: centre (16, 24), size 32 x 16 -> (0, 16, 32, 32).
  CHECK((truth[0].boxes == std::vector<Box>{{0, 16, 32, 32}}));
  CHECK(truth[0].classes == std::vector<int>{0});
  // Image 1: (32, 16) 16 x 16 -> (24, 8, 40, 24); (8, 8) 16 x 16 -> (0, 0, 16, 16).
  CHECK((truth[1].boxes == std::vector<Box>{{24, 8, 40, 24}, {0, 0, 16, 16}}));
  CHECK(truth[1].classes == std::vector<int>{2, 1});
  CHECK(truth[2].boxes.empty());
  CHECK_THROWS_AS(trainer::engine::letterboxed_truth(labels, 1, 64.0f, 32.0f), std::logic_error);
}

TEST_CASE("validator: a COCO json with fewer categories than classes gets unused ids, no crash") {
  // Was a bare std::out_of_range: 3 class names, the json knows categories 10 and 20 only.
  trainer::test::TempDir dir;
  trainer::test::write_image(dir / "images/val/x.jpg", trainer::test::pattern_image(64, 64));
  trainer::test::write_text(dir / "annotations/instances_val.json", R"({
    "images": [{"id": 5, "file_name": "x.jpg", "width": 64, "height": 64}],
    "categories": [{"id": 10, "name": "a"}, {"id": 20, "name": "b"}],
    "annotations": [{"id": 1, "image_id": 5, "category_id": 20, "bbox": [8, 8, 16, 16]}]})");
  trainer::data::DatasetSpec spec;
  spec.root = dir.path();
  spec.val = {dir / "images/val"};
  spec.val_json = dir / "annotations/instances_val.json";
  spec.names = {"a", "b", "c"};
  trainer::data::LoadOptions load;
  load.cache_dir = dir / "cache";
  auto val_set = std::make_shared<trainer::data::DatasetIndex>(
      trainer::data::load_split(spec, trainer::data::Split::kVal, load));
  trainer::core::TrainConfig config;
  config.data.imgsz = 64;
  config.data.workers = 0;
  const trainer::engine::Validator validator(val_set, spec, config, c10::Device(c10::kCPU));
  CHECK(validator.category_id(0) == 10);
  CHECK(validator.category_id(1) == 20);
  CHECK(validator.category_id(2) == 21);  // the next free id
}

TEST_CASE("validation conf: 0.01 for OBB runs left at the default, as the reference's OBB val") {
  core::TrainConfig config;
  CHECK(engine::ValidationOptions::from_config(config).predict.conf == 0.001);
  config.run.task = core::Task::kObb;
  CHECK(engine::ValidationOptions::from_config(config).predict.conf == engine::kObbValidationConf);
  config.run.conf = 0.05;
  CHECK(engine::ValidationOptions::from_config(config).predict.conf == 0.05);
}

TEST_CASE("to_original_rbox: centre minus the padding, centre and sides over each axis's gain") {
  data::ImageGeometry g{100, 200, 0.5, 0.25, 10.0, 4.0};
  const auto r = engine::to_original_rbox({60, 24, 20, 8, 0.7}, g);
  CHECK(r.cx == doctest::Approx(100.0));  // (60 - 10) / 0.5
  CHECK(r.cy == doctest::Approx(80.0));   // (24 - 4) / 0.25
  CHECK(r.w == doctest::Approx(40.0));
  CHECK(r.h == doctest::Approx(32.0));
  CHECK(r.angle == doctest::Approx(0.7));
}
