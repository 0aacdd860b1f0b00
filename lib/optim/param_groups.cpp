// See param_groups.h.
#include "optim/param_groups.h"

#include <torch/torch.h>

#include <array>

namespace trainer::optim {
namespace {

bool is_norm_module(const torch::nn::Module& module) {
  return module.as<torch::nn::BatchNorm1d>() || module.as<torch::nn::BatchNorm2d>() ||
         module.as<torch::nn::BatchNorm3d>() || module.as<torch::nn::LayerNorm>() ||
         module.as<torch::nn::GroupNorm>() || module.as<torch::nn::InstanceNorm1d>() ||
         module.as<torch::nn::InstanceNorm2d>() || module.as<torch::nn::InstanceNorm3d>() ||
         module.as<torch::nn::LocalResponseNorm>() || module.as<torch::nn::CrossMapLRN2d>();
}

const char* kind_name(GroupKind kind) {
  switch (kind) {
    case GroupKind::kWeight:
      return "weight";
    case GroupKind::kNorm:
      return "bn";
    case GroupKind::kBias:
      return "bias";
    case GroupKind::kMuon:
      return "muon";
  }
  return "?";
}

}  // namespace

bool is_classification_tower(const std::string& name, const std::string& head_prefix) {
  if (head_prefix.empty() || name.rfind(head_prefix, 0) != 0) return false;
  const std::string rest = name.substr(head_prefix.size());
  return rest.rfind("cv3.", 0) == 0 || rest.rfind("one2one_cv3.", 0) == 0;
}

std::vector<ParamGroup> build_param_groups(const torch::nn::Module& model,
                                           const GroupingOptions& options) {
  // The reference's order (8.4.190): under MuSGD each of g0 weight, g1 bn, g2 bias, g3 muon is
  // split into its x3-lr head part first and the rest second (8 groups, empty ones kept, so the
  // results.csv lr/pgN columns mean the same group in every run); otherwise weight, bn, bias.
  // Index: kind * 2 + (head ? 0 : 1).
  std::array<ParamGroup, 8> groups;
  for (int k = 0; k < 4; ++k) {
    for (int is_head = 1; is_head >= 0; --is_head) {
      ParamGroup& g = groups[k * 2 + (is_head ? 0 : 1)];
      g.kind = static_cast<GroupKind>(k);
      g.name = std::string(kind_name(g.kind)) + (is_head ? "_head" : "");
      g.lr = g.initial_lr = options.lr * (is_head ? options.head_lr_multiplier : 1.0);
      g.momentum = options.momentum;
      g.nesterov = true;
      g.use_muon = g.kind == GroupKind::kMuon;
      g.weight_decay =
          (g.kind == GroupKind::kWeight || g.kind == GroupKind::kMuon) ? options.weight_decay : 0.0;
    }
  }
  auto add_parameters_of = [&](const std::string& module_name, const torch::nn::Module& module) {
    const bool norm = is_norm_module(module);
    for (const auto& param : module.named_parameters(/*recurse=*/false)) {
      const std::string full = module_name.empty() ? param.key() : module_name + "." + param.key();
      if (options.excluded.count(full)) continue;
      const at::Tensor& tensor = param.value();
      GroupKind kind;
      if (options.use_muon && (tensor.dim() == 2 || tensor.dim() == 4)) {
        kind = GroupKind::kMuon;
      } else if (full.find("bias") != std::string::npos) {
        kind = GroupKind::kBias;
      } else if (norm || full.find("logit_scale") != std::string::npos) {
        kind = GroupKind::kNorm;
      } else {
        kind = GroupKind::kWeight;
      }
      const bool head = options.use_muon && is_classification_tower(full, options.head_prefix);
      groups[static_cast<int>(kind) * 2 + (head ? 0 : 1)].params.push_back(tensor);
    }
  };
  // The root's own parameters first (named_modules(include_self) needs a shared_ptr root).
  add_parameters_of("", model);
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    add_parameters_of(item.key(), *item.value());
  }
  std::vector<ParamGroup> out;
  for (int index = 0; index < 8; ++index) {
    const bool head_part = index % 2 == 0;
    const bool muon = groups[index].kind == GroupKind::kMuon;
    if (options.use_muon || (!head_part && !muon)) out.push_back(std::move(groups[index]));
  }
  return out;
}

}  // namespace trainer::optim
