// Sharded validation (engine/validation_shards.h): 2 and 3 in-process Gloo ranks, each scoring
// whole batches of the one-process plan, give on rank 0 exactly what one process gives, for the
// four tasks: metrics, COCO stats, val loss, detections and predictions.json, bit for bit.
//
// Why conf 0: a freshly initialised head scores every box near its bias (about 1e-4), so at the
// default conf nothing would be kept; at 0 every image keeps max_det boxes with many near-equal
// scores, which is where an order-dependent merge (the metric's stable sort, the float loss sum,
// the file's entry order) would show.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/config.h"
#include "data/dataset_yaml.h"
#include "demo/synthetic_dataset.h"
#include "demo/synthetic_obb_dataset.h"
#include "demo/synthetic_pose_dataset.h"
#include "distributed/rank_threads.h"
#include "engine/run_dataset.h"
#include "engine/task/task_definition.h"
#include "engine/validator.h"
#include "eval/detection_checks.h"
#include "integration/coco8_seg_subset.h"
#include "model/model_name.h"
#include "test_support.h"

using namespace trainer;

namespace {

struct TaskCase {
  core::Task task;
  std::string model;
  std::filesystem::path yaml;
  int batch = 2;  // a plan of ceil(images / batch) batches
};

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every field of two results, exactly (doubles with ==: bit for bit but for the sign of zero).
void check_identical(const engine::ValidationResult& a, const engine::ValidationResult& b) {
  CHECK(a.images == b.images);
  CHECK(a.fitness == b.fitness);
  CHECK(a.loss_items == b.loss_items);
  const auto same_metric = [](const eval::ReferenceMetric::Result& x,
                              const eval::ReferenceMetric::Result& y) {
    CHECK(x.precision == y.precision);
    CHECK(x.recall == y.recall);
    CHECK(x.map50 == y.map50);
    CHECK(x.map75 == y.map75);
    CHECK(x.map50_95 == y.map50_95);
    CHECK(x.num_images == y.num_images);
    CHECK(x.num_gt == y.num_gt);
    CHECK(x.num_pred == y.num_pred);
    REQUIRE(x.per_class.size() == y.per_class.size());
    for (size_t c = 0; c < x.per_class.size(); ++c) {
      CHECK(x.per_class[c].ap == y.per_class[c].ap);
      CHECK(x.per_class[c].precision == y.per_class[c].precision);
      CHECK(x.per_class[c].recall == y.per_class[c].recall);
    }
  };
  same_metric(a.metric, b.metric);
  REQUIRE(a.second_metric.has_value() == b.second_metric.has_value());
  if (a.second_metric) same_metric(*a.second_metric, *b.second_metric);
  REQUIRE(a.coco.has_value() == b.coco.has_value());
  if (a.coco) CHECK(a.coco->stats == b.coco->stats);
  REQUIRE(a.second_coco.has_value() == b.second_coco.has_value());
  if (a.second_coco) CHECK(a.second_coco->stats == b.second_coco->stats);
  REQUIRE(a.detections.size() == b.detections.size());
  for (size_t k = 0; k < a.detections.size(); ++k) {
    CAPTURE(k);
    test::check_same_detection(a.detections[k], b.detections[k]);
  }
}

// One process, then `world` ranks, on the same weights: rank 0's result and predictions.json
// equal the single process's; the other ranks report scored = false.
void check_sharded_equals_single(const TaskCase& c, int world) {
  CAPTURE(c.model);
  CAPTURE(world);
  test::TempDir dir;
  core::TrainConfig config;
  config.model.model = c.model;
  config.run.task = c.task;
  config.data.data = c.yaml.string();
  config.data.imgsz = 128;
  config.data.batch = c.batch;
  config.data.workers = 1;
  config.run.device = "cpu";
  const auto yaml_spec = data::load_dataset_yaml(c.yaml);
  const auto val_set = std::make_shared<data::DatasetIndex>(
      engine::load_run_split(config, yaml_spec, data::Split::kVal));
  const auto spec = engine::run_dataset_spec(config, yaml_spec);
  const auto task = engine::make_task_definition(config);
  // Models (and losses) built on this thread: torch's generator is global.
  std::vector<model::YoloModel> models;
  std::vector<std::unique_ptr<loss::YoloLoss>> losses;
  for (int k = 0; k <= world; ++k) {
    torch::manual_seed(11);
    models.push_back(task->build_model(model::parse_model_name(c.model), spec));
    losses.push_back(task->build_loss(config.loss, *models.back(), spec));
  }
  auto options = engine::ValidationOptions::from_config(config);
  options.predict.conf = 0.0;
  options.keep_detections = true;

  engine::Validator single(val_set, spec, config, c10::Device(c10::kCPU), /*standalone=*/true);
  const auto expected = single.run(*models[0], losses[0].get(), options);
  REQUIRE(expected.scored);
  REQUIRE(expected.images == static_cast<int64_t>(val_set->items.size()));
  REQUIRE(expected.detections.size() > 0);
  REQUIRE_FALSE(expected.loss_items.empty());
  task->write_predictions(expected, spec.names, dir / "single.json");

  std::vector<engine::ValidationResult> results(static_cast<size_t>(world));
  std::mutex m;
  static int groups = 0;  // in-process groups are found by name: one each
  test::run_ranks("val-shards-" + std::to_string(++groups), world,
                  [&](int rank, distributed::Group& group) {
                    // The test's own group handle: the validator keeps a shared owner of it.
                    std::shared_ptr<distributed::Group> shared(&group, [](distributed::Group*) {});
                    engine::Validator validator(val_set, spec, config, c10::Device(c10::kCPU),
                                                /*standalone=*/true, shared);
                    auto r = validator.run(*models[static_cast<size_t>(rank) + 1],
                                           losses[static_cast<size_t>(rank) + 1].get(), options);
                    std::lock_guard<std::mutex> lock(m);
                    results[static_cast<size_t>(rank)] = std::move(r);
                  });
  REQUIRE(results[0].scored);
  check_identical(results[0], expected);
  int64_t shared_images = 0;
  for (int r = 1; r < world; ++r) {
    CHECK_FALSE(results[static_cast<size_t>(r)].scored);
    shared_images += results[static_cast<size_t>(r)].images;
  }
  CHECK(shared_images > 0);  // the other ranks did score batches
  task->write_predictions(results[0], spec.names, dir / "sharded.json");
  CHECK(file_text(dir / "sharded.json") == file_text(dir / "single.json"));
}

demo::SyntheticOptions seven_val_images() {
  demo::SyntheticOptions o;
  o.train_images = 1;
  o.val_images = 7;  // batches of 2: a plan of 4, which 3 ranks do not divide
  o.image_size = 128;
  o.min_object_size = 24;
  o.max_object_size = 96;
  o.max_objects = 3;
  o.seed = 5;
  return o;
}

}  // namespace

TEST_CASE("sharded validation: detection on 2 and 3 ranks equals one process bit for bit") {
  test::TempDir dir;
  const auto yaml = demo::generate_synthetic_dataset(dir / "det", seven_val_images()).dataset_yaml;
  for (int world : {2, 3})
    check_sharded_equals_single({core::Task::kDetect, "yolo26t", yaml}, world);
}

TEST_CASE("sharded validation: pose on 2 and 3 ranks equals one process bit for bit") {
  test::TempDir dir;
  const auto yaml =
      demo::generate_synthetic_pose_dataset(dir / "pose", seven_val_images()).dataset_yaml;
  for (int world : {2, 3}) {
    check_sharded_equals_single({core::Task::kPose, "yolo26t-pose", yaml}, world);
  }
}

TEST_CASE("sharded validation: OBB on 2 and 3 ranks equals one process bit for bit") {
  test::TempDir dir;
  const auto yaml =
      demo::generate_synthetic_obb_dataset(dir / "obb", seven_val_images()).dataset_yaml;
  for (int world : {2, 3}) {
    check_sharded_equals_single({core::Task::kObb, "yolo26t-obb", yaml}, world);
  }
}

TEST_CASE("sharded validation: segmentation on 2 and 3 ranks equals one process bit for bit") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  test::TempDir dir;
  const auto yaml = test::write_coco8_seg_subset(*coco128, dir / "seg");
  // 4 images in batches of 1 (masks at conf 0 are the costly part): 3 ranks take 2, 1 and 1.
  for (int world : {2, 3}) {
    check_sharded_equals_single({core::Task::kSegment, "yolo26t-seg", yaml, 1}, world);
  }
}

TEST_CASE("sharded validation: more ranks than batches leaves the last ones idle, still equal") {
  test::TempDir dir;
  auto o = seven_val_images();
  o.val_images = 3;  // batches of 2: a plan of 2 batches for 3 ranks
  const auto yaml = demo::generate_synthetic_dataset(dir / "det", o).dataset_yaml;
  check_sharded_equals_single({core::Task::kDetect, "yolo26t", yaml}, 3);
}
