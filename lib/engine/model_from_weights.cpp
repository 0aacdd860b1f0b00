// See model_from_weights.h.
#include "engine/model_from_weights.h"

#include <algorithm>
#include <array>
#include <optional>

#include "core/config_loader.h"
#include "core/error.h"
#include "engine/checkpoint.h"
#include "engine/run_dataset.h"
#include "model/model_name.h"
#include "model/reference_architecture.h"
#include "model/weights_io.h"

namespace trainer::engine {
namespace fs = std::filesystem;
namespace {

// A dataset spec with only what a model needs from it, from a reference checkpoint: its class
// names (model.names, else "0", "1", ... for yaml's nc) and pose's keypoint shape.
data::DatasetSpec reference_dataset(const model::ReferenceInfo& info, const fs::path& weights) {
  data::DatasetSpec spec;
  int64_t nc = info.nc.value_or(0);
  for (const auto& entry : info.names) nc = std::max(nc, entry.first + 1);
  if (nc <= 0 || nc > 100000) {
    throw core::InputError(weights.string() + ": a reference checkpoint without class names");
  }
  spec.names.resize(static_cast<size_t>(nc));
  for (int64_t i = 0; i < nc; ++i) spec.names[static_cast<size_t>(i)] = std::to_string(i);
  for (const auto& [index, name] : info.names) {
    if (index >= 0) spec.names[static_cast<size_t>(index)] = name;
  }
  if (info.kpt_shape.size() == 2) {
    spec.kpt_shape = std::array<int, 2>{static_cast<int>(info.kpt_shape[0]),
                                        static_cast<int>(info.kpt_shape[1])};
  }
  return spec;
}

}  // namespace

ModelFromWeights load_model_from_weights(const fs::path& weights, const std::string& model_name,
                                         const fs::path& data_yaml) {
  if (!fs::exists(weights)) throw core::InputError(weights.string() + ": no such weights file");
  ModelFromWeights out;
  std::optional<Checkpoint> checkpoint;
  std::optional<core::TrainConfig> run_config;
  std::optional<model::ReferenceInfo> reference;
  if (weights.extension() == ".ckpt") {
    checkpoint = load_checkpoint(weights);
    if (!checkpoint->config_yaml.empty()) {
      run_config = core::load_config_text(checkpoint->config_yaml, weights.string() + " (config)",
                                          weights.parent_path())
                       .config;
      out.config_source = weights;
    }
  } else if (auto info = model::reference_info_of(weights)) {
    reference = std::move(info);
    out.config_source = weights;
  } else {
    const fs::path args = weights.parent_path().parent_path() / "args.yaml";
    if (fs::exists(args)) {
      run_config = core::load_config(args).config;
      out.config_source = args;
    }
  }
  std::string name = model_name;
  if (name.empty() && run_config) name = run_config->model.model;
  if (name.empty() && reference) {
    name = model::reference_model_name(*reference, weights.string()).display();
  }
  fs::path data = data_yaml;
  if (data.empty() && run_config) data = run_config->data.data;
  if (!name.empty() && data.empty() && reference) {
    // The reference checkpoint's own class names (and keypoint shape) stand in for a dataset.
    out.task = make_task_definition(model::parse_model_name(name).task);
    out.dataset = reference_dataset(*reference, weights);
    out.model = out.task->build_model(model::parse_model_name(name), out.dataset);
    model::load_weights(*out.model, weights);
    return out;
  }
  if (name.empty() || data.empty()) {
    throw core::ConfigError(weights.string() +
                            ": the weights do not say which model and classes they are for (no "
                            "checkpoint config, no ../args.yaml); pass model=NAME (e.g. yolo26n) "
                            "and data=DATA_YAML");
  }
  if (!model_name.empty()) out.config_source.clear();
  const std::optional<core::Task> task =
      model_name.empty() && run_config ? run_config->run.task : std::nullopt;
  out.task = make_task_definition(core::resolve_task(task, name));
  out.dataset = data::load_dataset_yaml(data, /*check_paths=*/false);  // only names, kpt_shape
  if (run_config) out.dataset = run_dataset_spec(*run_config, out.dataset);  // single_cls: 1 class
  out.model = out.task->build_model(model::parse_model_name(name), out.dataset);
  if (checkpoint) {
    load_checkpoint_weights(*out.model, *checkpoint, weights);
  } else {
    model::load_weights(*out.model, weights);
  }
  return out;
}

}  // namespace trainer::engine
