// The task seam: every task has a definition; each turns a validation into its columns, fitness
// and table.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "core/error.h"
#include "engine/task/detect_task.h"
#include "engine/task/obb_task.h"
#include "engine/task/pose_task.h"
#include "engine/task/segment_task.h"
#include "engine/task/task_definition.h"
#include "model/weights_io.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("make_task_definition: detect, pose, obb and segment") {
  CHECK(engine::make_task_definition(core::Task::kDetect)->task() == core::Task::kDetect);
  CHECK(engine::make_task_definition(core::Task::kPose)->task() == core::Task::kPose);
  CHECK(engine::make_task_definition(core::Task::kObb)->task() == core::Task::kObb);
  CHECK(engine::make_task_definition(core::Task::kSegment)->task() == core::Task::kSegment);
  core::TrainConfig config;
  config.model.model = "yolo26n-pose";  // the task follows the model name
  CHECK(engine::make_task_definition(config)->task() == core::Task::kPose);
  config.model.model = "yolo11s-seg";
  CHECK(engine::make_task_definition(config)->task() == core::Task::kSegment);
}

TEST_CASE("label polygons: OBB keeps oriented boxes, segmentation outlines, the others none") {
  using data::PolygonKind;
  CHECK(engine::make_task_definition(core::Task::kDetect)->label_polygons() == PolygonKind::kNone);
  CHECK(engine::make_task_definition(core::Task::kPose)->label_polygons() == PolygonKind::kNone);
  CHECK(engine::make_task_definition(core::Task::kObb)->label_polygons() ==
        PolygonKind::kOrientedBoxes);
  CHECK(engine::make_task_definition(core::Task::kSegment)->label_polygons() ==
        PolygonKind::kOutlines);
}

TEST_CASE("segment: (B) and (M) metrics, COCO mask extras by name, fitness = box + mask") {
  engine::ValidationResult val;
  val.metric.map50_95 = 0.25;
  val.metric.fitness = 0.25;
  eval::ReferenceMetric::Result mask;
  mask.recall = 0.75;
  mask.map50 = 0.5;
  mask.map50_95 = 0.125;
  mask.fitness = 0.125;
  val.second_metric = mask;
  eval::CocoStats second_coco;
  second_coco.stats[0] = 0.0625;
  second_coco.stats[1] = 0.5;
  val.second_coco = second_coco;
  val.loss_items = {1, 2, 3, 4, 5};
  engine::SegmentTask task;
  CHECK(task.fitness(val) == 0.375);
  engine::EpochRecord r;
  r.columns = engine::segment_columns({"box_loss", "seg_loss", "cls_loss", "l1_loss", "sem_loss"});
  r.train_loss = {0.1, 0.2, 0.3, 0.4, 0.5};
  r.validation = task.epoch_validation(val);
  CHECK(r.value("metrics/mAP50-95(B)") == 0.25);
  CHECK(r.value("metrics/recall(M)") == 0.75);
  CHECK(r.value("metrics/mAP50(M)") == 0.5);
  CHECK(r.value("metrics/mAP50-95(M)") == 0.125);
  CHECK(r.value("metrics/coco/AP(M)") == 0.0625);
  CHECK(std::isnan(r.value("metrics/coco/AP")));  // no COCO box evaluation in this result
  CHECK(r.value("val/sem_loss") == 5.0);
  CHECK(r.value("train/seg_loss") == 0.2);
  const std::string table = task.validation_table(val, {"cat"}, false);
  CHECK(table.find("Mask(P") != std::string::npos);
  CHECK(table.find("0.125") != std::string::npos);
}

TEST_CASE("pose: (B) and (P) metrics, COCO extras by name, fitness = box + pose mAP50-95") {
  engine::ValidationResult val;
  val.metric.map50_95 = 0.25;
  val.metric.fitness = 0.25;
  val.metric.recall = 0.5;
  eval::ReferenceMetric::Result pose;
  pose.precision = 0.75;
  pose.map50 = 0.5;
  pose.map50_95 = 0.125;
  pose.fitness = 0.125;
  val.second_metric = pose;
  val.loss_items = {1, 2, 3, 4, 5, 6};
  engine::PoseTask task;
  CHECK(task.fitness(val) == 0.375);
  engine::EpochRecord r;
  r.columns = engine::pose_columns(
      {"box_loss", "pose_loss", "kobj_loss", "cls_loss", "l1_loss", "rle_loss"});
  r.train_loss = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  r.validation = task.epoch_validation(val);
  CHECK(r.value("metrics/recall(B)") == 0.5);
  CHECK(r.value("metrics/mAP50-95(B)") == 0.25);
  CHECK(r.value("metrics/precision(P)") == 0.75);
  CHECK(r.value("metrics/mAP50(P)") == 0.5);
  CHECK(r.value("metrics/mAP50-95(P)") == 0.125);
  CHECK(r.value("val/rle_loss") == 6.0);
  CHECK(r.value("train/pose_loss") == 0.2);
  CHECK(std::isnan(r.value("metrics/coco/AP(P)")));  // no COCO keypoint evaluation ran
  const std::string table = task.validation_table(val, {"person"}, false);
  CHECK(table.find("Pose(P") != std::string::npos);
  CHECK(table.find("0.125") != std::string::npos);
}

TEST_CASE("pose: a dataset without kpt_shape is a config error naming the model and the yaml") {
  data::DatasetSpec spec;
  spec.yaml_file = "boxes.yaml";
  spec.names = {"a"};
  CHECK_THROWS_WITH_AS(
      engine::PoseTask().build_model(model::parse_model_name("yolo26t-pose"), spec),
      doctest::Contains("pose model yolo26t-pose needs a dataset with kpt_shape"),
      core::ConfigError);
}

TEST_CASE("detect: a validation becomes the (B) metrics, COCO extras and val loss by name") {
  engine::ValidationResult val;
  val.metric.precision = 0.5;
  val.metric.recall = 0.25;
  val.metric.map50 = 0.125;
  val.metric.map50_95 = 0.0625;
  val.metric.fitness = 0.0625;
  val.loss_items = {1.0, 2.0, 3.0};
  engine::DetectTask task;
  engine::EpochRecord r;
  r.columns = engine::detection_columns(1);
  r.train_loss = {0.1, 0.2, 0.3};
  r.validation = task.epoch_validation(val);
  CHECK(r.value("metrics/recall(B)") == 0.25);
  CHECK(r.value("metrics/mAP50-95(B)") == 0.0625);
  CHECK(r.value("val/l1_loss") == 3.0);
  CHECK(std::isnan(r.value("metrics/coco/AP")));  // no COCO protocol in this result
  CHECK(task.fitness(val) == 0.0625);
}

TEST_CASE("obb: four loss items, (B) metrics only, fitness = mAP50-95(B), a table without COCO") {
  engine::ObbTask task;
  engine::ValidationResult val;
  val.metric.precision = 0.5;
  val.metric.map50 = 0.75;
  val.metric.map50_95 = 0.25;
  val.metric.fitness = 0.25;
  val.metric.num_gt = 7;
  val.images = 3;
  val.loss_items = {1, 2, 3, 4};
  CHECK(task.fitness(val) == 0.25);
  const auto v = task.epoch_validation(val);
  CHECK(v.metrics == std::vector<double>{0.5, 0, 0.75, 0.25});
  CHECK(v.extras.empty());
  CHECK(v.loss_items == std::vector<double>{1, 2, 3, 4});
  const auto columns = engine::obb_columns({"box_loss", "cls_loss", "l1_loss", "angle_loss"});
  CHECK(columns.metric_names.back() == "metrics/mAP50-95(B)");
  CHECK(columns.extra_names.empty());
  const std::string table = task.validation_table(val, {"bar"}, false);
  CHECK(table.find("COCO") == std::string::npos);
  CHECK(table.find("0.250") != std::string::npos);
  CHECK(table.find("ProbIoU") != std::string::npos);
}

TEST_CASE("resolved_task: a weights file's task is the one its run recorded, else the name rule") {
  test::TempDir dir;
  const auto run = dir / "runs" / "x";
  std::filesystem::create_directories(run / "weights");
  torch::nn::Linear tensors(2, 2);  // the file's tensors: only its run's record names the model
  model::save_weights(*tensors, run / "weights" / "best.pt");
  // `model: yolo26t` with `task: segment` trained the segment head.
  test::write_text(run / "args.yaml", "model: yolo26t\ntask: segment\n");
  core::TrainConfig config;
  config.model.model = (run / "weights" / "best.pt").string();
  CHECK(engine::resolved_task(config) == core::Task::kSegment);
  test::write_text(run / "args.yaml", "model: yolo26t-pose\n");
  CHECK(engine::resolved_task(config) == core::Task::kPose);
  config.run.task = core::Task::kDetect;  // the task key wins
  CHECK(engine::resolved_task(config) == core::Task::kDetect);
  // No record beside the weights: the name rule (detect), the loader then names what is missing.
  config.run.task.reset();
  config.model.model = (dir / "loose.pt").string();
  model::save_weights(*tensors, dir / "loose.pt");
  CHECK(engine::resolved_task(config) == core::Task::kDetect);
  config.model.model = "yolo11s-seg";
  CHECK(engine::resolved_task(config) == core::Task::kSegment);
}

TEST_CASE("task definition: detection_gains are the config's box, cls and dfl gains") {
  core::LossConfig config;
  config.box = 1.25;
  config.cls = 2.5;
  config.dfl = 0.75;
  const loss::LossGains gains = engine::detection_gains(config);
  CHECK(gains.box == 1.25);
  CHECK(gains.cls == 2.5);
  CHECK(gains.dfl == 0.75);
  // The defaults agree: the config's are the reference's (7.5, 0.5, 1.5), as the loss's own.
  const loss::LossGains defaults = engine::detection_gains(core::LossConfig{});
  CHECK(defaults.box == loss::LossGains{}.box);
  CHECK(defaults.cls == loss::LossGains{}.cls);
  CHECK(defaults.dfl == loss::LossGains{}.dfl);
}
