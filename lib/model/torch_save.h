// The bytes of `torch.save(value)` that Python reads with plain `torch.load(path)`.
//
// Why: torch::pickle_save wraps every typed dict and list in torch.jit._pickle.restore_type_tag,
// which torch.load's default (weights_only=True, since torch 2.6) refuses. Weights files,
// checkpoints and the parity tests' tensor files all go through this one writer instead.
#pragma once

#include <ATen/core/ivalue.h>

#include <vector>

namespace trainer::model {

// The torch.save zip format of `value` (dicts, lists, strings, numbers, None, tensors), without
// TorchScript type tags. torch::pickle_load reads it back as generic containers.
std::vector<char> torch_save_bytes(const c10::IValue& value);

}  // namespace trainer::model
