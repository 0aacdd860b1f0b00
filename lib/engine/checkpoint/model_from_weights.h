// A model ready for inference from a weights file alone: which architecture, task and class names
// the weights belong to, found beside them.
//
// Why: `trainer predict` takes only weights=PATH, and our weights files are plain state dicts
// (model/weights_io.h) that do not name their model. A checkpoint (.ckpt) carries its run's
// config; a .pt exported by a run sits in <run>/weights/ next to <run>/args.yaml. Either gives the
// model name and the dataset yaml (class names, pose's kpt_shape); `model=` and `data=` override
// them, and are required for weights from elsewhere; a reference (Ultralytics) checkpoint records
// its model and class names itself.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset_yaml.h"
#include "engine/task/task_definition.h"
#include "model/model_name.h"
#include "model/reference_pickle.h"
#include "model/yolo_model.h"

namespace trainer::engine {

struct ModelFromWeights {
  model::ModelName name;            // the architecture built
  model::YoloModel model{nullptr};  // on the CPU, weights loaded, training mode
  std::unique_ptr<TaskDefinition> task{};
  data::DatasetSpec dataset{};            // names, kpt_shape
  std::filesystem::path config_source{};  // where the model name came from (empty: `model=`)
  std::optional<model::ReferenceInfo> reference{};  // a reference checkpoint's own record
};

// `model_name` and `data_yaml` may be empty (then from the checkpoint's config or the run's
// args.yaml). Throws core::ConfigError when neither says, core::InputError for unreadable or
// mismatched weights (naming the file).
ModelFromWeights load_model_from_weights(const std::filesystem::path& weights,
                                         const std::string& model_name,
                                         const std::filesystem::path& data_yaml);

}  // namespace trainer::engine
