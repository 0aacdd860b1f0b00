// See task.h.
#include "engine/task.h"

#include "core/error.h"
#include "engine/detect_task.h"
#include "engine/obb_task.h"
#include "engine/pose_task.h"

namespace trainer::engine {

std::unique_ptr<TaskDefinition> make_task_definition(core::Task task) {
  switch (task) {
    case core::Task::kDetect:
      return std::make_unique<DetectTask>();
    case core::Task::kPose:
      return std::make_unique<PoseTask>();
    case core::Task::kObb:
      return std::make_unique<ObbTask>();
    case core::Task::kSegment:
      break;
  }
  throw core::ConfigError(std::string("task '") + core::task_name(task) +
                          "' is not implemented yet: this trainer trains detect, pose and obb "
                          "models");
}

std::unique_ptr<TaskDefinition> make_task_definition(const core::TrainConfig& config) {
  return make_task_definition(core::resolve_task(config.run.task, config.model.model));
}

}  // namespace trainer::engine
