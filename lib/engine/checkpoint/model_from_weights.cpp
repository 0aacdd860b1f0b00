// See model_from_weights.h.
#include "engine/checkpoint/model_from_weights.h"

#include <algorithm>
#include <array>
#include <optional>

#include "core/config_loader.h"
#include "core/error.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/run_dataset.h"
#include "model/fine_tune_transfer.h"
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
  spec.names = model::reference_class_names(info);
  if (spec.names.empty()) {
    throw core::InputError(weights.string() + ": a reference checkpoint without class names");
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
  std::optional<model::WeightsFile> pt;  // read once: its tensors, and what a reference one records
  std::optional<core::TrainConfig> run_config;
  if (weights.extension() == ".ckpt") {
    checkpoint = load_checkpoint(weights);
    if (!checkpoint->config_yaml.empty()) {
      run_config = core::load_config_text(checkpoint->config_yaml, weights.string() + " (config)",
                                          weights.parent_path())
                       .config;
      out.config_source = weights;
    }
  } else {
    pt = model::read_weights(weights);
    out.reference = pt->reference;
    const fs::path args = weights.parent_path().parent_path() / "args.yaml";
    if (out.reference) {
      out.config_source = weights;  // its args.yaml, if any, is the reference's, not ours
    } else if (fs::exists(args)) {
      run_config = core::load_config(args).config;
      out.config_source = args;
    }
  }
  std::string name = model_name;
  if (name.empty() && run_config) name = run_config->model.model;
  if (name.empty() && out.reference) {
    name = model::reference_model_name(*out.reference, weights.string()).display();
  }
  fs::path data = data_yaml;
  if (data.empty() && run_config) data = run_config->data.data;
  // A reference checkpoint's own class names (and keypoint shape) stand in for a dataset.
  const bool reference_classes = data.empty() && out.reference;
  if (name.empty() || (data.empty() && !reference_classes)) {
    throw core::ConfigError(weights.string() +
                            ": the weights do not say which model and classes they are for (no "
                            "checkpoint config, no ../args.yaml); pass model=NAME (e.g. yolo26n) "
                            "and data=DATA_YAML");
  }
  if (!model_name.empty()) out.config_source.clear();
  const std::optional<core::Task> task =
      model_name.empty() && run_config ? run_config->run.task : std::nullopt;
  out.task = make_task_definition(core::resolve_task(task, name));
  out.name = model::parse_model_name(name);
  out.name.task = out.task->task();  // `model: yolo26n` with `task: segment` built the segment head
  // The class branches' widths as the weights have them (fine-tuning may have rebuilt them).
  out.name.cls_width = model::class_widths_of(checkpoint ? ema_weights(*checkpoint) : pt->weights);
  if (reference_classes) {
    out.dataset = reference_dataset(*out.reference, weights);
  } else {
    out.dataset = data::load_dataset_yaml(data, /*check_paths=*/false);  // only names, kpt_shape
    if (run_config) out.dataset = run_dataset_spec(*run_config, out.dataset);  // single_cls
  }
  out.model = out.task->build_model(out.name, out.dataset);
  if (checkpoint) {
    load_checkpoint_weights(*out.model, *checkpoint, weights);
  } else {
    model::load_weights(*out.model, pt->weights, "weights file " + weights.string());
  }
  return out;
}

}  // namespace trainer::engine
