// See task.h.
#include "core/task.h"

#include <filesystem>
#include <stdexcept>
#include <string>

#include "core/ascii_case.h"
#include "core/error.h"

namespace trainer::core {

const TaskRow& task_row(Task task) {
  for (const TaskRow& row : kTasks) {
    if (row.task == task) return row;
  }
  throw std::logic_error("task " + std::to_string(static_cast<int>(task)) +
                         " has no row in core::kTasks");
}

const char* task_name(Task task) {
  return task_row(task).name;
}

std::optional<Task> task_with_head(const TaskHead& head) {
  for (const TaskRow& row : kTasks) {
    if (row.head == head) return row.task;
  }
  return std::nullopt;
}

std::optional<Task> task_from_head_class(std::string_view head_class) {
  const std::string_view name = head_class.substr(head_class.rfind('.') + 1);
  for (const TaskRow& row : kTasks) {
    const std::string_view base = row.head_class;
    if (name == base || name == std::string(base) + "26") return row.task;
  }
  return std::nullopt;
}

std::vector<Task> all_tasks() {
  std::vector<Task> out;
  for (const TaskRow& row : kTasks) out.push_back(row.task);
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
  for (const TaskRow& row : kTasks) {
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
