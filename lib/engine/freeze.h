// The `freeze` key: which layers stop learning when fine-tuning.
//
// Why: the reference freezes by layer index (model.0..N-1 or a list): their parameters lose
// requires_grad and their BatchNorm layers keep the pretrained statistics (eval mode while the
// rest trains). Keeping the rule here lets the context, the optimizer groups and the tests agree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/yolo_model.h"

namespace trainer::engine {

// The layer indices `freeze` names: "" none, "N" 0..N-1, "[i, j]" those. Throws core::ConfigError
// for an index past the model's `layers`.
std::vector<int64_t> frozen_layer_indices(const std::string& freeze, int64_t layers);

// Freezes `layers` of `model`: their parameters' requires_grad becomes false and their BatchNorm
// layers go to eval mode. Returns the frozen parameters' names. Throws core::ConfigError when
// nothing trainable would be left.
std::vector<std::string> freeze_layers(model::YoloModelImpl& model,
                                       const std::vector<int64_t>& layers);

// Puts the BatchNorm layers of `layers` back in eval mode (after a model.train()).
void keep_frozen_batchnorm_eval(model::YoloModelImpl& model, const std::vector<int64_t>& layers);

}  // namespace trainer::engine
