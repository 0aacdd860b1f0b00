// Where a run's model comes from: the architecture to build and the weights to start from.
//
// Why: `model:` may name an architecture (yolo26n, a yaml) or a weights file (.pt, or a .ckpt
// whose EMA weights are used), and `pretrained:` may add weights to transfer. Our .pt files hold
// tensors only, so a weights file's architecture is read from the run that wrote it: a .ckpt
// carries its run's config; a RUN/weights/*.pt has RUN/args.yaml beside its folder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "model/model_name.h"
#include "model/weights_io.h"

namespace trainer::engine {

// Weights to fine-tune from, with the class names they were trained for.
struct PretrainedWeights {
  model::NamedTensorList weights;
  std::vector<std::string> names;  // empty when the file does not say (see read_pretrained)
  std::string names_source;        // where the names were read, for the log ("" for none)
};

struct ModelSource {
  model::ModelName name;               // the architecture to build (the dataset sets nc)
  std::filesystem::path weights;       // weights to transfer from; empty = start from scratch
  std::filesystem::path architecture;  // the file the architecture was read from (if any)
  // The tensors of `weights`, when read_model_source read them (resolve_model_source does not).
  std::optional<PretrainedWeights> pretrained;
};

bool is_weights_file(const std::string& model);

// Resolves `model:` and `pretrained:` as the reference does: a weights file gives architecture
// and weights (no weights with `pretrained: false`); `pretrained: PATH` gives the weights whatever
// `model:` is; `pretrained: true` with an architecture name gives none (no downloads here). Throws
// core::ConfigError when a .pt's architecture cannot be found, naming the way out.
ModelSource resolve_model_source(const core::TrainConfig& config);

// resolve_model_source with the weights to transfer read as well (`pretrained` set), for a run
// that starts from them: a weights file given as `model:` is read once, for its architecture and
// its tensors together (a .ckpt's config and EMA weights). A resume (`resume:` set) reads no
// weights: its checkpoint holds them. Throws as resolve_model_source and read_pretrained.
ModelSource read_model_source(const core::TrainConfig& config);

// The run's task as resolved_task() decides it (`task:` when given, else a weights file's own, else
// the model name's), from a source already resolved: the weights file is not read again.
core::Task resolved_task(const core::TrainConfig& config, const ModelSource& source);

// The architecture a weights file was trained as (see the file comment).
model::ModelName architecture_of(const std::filesystem::path& weights);

// A .pt file's tensors, or a .ckpt's EMA weights.
model::NamedTensorList read_weights_or_ema(const std::filesystem::path& path);

// A .pt or .ckpt as read_weights_or_ema, and its class names: a reference checkpoint's
// model.names; for ours, the classes of the dataset its run trained on (the run's config in a
// .ckpt, RUN/args.yaml for RUN/weights/*.pt), when that dataset yaml is still readable.
PretrainedWeights read_pretrained(const std::filesystem::path& path);

}  // namespace trainer::engine
