// See model_state_guard.h.
// Tested by tests/engine/precision/test_precision_policy.cpp:
//   compare_precisions/time_training_steps leave BN running stats, gradients and train/eval mode as
//   they were.
#include "engine/precision/model_state_guard.h"

#include <torch/torch.h>

namespace trainer::engine {

ModelStateGuard::ModelStateGuard(torch::nn::Module& model)
    : model_(model), was_training_(model.is_training()) {
  for (const auto& b : model.buffers()) buffers_.push_back(b.clone());
  for (const auto& p : model.parameters()) {
    grads_.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
  }
}

ModelStateGuard::~ModelStateGuard() {
  restore_buffers();
  size_t i = 0;
  for (auto& p : model_.parameters()) p.mutable_grad() = grads_[i++];
  model_.train(was_training_);
}

void ModelStateGuard::restore_buffers() {
  torch::NoGradGuard no_grad;
  size_t i = 0;
  for (auto& b : model_.buffers()) b.copy_(buffers_[i++]);
}

}  // namespace trainer::engine
