// See model_source.h.
#include "engine/checkpoint/model_source.h"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "core/config_loader.h"
#include "core/error.h"
#include "core/task.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/run_dataset.h"
#include "model/reference_architecture.h"

namespace trainer::engine {
namespace {

namespace fs = std::filesystem;

// A weights file's recorded `model:` may itself be a weights file (a fine-tuned run): follow it.
model::ModelName architecture_from_config(const core::TrainConfig& config, const fs::path& from,
                                          int depth) {
  if (!is_weights_file(config.model.model)) {
    // `model: yolo26n` with `task: segment` trained the segment head: the recorded task wins.
    model::ModelName name = model::parse_model_name(config.model.model);
    if (config.run.task) name.task = *config.run.task;
    return name;
  }
  if (depth > 8) throw core::ConfigError("model: " + from.string() + ": weights files form a loop");
  const fs::path next = config.model.model;
  if (next.extension() == ".ckpt") {
    const Checkpoint ckpt = load_checkpoint(next);
    const auto loaded = core::load_config_text(ckpt.config_yaml, next.string(), next.parent_path());
    return architecture_from_config(loaded.config, next, depth + 1);
  }
  return architecture_of(next);
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

bool is_weights_file(const std::string& model) {
  const auto ext = fs::path(model).extension().string();
  return ext == ".pt" || ext == ".ckpt";
}

namespace {

// The run config a .ckpt carries.
core::TrainConfig checkpoint_config(const Checkpoint& ckpt, const fs::path& path) {
  return core::load_config_text(ckpt.config_yaml, path.string(), path.parent_path()).config;
}

fs::path run_args_of(const fs::path& weights) {
  return fs::absolute(weights).parent_path().parent_path() / "args.yaml";
}

// The config of the run whose weights/ holds the .pt `weights` (RUN/args.yaml); throws
// core::ConfigError naming the way out when there is none.
core::TrainConfig recorded_run_config(const fs::path& weights) {
  const fs::path args = run_args_of(weights);
  if (!fs::is_regular_file(args)) {
    throw core::ConfigError(fmt::format(
        "model: {}: a .pt file holds weights only and no {} records its architecture; name the "
        "architecture and transfer the weights instead: model=yolo26n pretrained={}",
        weights.string(), args.string(), weights.string()));
  }
  return core::load_config_text(read_text(args), args.string(), args.parent_path()).config;
}

// A .pt's architecture: what a reference checkpoint records (`reference`; its args.yaml beside
// it is the reference's, not ours), else the args.yaml of the run whose weights/ holds it.
model::ModelName architecture_of_pt(const fs::path& weights,
                                    const std::optional<model::ReferenceInfo>& reference) {
  if (reference) return model::reference_model_name(*reference, weights.string());
  return architecture_from_config(recorded_run_config(weights), weights, 1);
}

}  // namespace

model::ModelName architecture_of(const fs::path& weights) {
  if (!fs::is_regular_file(weights)) {
    throw core::ConfigError("weights file not found: " + weights.string());
  }
  if (weights.extension() == ".ckpt") {
    return architecture_from_config(checkpoint_config(load_checkpoint(weights), weights), weights,
                                    1);
  }
  // An unreadable file is left to the weights loader, which names the problem.
  std::optional<model::ReferenceInfo> reference;
  try {
    reference = model::reference_info_of(weights);
  } catch (const core::InputError&) {
  }
  return architecture_of_pt(weights, reference);
}

ModelSource resolve_model_source(const core::TrainConfig& config) {
  ModelSource source;
  const model::ClassWidths widths = model::parse_class_widths(config.model.cls_width);
  const std::string& model = config.model.model;
  const std::string& pretrained = config.model.pretrained;
  if (is_weights_file(model)) {
    source.name = architecture_of(model);
    source.architecture = model;
    if (pretrained == "true") source.weights = model;
  } else {
    source.name = model::parse_model_name(model);
  }
  if (pretrained != "true" && pretrained != "false") source.weights = pretrained;
  source.name.cls_width = widths;  // the run's own (a weights file's run was for its classes)
  return source;
}

model::NamedTensorList read_weights_or_ema(const fs::path& path) {
  if (path.extension() == ".ckpt") return ema_weights(load_checkpoint(path));
  return model::read_weights_file(path);
}

namespace {

// The class names of the dataset a run of ours trained on; empty when its yaml is unreadable.
std::pair<std::vector<std::string>, std::string> run_class_names(const core::TrainConfig& config) {
  try {
    const auto spec = data::load_dataset_yaml(config.data.data, /*check_paths=*/false);
    return {run_dataset_spec(config, spec).names, config.data.data};
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

namespace {

// A .ckpt's EMA weights, and the class names of its run (`recorded`: its config).
PretrainedWeights pretrained_in_checkpoint(const Checkpoint& ckpt,
                                           const core::TrainConfig& recorded) {
  PretrainedWeights out;
  out.weights = ema_weights(ckpt);
  if (!ckpt.config_yaml.empty()) std::tie(out.names, out.names_source) = run_class_names(recorded);
  return out;
}

// A .pt's tensors, and its class names: a reference checkpoint's own, else those of the run
// `recorded` (RUN/args.yaml's config; none when it is absent or unreadable).
PretrainedWeights pretrained_in_file(model::WeightsFile file, const fs::path& path,
                                     const core::TrainConfig* recorded) {
  PretrainedWeights out;
  out.weights = std::move(file.weights);
  if (file.reference) {
    out.names = model::reference_class_names(*file.reference);
    if (!out.names.empty()) out.names_source = path.string();
  } else if (recorded) {
    std::tie(out.names, out.names_source) = run_class_names(*recorded);
  }
  return out;
}

}  // namespace

PretrainedWeights read_pretrained(const fs::path& path) {
  if (path.extension() == ".ckpt") {
    const Checkpoint ckpt = load_checkpoint(path);
    return pretrained_in_checkpoint(
        ckpt, ckpt.config_yaml.empty() ? core::TrainConfig{} : checkpoint_config(ckpt, path));
  }
  model::WeightsFile file = model::read_weights(path);
  std::optional<core::TrainConfig> recorded;
  if (!file.reference && fs::is_regular_file(run_args_of(path))) {
    try {
      recorded = recorded_run_config(path);
    } catch (const std::exception&) {
    }
  }
  return pretrained_in_file(std::move(file), path, recorded ? &*recorded : nullptr);
}

ModelSource read_model_source(const core::TrainConfig& config) {
  const bool transfers = config.run.resume.empty();
  const std::string& model = config.model.model;
  if (!transfers || !is_weights_file(model) || config.model.pretrained != "true") {
    ModelSource source = resolve_model_source(config);  // a weights file's architecture only
    if (transfers && !source.weights.empty()) source.pretrained = read_pretrained(source.weights);
    return source;
  }
  // `model:` a weights file whose own tensors are transferred: one read of it, and one parse of
  // the run config it records, give the architecture, the tensors and the class names.
  const fs::path path = model;
  if (!fs::is_regular_file(path)) throw core::ConfigError("weights file not found: " + model);
  ModelSource source;
  source.architecture = path;
  source.weights = path;
  if (path.extension() == ".ckpt") {
    const Checkpoint ckpt = load_checkpoint(path);
    const core::TrainConfig recorded = checkpoint_config(ckpt, path);
    source.name = architecture_from_config(recorded, path, 1);
    source.pretrained = pretrained_in_checkpoint(ckpt, recorded);
  } else {
    std::optional<model::WeightsFile> file;
    try {
      file = model::read_weights(path);
    } catch (const core::InputError&) {
      if (!fs::is_regular_file(run_args_of(path))) (void)recorded_run_config(path);  // said first
      throw;
    }
    std::optional<core::TrainConfig> recorded;
    if (file->reference) {
      source.name = model::reference_model_name(*file->reference, path.string());
    } else {
      recorded = recorded_run_config(path);
      source.name = architecture_from_config(*recorded, path, 1);
    }
    source.pretrained = pretrained_in_file(std::move(*file), path, recorded ? &*recorded : nullptr);
  }
  source.name.cls_width = model::parse_class_widths(config.model.cls_width);
  return source;
}

core::Task resolved_task(const core::TrainConfig& config, const ModelSource& source) {
  if (!config.run.task && is_weights_file(config.model.model)) return source.name.task;
  return core::resolve_task(config.run.task, config.model.model);
}

}  // namespace trainer::engine
