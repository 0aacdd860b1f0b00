// The task seam: detect is the implemented task; the others are a clear config error for now.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.h"
#include "engine/detect_task.h"
#include "engine/task.h"

using namespace trainer;

TEST_CASE("make_task_definition: detect, and 'not implemented yet' for pose, segment, obb") {
  CHECK(engine::make_task_definition(core::Task::kDetect)->task() == core::Task::kDetect);
  for (auto t : {core::Task::kPose, core::Task::kSegment, core::Task::kObb}) {
    CAPTURE(core::task_name(t));
    CHECK_THROWS_WITH_AS(engine::make_task_definition(t),
                         doctest::Contains("is not implemented yet"), core::ConfigError);
  }
  core::TrainConfig config;
  config.model.model = "yolo26n-pose";  // the task follows the model name
  CHECK_THROWS_WITH_AS(engine::make_task_definition(config), doctest::Contains("'pose'"),
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
