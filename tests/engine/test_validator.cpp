// The validator: category ids through a json with fewer categories than classes, the OBB conf.
#include <doctest/doctest.h>

#include "data/data_test_util.h"
#include "data/dataset.h"
#include "engine/validator.h"
#include "test_support.h"

namespace core = trainer::core;
namespace data = trainer::data;
namespace engine = trainer::engine;

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
  CHECK(engine::ValidationOptions::from_config(config).predict.conf == 0.01);
  config.run.conf = 0.05;
  CHECK(engine::ValidationOptions::from_config(config).predict.conf == 0.05);
}
