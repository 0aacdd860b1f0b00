// See task.h.
#include "core/task.h"

#include <filesystem>

#include "core/ascii_case.h"
#include "core/error.h"

namespace trainer::core {

const char* task_name(Task task) {
  for (const TaskNames& row : kTaskNames) {
    if (row.task == task) return row.name;
  }
  return "?";
}

std::vector<Task> all_tasks() {
  std::vector<Task> out;
  for (const TaskNames& row : kTaskNames) out.push_back(row.task);
  return out;
}

std::optional<Task> task_from_name(std::string_view name) {
  const std::string wanted = ascii_lowercase(name);
  for (Task task : all_tasks()) {
    if (wanted == task_name(task)) return task;
  }
  return std::nullopt;
}

std::optional<Task> task_from_model_name(const std::string& model) {
  const std::string stem = ascii_lowercase(std::filesystem::path(model).stem().string());
  for (const TaskNames& row : kTaskNames) {
    if (*row.model_suffix != '\0' && stem.find(row.model_suffix) != std::string::npos) {
      return row.task;
    }
  }
  return std::nullopt;
}

Task resolve_task(std::optional<Task> requested, const std::string& model) {
  const std::optional<Task> implied = task_from_model_name(model);
  if (requested && implied && *requested != *implied) {
    throw ConfigError(std::string("task '") + task_name(*requested) + "' contradicts model '" +
                      model + "', which is a " + task_name(*implied) +
                      " model; drop the task key or pick a " + task_name(*requested) + " model");
  }
  if (requested) return *requested;
  return implied.value_or(Task::kDetect);
}

}  // namespace trainer::core
