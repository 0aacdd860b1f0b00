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

// Every task's names, in one table: a new task adds its enum value above and its row here. The
// rows are in the order the reference's guess_model_task tries the suffixes (-seg before -pose), so
// the first row whose suffix a model name contains is its task.
struct TaskNames {
  Task task;
  const char* name;          // the reference's name; also the runs/<task> folder
  const char* model_suffix;  // the model-name suffix that implies it (empty: none)
};
inline constexpr TaskNames kTaskNames[] = {
    {Task::kDetect, "detect", ""},
    {Task::kSegment, "segment", "-seg"},
    {Task::kPose, "pose", "-pose"},
    {Task::kObb, "obb", "-obb"},
};

// "detect", "pose", "segment", "obb" (the reference's names; also the runs/<task> folder).
const char* task_name(Task task);
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
