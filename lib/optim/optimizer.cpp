// Tested by tests/optim/test_capturable.cpp: make_capturable/prepare_step: step without prepare
//   refused, prepare idempotent (zero_grad in test_sgd_adamw, state-load errors in test_musgd).
#include "optim/optimizer.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "optim/step_scalars.h"

namespace trainer::optim {

Optimizer::Optimizer() = default;
Optimizer::~Optimizer() = default;

void Optimizer::make_capturable(const at::Device& device) {
  scalars_ = std::make_unique<StepScalars>(step_scalar_names(), device);
  prepared_ = false;
}

void Optimizer::prepare_step() {
  if (!scalars_) return;
  write_step_scalars(*scalars_);
  scalars_->upload();
  prepared_ = true;
}

const at::Tensor& Optimizer::step_scalar(const std::string& name) const {
  if (!scalars_) throw std::logic_error("step_scalar('" + name + "'): optimizer not capturable");
  return scalars_->slot(name);
}

void Optimizer::consume_prepared_step() {
  if (!scalars_) return;
  if (!prepared_) {
    throw std::logic_error("capturable optimizer: prepare_step() must run before each step()");
  }
  prepared_ = false;
}

std::string group_slot(size_t group, const char* name) {
  return "g" + std::to_string(group) + "." + name;
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& group : groups()) {
    for (auto& p : group.params) {
      if (!p.grad().defined()) continue;
      if (set_to_none) {
        p.mutable_grad() = at::Tensor();
      } else {
        at::Tensor& grad = p.mutable_grad();
        if (grad.grad_fn()) grad.detach_();  // a gradient with history (create_graph)
        grad.zero_();
      }
    }
  }
}

std::string state_key(size_t group, size_t param, const char* name) {
  return "g" + std::to_string(group) + ".p" + std::to_string(param) + "." + name;
}

at::Tensor load_state_entry(const StateDict& state, const std::string& key,
                            const at::Tensor& like) {
  const auto it = state.find(key);
  if (it == state.end()) throw std::runtime_error("optimizer state is missing '" + key + "'");
  if (it->second.sizes() != like.sizes()) {
    throw std::runtime_error("optimizer state '" + key + "' has shape " +
                             c10::str(it->second.sizes()) + ", expected " + c10::str(like.sizes()));
  }
  return it->second.detach().to(like.options(), /*non_blocking=*/false, /*copy=*/true);
}

void check_all_state_used(const StateDict& state, size_t used) {
  if (used != state.size()) {
    throw std::runtime_error("optimizer state has " + std::to_string(state.size() - used) +
                             " entries that match no parameter (a different model or optimizer?)");
  }
}

}  // namespace trainer::optim
