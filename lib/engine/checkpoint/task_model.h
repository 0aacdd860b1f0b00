// A task's model for a dataset: the architecture `name` with the head its task's row describes
// (core::TaskHead), sized by the dataset's classes and, for a keypoint head, its kpt_shape.
//
// Why its own unit: the weights module builds the model a file holds without the task's training
// side (its loss, scorer, tables), so predict links the weights module alone; the tasks'
// definitions (TaskDefinition::build_model) call it too, so a model is built one way.
#pragma once

#include "data/dataset_yaml.h"
#include "model/model_name.h"
#include "model/yolo_model.h"

namespace trainer::engine {

// Throws core::ConfigError when the head needs keypoints and the dataset has no kpt_shape.
model::YoloModel build_task_model(const model::ModelName& name, const data::DatasetSpec& dataset);

}  // namespace trainer::engine
