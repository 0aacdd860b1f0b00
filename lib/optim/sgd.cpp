// Tested by tests/optim/test_sgd_adamw.cpp: Sgd step by hand, foreach equals scalar oracle over 40
//   steps, state round trip and exact resume.
#include "optim/sgd.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "optim/momentum.h"
#include "optim/step_scalars.h"

namespace trainer::optim {

Sgd::Sgd(std::vector<ParamGroup> groups, bool foreach)
    : groups_(std::move(groups)), foreach_(foreach) {
  buffers_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) buffers_[g].resize(groups_[g].params.size());
}

void Sgd::step() {
  at::NoGradGuard no_grad;
  consume_prepared_step();
  for (size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    const SgdStepArgs args{group.lr, group.momentum, group.weight_decay, group.nesterov};
    std::vector<at::Tensor> params, grads, buffers;
    for (size_t i = 0; i < group.params.size(); ++i) {
      at::Tensor& p = group.params[i];
      if (!p.grad().defined()) continue;
      if (!buffers_[g][i].defined()) buffers_[g][i] = at::zeros_like(p);
      if (foreach_ || capturable()) {
        params.push_back(p);
        grads.push_back(p.grad());
        buffers.push_back(buffers_[g][i]);
      } else {
        sgd_step(p, p.grad(), buffers_[g][i], args);
      }
    }
    if (capturable()) {
      sgd_step_foreach_tensor(params, grads, buffers, step_scalar(group_slot(g, "lr")),
                              step_scalar(group_slot(g, "momentum")), group.weight_decay,
                              group.nesterov);
    } else if (foreach_) {
      sgd_step_foreach(params, grads, buffers, args);
    }
  }
}

std::vector<std::string> Sgd::step_scalar_names() const {
  std::vector<std::string> names;
  for (size_t g = 0; g < groups_.size(); ++g) {
    names.push_back(group_slot(g, "lr"));
    names.push_back(group_slot(g, "momentum"));
  }
  return names;
}

void Sgd::write_step_scalars(StepScalars& scalars) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    scalars.set(group_slot(g, "lr"), groups_[g].lr);
    scalars.set(group_slot(g, "momentum"), groups_[g].momentum);
  }
}

StateDict Sgd::state_dict() const {
  StateDict out;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i)
      if (buffers_[g][i].defined()) out[state_key(g, i, "sgd_momentum")] = buffers_[g][i].clone();
  return out;
}

void Sgd::load_state_dict(const StateDict& state) {
  size_t used = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const std::string key = state_key(g, i, "sgd_momentum");
      if (!state.count(key)) continue;
      buffers_[g][i] = load_state_entry(state, key, groups_[g].params[i]);
      ++used;
    }
  }
  check_all_state_used(state, used);
}

}  // namespace trainer::optim
