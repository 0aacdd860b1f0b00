// See model_from_weights.h.
// Tested by tests/integration/test_cli_weights_alone.cpp: val/info/predict/fit from weights alone:
//   architecture and task adopted from the file, read once, per task.
#include "engine/checkpoint/model_from_weights.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/task.h"
#include "engine/checkpoint/task_model.h"
#include "engine/run_dataset_spec.h"
#include "model/fine_tune_transfer.h"
#include "model/fuse.h"
#include "model/weights_io.h"

namespace trainer::engine {
namespace fs = std::filesystem;
namespace {

std::string kpt_text(const std::optional<std::array<int, 2>>& shape) {
  return shape ? fmt::format("[{}, {}]", (*shape)[0], (*shape)[1]) : "none";
}

// A pose model's keypoint head is sized by the dataset: one whose kpt_shape is not the weights'
// would list every head tensor as a mismatch.
void check_keypoints(const WeightsSource& source, const model::ModelName& name,
                     const data::DatasetSpec& dataset) {
  if (!core::task_row(name.task).head.keypoints || !source.kpt_shape ||
      source.kpt_shape == dataset.kpt_shape) {
    return;
  }
  throw core::ConfigError(fmt::format(
      "{} was trained for kpt_shape {} (as {} says), but the dataset {} has kpt_shape {}: give "
      "the dataset these weights were trained on",
      source.path.string(), kpt_text(source.kpt_shape), source.names_source,
      dataset.yaml_file.empty() ? "given" : dataset.yaml_file.string(),
      kpt_text(dataset.kpt_shape)));
}

// The class rows are sized by the dataset too: say so once rather than list every class tensor.
void check_classes(const WeightsSource& source, const data::DatasetSpec& dataset) {
  if (source.names.empty() || source.names.size() == dataset.names.size()) return;
  throw core::ConfigError(fmt::format(
      "{} was trained for {} classes (as {} says), but the dataset {} has {}: give the dataset "
      "these weights were trained on (single_cls=true if it was trained with one class)",
      source.path.string(), source.names.size(), source.names_source,
      dataset.yaml_file.empty() ? "given" : dataset.yaml_file.string(), dataset.names.size()));
}

// A model= that is not the architecture the weights record would list every tensor as a
// mismatch: one line instead, naming both and what to do.
void check_architecture(const WeightsSource& source, const model::ModelName& name) {
  if (!source.architecture) return;
  const model::ModelName& own = *source.architecture;
  if (own.family == name.family && own.scale == name.scale && own.task == name.task) return;
  throw core::ConfigError(fmt::format(
      "{} holds {} weights (as {} says), but the model asked for is {}: drop model= (the "
      "weights name their architecture) or pass model={}",
      source.path.string(), own.display(), source.architecture_source.string(), name.display(),
      own.display()));
}

}  // namespace

model::ModelName architecture_for(const WeightsSource& source, const std::string& model_name,
                                  std::optional<core::Task> task) {
  model::ModelName name;
  if (!model_name.empty()) {
    name = model::parse_model_name(model_name);
    name.task = core::resolve_task(task, model_name);  // `model: yolo26n` with `task: segment`
  } else if (source.architecture) {
    name = *source.architecture;
  } else {
    throw core::ConfigError(source.path.string() +
                            ": the weights do not say which model and classes they are for (no "
                            "checkpoint config, no ../args.yaml); pass model=NAME (e.g. yolo26n) "
                            "and data=DATA_YAML");
  }
  // The class branches' widths as the weights have them (fine-tuning may have rebuilt them).
  name.cls_width = model::class_widths_of(source.weights);
  return name;
}

ModelFromWeights build_from_weights(const WeightsSource& source, const model::ModelName& name,
                                    const data::DatasetSpec& dataset) {
  check_architecture(source, name);
  check_classes(source, dataset);
  check_keypoints(source, name, dataset);
  ModelFromWeights out;
  out.name = name;
  out.dataset = dataset;
  out.reference = source.reference;
  out.model = build_task_model(name, dataset);
  model::load_weights(*out.model, source.weights, source.describe());
  return out;
}

ModelFromWeights load_model_from_weights(const fs::path& weights, const std::string& model_name,
                                         const fs::path& data_yaml) {
  const WeightsSource source = read_weights_source(weights);
  const model::ModelName name = architecture_for(source, model_name);
  data::DatasetSpec dataset;
  if (data_yaml.empty()) {
    dataset = source.dataset();
  } else {
    dataset = data::load_dataset_yaml(data_yaml, /*check_paths=*/false);  // names, kpt_shape
    if (source.run_config) dataset = run_dataset_spec(*source.run_config, dataset);  // single_cls
  }
  ModelFromWeights out = build_from_weights(source, name, dataset);
  if (model_name.empty()) out.config_source = source.architecture_source;
  out.recorded = recorded_arguments(source);
  return out;
}

ModelFromWeights model_to_describe(const std::string& model, int nc, const fs::path& weights) {
  ModelFromWeights out;
  if (is_weights_file(model)) {
    out = load_model_from_weights(model, "", "");
  } else {
    out.name = model::parse_model_name(model);
    out.model = model::build_yolo_model(out.name, nc);
  }
  if (!weights.empty()) {
    const WeightsSource extra = read_weights_source(weights);
    model::load_weights(*out.model, extra.weights, extra.describe());
  }
  return out;
}

model::ModelName adopt_weights_architecture(const WeightsSource& source, bool model_given,
                                            core::TrainConfig& config) {
  const bool own_model = source.reference || !model_given || is_weights_file(config.model.model);
  const model::ModelName name = own_model && source.architecture
                                    ? architecture_for(source, "")
                                    : architecture_for(source, config.model.model, config.run.task);
  if (own_model && source.reference && config.model.model != name.display() &&
      config.model.model != source.path.string()) {
    spdlog::info("model: {} from the reference checkpoint {} (the config's {} is not used)",
                 name.display(), source.path.string(), config.model.model);
  } else if (own_model && source.architecture && !source.reference) {
    spdlog::info("model: {} as its run recorded it ({})", name.display(),
                 source.architecture_source.string());
  }
  config.model.model = name.display();
  config.run.task = name.task;
  return name;
}

model::YoloModel inference_copy(model::YoloModelImpl& model, const c10::Device& device,
                                bool use_one2many) {
  model.to(device);
  model::YoloModel fused = model::fused_copy(model);
  model::keep_decoded_branch(*fused, use_one2many);
  return fused;
}

}  // namespace trainer::engine
