// The torch.save file format: the bytes of `torch.save(value)` that Python reads with plain
// `torch.load(path)`, and the one reader of such bytes.
//
// Why: torch::pickle_save wraps every typed dict and list in torch.jit._pickle.restore_type_tag,
// which torch.load's default (weights_only=True, since torch 2.6) refuses. Weights files,
// checkpoints and the parity tests' tensor files all go through this one writer instead. Reading
// goes through the restricted unpickler (torch_file.h), which never runs what a pickle names and
// checks every size before it trusts it.
#pragma once

#include <ATen/core/ivalue.h>

#include <functional>
#include <string>
#include <vector>

namespace trainer::model {

// The torch.save zip format of `value` (dicts, lists, strings, numbers, None, tensors), without
// TorchScript type tags. torch_load_bytes reads it back as generic containers.
std::vector<char> torch_save_bytes(const c10::IValue& value);

// The plain data that torch.save `bytes` hold (model::TorchFile::to_ivalue). Throws
// core::InputError(describe(problem)); `describe` names the file.
c10::IValue torch_load_bytes(const std::vector<char>& bytes,
                             const std::function<std::string(const std::string&)>& describe);

}  // namespace trainer::model
