// Weights files: a `torch.save`-format dict {state-dict key: tensor}, readable and writable by
// plain PyTorch (`torch.load(path)` / `torch.save(dict, path)`), so users can bring weights from a
// reference checkpoint (scripts/convert_weights.py) and take ours back.
//
// Why this format: torch::pickle_save / pickle_load speak the torch.save zip format without
// TorchScript, and a dict of tensors loads in Python with weights_only=True.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace torch::nn {
class Module;
}

namespace trainer::model {

using NamedTensorList = std::vector<std::pair<std::string, at::Tensor>>;

// Every parameter and buffer under its state-dict key, in PyTorch's state_dict() order (per
// module: parameters, buffers, then children).
NamedTensorList state_dict(const torch::nn::Module& module);

// Writes every parameter and buffer of `module` (as stored: dtype, CPU copy) to `path`,
// atomically (a temporary file renamed into place).
void save_weights(const torch::nn::Module& module, const std::filesystem::path& path);

// Reads a weights file into a list of (key, tensor). Throws core::InputError naming the file
// when it is missing, not a torch.save file, or not a dict of string -> tensor.
NamedTensorList read_weights_file(const std::filesystem::path& path);

// The same for the bytes of a weights file; `file` names it in the errors.
NamedTensorList parse_weights(const std::vector<char>& bytes, const std::string& file);

// Copies `weights` into `module`. Every key of the module must be present with the same shape and
// no unexpected key may exist; otherwise throws core::InputError listing each missing,
// unexpected and mismatched key (with both shapes). Floating tensors are converted to the
// parameter's dtype (reference checkpoints store fp16); integer buffers must stay integer.
void load_weights(torch::nn::Module& module, const NamedTensorList& weights,
                  const std::string& source = "weights");
void load_weights(torch::nn::Module& module, const std::filesystem::path& path);

}  // namespace trainer::model
