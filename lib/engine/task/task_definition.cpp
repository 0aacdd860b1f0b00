// See task_definition.h.
#include "engine/task/task_definition.h"

#include "core/error.h"
#include "engine/checkpoint/task_model.h"
#include "engine/checkpoint/weights_source.h"
#include "engine/task/detect_task.h"
#include "engine/task/obb_task.h"
#include "engine/task/pose_task.h"
#include "engine/task/segment_task.h"

namespace trainer::engine {

loss::LossGains detection_gains(const core::LossConfig& config) {
  loss::LossGains gains;
  gains.box = config.box;
  gains.cls = config.cls;
  gains.dfl = config.dfl;
  return gains;
}

model::YoloModel TaskDefinition::build_model(const model::ModelName& name,
                                             const data::DatasetSpec& dataset) const {
  model::ModelName own = name;
  own.task = task();
  return build_task_model(own, dataset);
}

std::unique_ptr<TaskDefinition> make_task_definition(core::Task task) {
  switch (task) {
    case core::Task::kDetect:
      return std::make_unique<DetectTask>();
    case core::Task::kPose:
      return std::make_unique<PoseTask>();
    case core::Task::kObb:
      return std::make_unique<ObbTask>();
    case core::Task::kSegment:
      return std::make_unique<SegmentTask>();
  }
  throw core::ConfigError(std::string("task '") + core::task_name(task) + "' is not known");
}

core::Task resolved_task(const core::TrainConfig& config) {
  if (!config.run.task && is_weights_file(config.model.model)) {
    // A command that has read the weights sets `task` from them first; this is for one that has
    // not (a library caller), at the cost of a read.
    if (const auto name = read_weights_source(config.model.model).architecture) return name->task;
  }
  return core::resolve_task(config.run.task, config.model.model);
}

std::unique_ptr<TaskDefinition> make_task_definition(const core::TrainConfig& config) {
  return make_task_definition(resolved_task(config));
}

}  // namespace trainer::engine
