// Weights files: a `torch.save`-format dict {state-dict key: tensor}, readable and writable by
// plain PyTorch (`torch.load(path)` / `torch.save(dict, path)`), so users can take ours to the
// reference. Reading also takes a plain state_dict() (an OrderedDict) and the reference's own
// checkpoints (model/reference_checkpoint.h), whose pickled modules give the tensors.
//
// Why this format: torch::pickle_save / pickle_load speak the torch.save zip format without
// TorchScript, and a dict of tensors loads in Python with weights_only=True.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/reference_pickle.h"

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

// What a weights file holds: its tensors by state-dict key, and for a reference checkpoint what
// model they belong to (its yaml, class names, run arguments).
struct WeightsFile {
  NamedTensorList weights;
  std::optional<ReferenceInfo> reference;
};

// Reads a weights file: a dict of string -> tensor, or a reference checkpoint (its EMA when
// present, else its model; floating tensors as fp32). Throws core::InputError naming the file
// when it is missing, not a torch.save file, or neither of those.
WeightsFile read_weights(const std::filesystem::path& path);
WeightsFile parse_weights_file(const std::vector<char>& bytes, const std::string& file);

// For a reference checkpoint, what it says about its model (its tensors are not made); nullopt for
// any other torch.save file. Throws core::InputError like read_weights.
std::optional<ReferenceInfo> reference_info_of(const std::filesystem::path& path);

// Only the tensors of read_weights / parse_weights_file.
NamedTensorList read_weights_file(const std::filesystem::path& path);
NamedTensorList parse_weights(const std::vector<char>& bytes, const std::string& file);

// Copies `weights` into `module`. Every key of the module must be present with the same shape and
// no unexpected key may exist; otherwise throws core::InputError listing each missing,
// unexpected and mismatched key (with both shapes). Floating tensors are converted to the
// parameter's dtype (reference checkpoints store fp16); integer buffers must stay integer.
void load_weights(torch::nn::Module& module, const NamedTensorList& weights,
                  const std::string& source = "weights");
void load_weights(torch::nn::Module& module, const std::filesystem::path& path);

}  // namespace trainer::model
