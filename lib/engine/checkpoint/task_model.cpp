// See task_model.h.
#include "engine/checkpoint/task_model.h"

#include "core/error.h"
#include "core/task.h"

namespace trainer::engine {

model::YoloModel build_task_model(const model::ModelName& name, const data::DatasetSpec& dataset) {
  model::KeypointShape keypoints{};
  if (core::task_row(name.task).head.keypoints) {
    if (!dataset.kpt_shape) {
      throw core::ConfigError(std::string(core::task_name(name.task)) + " model " + name.display() +
                              " needs a dataset with kpt_shape " + "(e.g. 'kpt_shape: [17, 3]'); " +
                              dataset.yaml_file.string() + " has none");
    }
    keypoints = model::KeypointShape{(*dataset.kpt_shape)[0], (*dataset.kpt_shape)[1]};
  }
  return model::build_yolo_model(name, dataset.nc(), keypoints);
}

}  // namespace trainer::engine
