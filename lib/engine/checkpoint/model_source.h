// Where a run's model comes from: the architecture to build and the weights to start from.
//
// Why: `model:` may name an architecture (yolo26n, a yaml) or a weights file (.pt, or a .ckpt
// whose EMA weights are used), and `pretrained:` may add weights to transfer. What a weights file
// holds is read by engine/checkpoint/weights_source.h, once; this module applies the reference's
// rules for the two keys on top.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/config.h"
#include "engine/checkpoint/weights_source.h"
#include "model/model_name.h"

namespace trainer::engine {

struct ModelSource {
  model::ModelName name;               // the architecture to build (the dataset sets nc)
  std::filesystem::path weights;       // weights to transfer from; empty = start from scratch
  std::filesystem::path architecture;  // the file the architecture was read from (if any)
  // What `weights` holds, when read_model_source read it (resolve_model_source drops the tensors).
  std::optional<WeightsSource> pretrained;
};

// Resolves `model:` and `pretrained:` as the reference does: a weights file gives architecture
// and weights (no weights with `pretrained: false`); `pretrained: PATH` gives the weights whatever
// `model:` is; `pretrained: true` with an architecture name gives none (no downloads here). Throws
// core::ConfigError when a .pt's architecture cannot be found, naming the way out.
ModelSource resolve_model_source(const core::TrainConfig& config);

// resolve_model_source with the weights to transfer read as well (`pretrained` set), for a run
// that starts from them: each file is read once, a weights file given as `model:` for its
// architecture and its tensors together. A resume (`resume:` set) reads no weights: its
// checkpoint holds them.
ModelSource read_model_source(const core::TrainConfig& config);

// The run's task as resolved_task() decides it (`task:` when given, else a weights file's own, else
// the model name's), from a source already resolved: the weights file is not read again.
core::Task resolved_task(const core::TrainConfig& config, const ModelSource& source);

}  // namespace trainer::engine
