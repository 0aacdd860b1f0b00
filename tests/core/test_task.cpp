// The task: inferred from the model name's suffix as the reference does, an explicit key wins,
// a contradiction names both; the loaded config holds the resolved task.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "core/config_loader.h"
#include "core/error.h"
#include "core/task.h"

using namespace trainer::core;

TEST_CASE("task names round-trip and are case-insensitive") {
  for (Task t : all_tasks()) CHECK(task_from_name(task_name(t)) == t);
  CHECK(task_from_name("POSE") == Task::kPose);
  CHECK_FALSE(task_from_name("classify").has_value());
}

TEST_CASE("the model name's suffix implies the task (guess_model_task)") {
  CHECK(task_from_model_name("yolo26n-pose") == Task::kPose);
  CHECK(task_from_model_name("yolo11s-seg") == Task::kSegment);
  CHECK(task_from_model_name("yolo26m-obb.yaml") == Task::kObb);
  CHECK(task_from_model_name("/models/custom-pose.yaml") == Task::kPose);
  CHECK(task_from_model_name("custom-pose-seg") == Task::kSegment);  // -seg first, as the reference
  CHECK_FALSE(task_from_model_name("yolo26n").has_value());
  CHECK_FALSE(task_from_model_name("/models/pose/custom.yaml").has_value());
}

TEST_CASE("an explicit task wins over a plain name, a contradiction names both") {
  CHECK(resolve_task(std::nullopt, "yolo26n") == Task::kDetect);
  CHECK(resolve_task(std::nullopt, "yolo26n-pose") == Task::kPose);
  CHECK(resolve_task(Task::kPose, "custom.yaml") == Task::kPose);
  CHECK(resolve_task(Task::kPose, "yolo26n-pose") == Task::kPose);
  CHECK_THROWS_WITH_AS(resolve_task(Task::kDetect, "yolo26n-seg"),
                       doctest::Contains("task 'detect' contradicts model 'yolo26n-seg'"),
                       ConfigError);
}

TEST_CASE("loading resolves the task: from the model, explicit, null, or a config error") {
  CHECK(load_config("", {"model=yolo26n"}).config.run.task == Task::kDetect);
  CHECK(load_config("", {"model=yolo26n-pose"}).config.run.task == Task::kPose);
  CHECK(load_config("", {"model=yolo26n-obb", "task=null"}).config.run.task == Task::kObb);
  CHECK(load_config("", {"model=yolo26n-obb", "task=obb"}).config.run.task == Task::kObb);
  CHECK_THROWS_WITH_AS(load_config("", {"model=yolo26n-pose", "task=segment"}),
                       doctest::Contains("yolo26n-pose"), ConfigError);
  CHECK_THROWS_AS(load_config("", {"task=classify"}), ConfigError);
}

TEST_CASE("a task value without a row is a programming error, not an empty name or suffix") {
  CHECK_THROWS_AS(task_row(static_cast<Task>(static_cast<int>(kLastTask) + 1)), std::logic_error);
  CHECK(std::string(task_row(Task::kObb).model_suffix) == "-obb");
  CHECK(std::string(task_row(Task::kSegment).head_class) == "Segment");
  CHECK(task_row(Task::kPose).head == TaskHead{true, false, false});
}
