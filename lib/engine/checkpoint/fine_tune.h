// A model for a dataset, started from another model's weights as 8.4.190's trainer does it:
// target names set first (cls_remap), then DetectionModel.load (model/fine_tune_transfer.h).
//
// Why in the engine: the rebuild needs the task's model builder and the dataset; fit and the
// parity test against the reference's own load go through this one function.
#pragma once

#include <string>

#include "data/dataset_yaml.h"
#include "engine/checkpoint/weights_source.h"
#include "engine/task/task_definition.h"
#include "model/class_widths.h"
#include "model/fine_tune_transfer.h"
#include "model/yolo_model.h"

namespace trainer::engine {

struct FineTuned {
  model::YoloModel model{nullptr};
  model::FineTuneReport report;
  model::ClassWidths class_widths;  // the built model's (the source's when rebuilt)
  bool rebuilt = false;             // the class branches took the source's hidden widths
};

// Builds `name` with `task`'s head for `dataset` and transfers `pretrained` into it. With
// `name.cls_width` at its defaults, class branches whose hidden width differs from the source's
// are rebuilt at the source's (see rebuilt_class_widths); with `cls_remap`, class rows follow the
// dataset's class names.
FineTuned fine_tune_model(const TaskDefinition& task, const model::ModelName& name,
                          const data::DatasetSpec& dataset, const WeightsSource& pretrained,
                          bool cls_remap);

}  // namespace trainer::engine
