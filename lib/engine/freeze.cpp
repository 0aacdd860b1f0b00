// See freeze.h.
#include "engine/freeze.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace trainer::engine {
namespace {

bool in_layers(const std::string& name, const std::vector<int64_t>& layers) {
  return std::any_of(layers.begin(), layers.end(),
                     [&](int64_t i) { return name.rfind(fmt::format("model.{}.", i), 0) == 0; });
}

}  // namespace

std::vector<int64_t> frozen_layer_indices(const std::string& freeze, int64_t layers) {
  std::vector<int64_t> out;
  if (freeze.empty()) return out;
  if (freeze.front() != '[') {
    const int64_t n = std::stoll(freeze);
    for (int64_t i = 0; i < std::min(n, layers); ++i) out.push_back(i);
    return out;
  }
  std::string text = freeze.substr(1, freeze.size() - 2);
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const int64_t i = std::stoll(text.substr(pos, comma - pos));
    if (i >= layers) {
      throw core::ConfigError(fmt::format(
          "freeze: layer {} does not exist (the model has layers 0..{})", i, layers - 1));
    }
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    pos = comma + 1;
  }
  return out;
}

std::vector<std::string> freeze_layers(model::YoloModelImpl& model,
                                       const std::vector<int64_t>& layers) {
  std::vector<std::string> frozen;
  bool any_trainable = false;
  for (auto& p : model.named_parameters()) {
    if (in_layers(p.key(), layers)) {
      p.value().set_requires_grad(false);
      frozen.push_back(p.key());
    } else if (p.value().requires_grad()) {
      any_trainable = true;
    }
  }
  if (!frozen.empty() && !any_trainable) {
    throw core::ConfigError("freeze: every parameter would be frozen; freeze fewer layers");
  }
  keep_frozen_batchnorm_eval(model, layers);
  return frozen;
}

void keep_frozen_batchnorm_eval(model::YoloModelImpl& model, const std::vector<int64_t>& layers) {
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    if (item.value()->as<torch::nn::BatchNorm2d>() && in_layers(item.key() + ".", layers)) {
      item.value()->eval();
    }
  }
}

}  // namespace trainer::engine
