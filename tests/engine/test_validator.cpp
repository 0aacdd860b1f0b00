// The validator: category ids through a json with fewer categories than classes, the OBB conf,
// the val loss against the criterion on the same batches, a part of the split scored alone.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <set>
#include <string>

#include "data/data_test_util.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "data/loader.h"
#include "data/loader_options.h"
#include "demo/synthetic_dataset.h"
#include "engine/batch_targets.h"
#include "engine/run_dataset.h"
#include "engine/task/task_definition.h"
#include "engine/validator.h"
#include "model/model_name.h"
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

namespace {

// Five synthetic val images and the run's pieces at 64 px, batch 2 (standalone: batches of 2).
struct SmallRun {
  trainer::test::TempDir dir;
  core::TrainConfig config;
  std::shared_ptr<data::DatasetIndex> val_set;
  data::DatasetSpec spec;
  std::unique_ptr<engine::TaskDefinition> task;
  trainer::model::YoloModel model{nullptr};
  std::unique_ptr<trainer::loss::YoloLoss> criterion;

  SmallRun() {
    trainer::demo::SyntheticOptions o;
    o.train_images = 1;
    o.val_images = 5;
    o.image_size = 64;
    o.min_object_size = 12;
    o.max_object_size = 30;
    const auto yaml = trainer::demo::generate_synthetic_dataset(dir / "d", o).dataset_yaml;
    config.model.model = "yolo26t";
    config.data.data = yaml.string();
    config.data.imgsz = 64;
    config.data.batch = 2;
    config.data.workers = 0;
    config.run.device = "cpu";
    const auto yaml_spec = data::load_dataset_yaml(yaml);
    val_set = std::make_shared<data::DatasetIndex>(
        engine::load_run_split(config, yaml_spec, data::Split::kVal));
    spec = engine::run_dataset_spec(config, yaml_spec);
    task = engine::make_task_definition(config);
    torch::manual_seed(3);
    model = task->build_model(trainer::model::parse_model_name("yolo26t"), spec);
    criterion = task->build_loss(config.loss, *model, spec);
  }
};

}  // namespace

TEST_CASE("validator: the val loss is the mean over batches of the criterion on eval outputs") {
  SmallRun run;
  engine::Validator validator(run.val_set, run.spec, run.config, c10::Device(c10::kCPU),
                              /*standalone=*/true);
  auto options = engine::ValidationOptions::from_config(run.config);
  run.model->train();
  const auto result = validator.run(*run.model, run.criterion.get(), options);
  CHECK(run.model->is_training());  // its mode is given back
  REQUIRE(result.scored);
  CHECK(result.images == 5);

  // The oracle: the same plan (3 batches: 2, 2, 1), the model in eval mode, the loss per batch.
  data::Loader loader(*run.val_set, data::val_loader_options(run.config, /*standalone=*/true));
  torch::NoGradGuard no_grad;
  run.model->eval();
  loader.start_epoch(0, false);
  at::Tensor sum;
  int batches = 0;
  while (auto batch = loader.next()) {
    const at::Tensor images =
        data::images_to_device(batch->images, c10::Device(c10::kCPU), torch::kFloat);
    const auto raw = run.model->forward_for_loss(images);
    const at::Tensor items =
        (*run.criterion)(raw, engine::loss_targets_of(*batch), images.size(0)).items.detach();
    sum = sum.defined() ? sum + items : items.clone();
    ++batches;
  }
  CHECK(batches == 3);
  const at::Tensor mean = (sum / batches).to(torch::kDouble);
  REQUIRE(result.loss_items.size() == static_cast<size_t>(mean.size(0)));
  for (int64_t k = 0; k < mean.size(0); ++k) {
    CHECK(result.loss_items[static_cast<size_t>(k)] ==
          doctest::Approx(mean[k].item<double>()).epsilon(1e-5));
  }
  CHECK(result.detections.empty());  // kept only when asked
  CHECK(result.fitness == run.task->fitness(result));
}

TEST_CASE("validator: max_batches scores only the images it ran, COCO against those alone") {
  SmallRun run;
  engine::Validator validator(run.val_set, run.spec, run.config, c10::Device(c10::kCPU),
                              /*standalone=*/true);
  auto options = engine::ValidationOptions::from_config(run.config);
  options.max_batches = 1;
  options.keep_detections = true;
  options.predict.conf = 0.0;  // an untrained head: keep its boxes so they can be counted
  const auto result = validator.run(*run.model, nullptr, options);
  CHECK(result.images == 2);         // the first batch of 2
  CHECK(result.loss_items.empty());  // no criterion: no val loss
  REQUIRE_FALSE(result.detections.empty());
  std::set<std::string> files;
  for (const auto& d : result.detections) files.insert(d.file_name);
  CHECK(files.size() == 2);
  REQUIRE(result.coco.has_value());
  // The reference metric counts the images and truth of the batch run, not of the split.
  CHECK(result.metric.num_images == 2);
  int64_t truth_rows = 0, split_rows = 0;
  for (const auto& item : run.val_set->items) {
    split_rows += static_cast<int64_t>(item.boxes.size());
    if (files.count(item.image.filename().string())) {
      truth_rows += static_cast<int64_t>(item.boxes.size());
    }
  }
  CHECK(result.metric.num_gt == truth_rows);
  CHECK(truth_rows < split_rows);
}
