// A model built for a weights file, ready for inference: the architecture the weights record (or
// the one a command names), the class names, the task's head, the tensors loaded.
//
// Why: `trainer val`, `predict`, `info` and `export` take weights and little else. What the file
// holds is read once (engine/checkpoint/weights_source.h); this module decides what to build from
// that answer, so the data path (the task, pose's keypoint shape) and the model agree, and checks
// a dataset given beside the weights against what they were trained for.
#pragma once

#include <c10/core/Device.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/config.h"
#include "data/dataset_yaml.h"
#include "engine/checkpoint/recorded_arguments.h"
#include "engine/checkpoint/weights_source.h"
#include "model/model_name.h"
#include "model/reference_pickle.h"
#include "model/yolo_model.h"

namespace trainer::engine {

struct ModelFromWeights {
  model::ModelName name;                  // the architecture built
  model::YoloModel model{nullptr};        // on the CPU, weights loaded, training mode
  data::DatasetSpec dataset{};            // names, kpt_shape
  std::filesystem::path config_source{};  // where the model name came from (empty: `model=`)
  std::optional<model::ReferenceInfo> reference{};  // a reference checkpoint's own record
  RecordedArguments recorded{};  // what the weights' run recorded (data, imgsz, single_cls)
};

// The architecture to build for `source`: `model_name` when given (with `task`, else its name's
// task), else the one the weights record; with the class widths the tensors have. Throws
// core::ConfigError naming the way out when neither says.
model::ModelName architecture_for(const WeightsSource& source, const std::string& model_name,
                                  std::optional<core::Task> task = std::nullopt);

// `name` with its task's head for `dataset`, `source`'s tensors loaded. Throws core::ConfigError
// when the dataset's keypoint shape is not the one the weights were trained for, core::InputError
// (naming the file) for tensors that do not fit.
ModelFromWeights build_from_weights(const WeightsSource& source, const model::ModelName& name,
                                    const data::DatasetSpec& dataset);

// read_weights_source, architecture_for and build_from_weights: `model_name` and `data_yaml` may
// be empty (then what the weights record; a dataset given is read without checking its paths).
ModelFromWeights load_model_from_weights(const std::filesystem::path& weights,
                                         const std::string& model_name,
                                         const std::filesystem::path& data_yaml);

// `trainer info`'s model: a weights file's own (load_model_from_weights) when `model` names one,
// else the built-in `model` built for `nc` classes; with `weights` (non-empty), that file's tensors
// loaded into it, every key checked. Each file is read once.
ModelFromWeights model_to_describe(const std::string& model, int nc,
                                   const std::filesystem::path& weights);

// `trainer val`'s choice: the architecture `source` records, unless the config names one of its
// own (`model_given`: model= on the command line, or a config file's model: that is not the
// default) and the weights are not a reference checkpoint (whose own model is always the one
// scored). Writes the choice into `config` (model, task), so the data path follows it, and logs
// where it came from.
model::ModelName adopt_weights_architecture(const WeightsSource& source, bool model_given,
                                            core::TrainConfig& config);

// An inference copy of `model` on `device`: BatchNorms folded and only the head branch the
// postprocess decodes (model/fuse.h), as the reference runs val and predict.
model::YoloModel inference_copy(model::YoloModelImpl& model, const c10::Device& device,
                                bool use_one2many);

}  // namespace trainer::engine
