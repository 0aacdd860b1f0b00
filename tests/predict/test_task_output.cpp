// predict's task registry: the output class of each task, and the task read off a built model's
// head (through core::kTasks' head outputs). The walk over every registry is
// tests/integration/test_task_registries.cpp.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <string>

#include "core/task.h"
#include "model/yolo_model.h"
#include "predict/task/obb_output.h"
#include "predict/task/pose_output.h"
#include "predict/task/segment_output.h"
#include "predict/task_output.h"

using namespace trainer;

TEST_CASE("make_task_output: the output class of each task (detection's is the base class)") {
  const auto is_base = [](const predict::TaskOutput& o) {
    return dynamic_cast<const predict::PoseOutput*>(&o) == nullptr &&
           dynamic_cast<const predict::SegmentOutput*>(&o) == nullptr &&
           dynamic_cast<const predict::ObbOutput*>(&o) == nullptr;
  };
  CHECK(is_base(*predict::make_task_output(core::Task::kDetect)));
  CHECK(dynamic_cast<predict::PoseOutput*>(predict::make_task_output(core::Task::kPose).get()));
  CHECK(
      dynamic_cast<predict::SegmentOutput*>(predict::make_task_output(core::Task::kSegment).get()));
  CHECK(dynamic_cast<predict::ObbOutput*>(predict::make_task_output(core::Task::kObb).get()));
}

TEST_CASE("the reference's head classes and head outputs map to their tasks, others to none") {
  CHECK(core::task_from_head_class("ultralytics.nn.modules.head.Pose26") == core::Task::kPose);
  CHECK(core::task_from_head_class("Segment") == core::Task::kSegment);
  CHECK(core::task_from_head_class("OBB26") == core::Task::kObb);
  CHECK(core::task_from_head_class("Detect") == core::Task::kDetect);
  CHECK_FALSE(core::task_from_head_class("Classify").has_value());
  CHECK_FALSE(core::task_from_head_class("Pose27").has_value());
  CHECK_FALSE(core::task_from_head_class("").has_value());
  CHECK(core::task_with_head({true, false, false}) == core::Task::kPose);
  CHECK(core::task_with_head({false, false, false}) == core::Task::kDetect);
  CHECK_FALSE(core::task_with_head({false, true, true}).has_value());
}

TEST_CASE("predicted_task: a built model's head names its task, for every task's row") {
  for (const core::Task task : core::all_tasks()) {
    CAPTURE(core::task_name(task));
    const auto net = model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 3, task, {5, 3});
    CHECK(predict::predicted_task(*net) == task);
  }
}
