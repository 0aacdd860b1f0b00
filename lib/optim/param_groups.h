// Parameter groups built from a module tree by the reference's rules.
//
// Why: which update rule, decay and lr a tensor gets is decided by its shape, its name and the kind
// of module that owns it; doing that in one function keeps the optimizer and the model independent.
// Rules (reference `build_optimizer`), tested in this order for each parameter:
//   1. MuSGD and ndim in {2, 4}       -> muon  (decay)
//   2. "bias" in the full name        -> bias  (no decay)
//   3. owner is a norm layer          -> norm  (no decay)
//   4. anything else                  -> weight (decay)
// Under MuSGD each group is split in two: parameters of the detection head's classification towers
// (`<head>.cv3.*`, `<head>.one2one_cv3.*`) get lr x head_lr_multiplier (3). Order as 8.4.190:
// MuSGD: weight_head, weight, bn_head, bn, bias_head, bias, muon_head, muon (8 groups, empty ones
// kept); otherwise weight, bn, bias (3 groups).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "optim/param_group.h"

namespace torch::nn {
class Module;
}

namespace trainer::optim {

struct GroupingOptions {
  bool use_muon = false;  // MuSGD: muon groups and the head split
  double lr = 0.01;       // initial lr of every group (before the head multiplier)
  double momentum = 0.937;
  double weight_decay = 5e-4;  // already scaled by batch/nbs (scaled_weight_decay)
  double head_lr_multiplier = 3.0;
  std::string head_prefix;  // e.g. "model.23." (empty: no head split)
  // Full parameter names left out of every group (the layers `freeze` froze).
  std::set<std::string> excluded;
};

std::vector<ParamGroup> build_param_groups(const torch::nn::Module& model,
                                           const GroupingOptions& options);

// True when `name` (a full parameter name) belongs to the head's classification towers.
bool is_classification_tower(const std::string& name, const std::string& head_prefix);

}  // namespace trainer::optim
