// A parameter group: tensors that share a learning rate, momentum, decay and update rule.
//
// Why: the reference splits a model into weight / bn / bias / muon groups (and a x3-lr head copy of
// each under MuSGD); warmup sets each group's lr from its own start value. The optimizer, the
// schedules and the checkpoint all speak in these groups.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace trainer::optim {

enum class GroupKind { kWeight, kNorm, kBias, kMuon };

struct ParamGroup {
  std::string name;  // "muon", "bias_head", ... (for logs and results.csv)
  GroupKind kind = GroupKind::kWeight;
  std::vector<at::Tensor> params;
  double lr = 0.01;
  double initial_lr = 0.01;  // lr0 (times the head multiplier) before warmup and decay
  double momentum = 0.937;
  double weight_decay = 0.0;
  bool nesterov = true;
  bool use_muon = false;
};

}  // namespace trainer::optim
