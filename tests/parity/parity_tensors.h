// Tensors exchanged with the reference oracle (tests/parity/oracle.py): written with torch.save's
// format, read back by name, and compared.
//
// Why shared: every parity test hands tensors to the oracle and compares what comes back the same
// way; one definition keeps the file format and the comparison rule identical between them.
#pragma once

#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/torch_save.h"
#include "model/weights_io.h"
#include "test_support.h"

namespace trainer::test {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// A dict of CPU tensors in torch.save's zip format (torch.load reads it).
inline void save_tensors(const std::filesystem::path& file, const NamedTensors& tensors) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [k, v] : tensors) dict.insert(k, v.detach().cpu().contiguous());
  const auto bytes = model::torch_save_bytes(c10::IValue(dict));
  write_text(file, std::string(bytes.begin(), bytes.end()));
}

// What the oracle saved, by name.
inline std::map<std::string, at::Tensor> load_tensors(const std::filesystem::path& file) {
  std::map<std::string, at::Tensor> out;
  for (auto& [k, v] : model::read_weights_file(file)) out.emplace(k, v);
  return out;
}

// Per-level head outputs (B, C, H, W) joined over anchors: (B, C, A).
inline at::Tensor flat_levels(const std::vector<at::Tensor>& levels) {
  std::vector<at::Tensor> out;
  for (const auto& t : levels) out.push_back(t.flatten(2));
  return torch::cat(out, 2);
}

// Largest absolute difference (shapes must agree).
inline double max_abs(const at::Tensor& a, const at::Tensor& b) {
  REQUIRE(a.sizes() == b.sizes());
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

}  // namespace trainer::test
