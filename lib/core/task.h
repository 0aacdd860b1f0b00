// The task a run trains: detection, pose, segmentation or oriented boxes.
//
// Why: the task decides the model head, the loss, the batch fields, the metrics and the results
// columns, so it is settled once when the config loads. As the reference does (guess_model_task),
// it follows the model name's suffix (`yolo26n-pose` -> pose, `-seg` -> segment, `-obb` -> obb,
// anything else -> detect); an explicit `task` key wins over a name without a suffix, and a
// `task` that contradicts the suffix is a config error naming both. Torch-free (lib/core).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::core {

enum class Task { kDetect, kPose, kSegment, kObb };
// The last enum value: a new task adds its value above and moves this (the registry test walks
// every value up to it and fails on one without a row below or in any other registry).
inline constexpr Task kLastTask = Task::kObb;

// What a task's head outputs beside boxes and classes. The model builds its head from it, and a
// built model's head tells its task back (predict on weights without a task record).
struct TaskHead {
  bool keypoints = false;  // a keypoint branch, sized by the dataset's kpt_shape
  bool oriented = false;   // an angle per box
  bool masks = false;      // mask coefficients and prototypes
};
constexpr bool operator==(const TaskHead& a, const TaskHead& b) {
  return a.keypoints == b.keypoints && a.oriented == b.oriented && a.masks == b.masks;
}

// Every task in one table: a new task adds its enum value above and its row here. The rows are in
// the order the reference's guess_model_task tries the suffixes (-seg before -pose), so the first
// row whose suffix a model name contains is its task.
struct TaskRow {
  Task task;
  const char* name;          // the reference's name; also the runs/<task> folder
  const char* model_suffix;  // the model-name suffix that implies it (empty: none)
  // The reference's head class (ultralytics.nn.modules.head.<head_class>, or <head_class>26 in
  // YOLO26 models): what its checkpoints and model yamls name.
  const char* head_class;
  TaskHead head;
};
inline constexpr TaskRow kTasks[] = {
    // task, name, suffix, head class, head {keypoints, oriented, masks}
    {Task::kDetect, "detect", "", "Detect", {false, false, false}},
    {Task::kSegment, "segment", "-seg", "Segment", {false, false, true}},
    {Task::kPose, "pose", "-pose", "Pose", {true, false, false}},
    {Task::kObb, "obb", "-obb", "OBB", {false, true, false}},
};

// The task's row; std::logic_error for a task without one (a programming error).
const TaskRow& task_row(Task task);
// "detect", "pose", "segment", "obb" (the reference's names; also the runs/<task> folder).
const char* task_name(Task task);
// The task whose head outputs `head`; nullopt when no task's does.
std::optional<Task> task_with_head(const TaskHead& head);
// The task of a reference head class, its module path or not ("ultralytics.nn.modules.head.Pose26",
// "Segment"); nullopt for a class no task has.
std::optional<Task> task_from_head_class(std::string_view head_class);
// The task spelled `name` (case-insensitive); nullopt for anything else.
std::optional<Task> task_from_name(std::string_view name);
// Every task, in the table's order.
std::vector<Task> all_tasks();

// The task a model name's suffix implies: "-pose", "-seg" or "-obb" in the name's stem (a yaml
// path's file name without extension), as the reference's guess_model_task reads it; nullopt when
// the name has none of them (a plain detection name such as yolo26n, or a custom yaml).
std::optional<Task> task_from_model_name(const std::string& model);

// The run's task: `requested` when given (it must agree with the model name's suffix, if any;
// otherwise ConfigError naming both), else the suffix's task, else detect.
Task resolve_task(std::optional<Task> requested, const std::string& model);

}  // namespace trainer::core
