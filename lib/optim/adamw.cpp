// Tested by tests/optim/test_sgd_adamw.cpp: AdamW step by hand (decoupled decay, bias correction),
//   foreach equals scalar oracle, state round trip.
#include "optim/adamw.h"

#include <ATen/ATen.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "optim/step_scalars.h"

namespace trainer::optim {

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options)
    : groups_(std::move(groups)), options_(options) {
  state_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) state_[g].resize(groups_[g].params.size());
}

void AdamW::step() {
  at::NoGradGuard no_grad;
  consume_prepared_step();
  if (capturable()) {
    step_capturable();
    return;
  }
  const double b1 = options_.beta1;
  const double b2 = options_.beta2;
  for (size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    // Parameters that share a step count share the bias corrections: one foreach call per count.
    std::map<int64_t, std::vector<size_t>> by_step;
    for (size_t i = 0; i < group.params.size(); ++i) {
      at::Tensor& p = group.params[i];
      if (!p.grad().defined()) continue;
      ParamState& st = state_[g][i];
      if (!st.exp_avg.defined()) {
        st.exp_avg = at::zeros_like(p);
        st.exp_avg_sq = at::zeros_like(p);
      }
      ++st.step;
      by_step[st.step].push_back(i);
    }
    for (const auto& [step, members] : by_step) {
      const double bc1 = 1.0 - std::pow(b1, static_cast<double>(step));
      const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, static_cast<double>(step)));
      const double step_size = group.lr / bc1;
      const double decay = 1.0 - group.lr * group.weight_decay;
      if (!options_.foreach) {
        for (size_t i : members) {
          at::Tensor& p = group.params[i];
          ParamState& st = state_[g][i];
          const at::Tensor& grad = p.grad();
          p.mul_(decay);
          st.exp_avg.lerp_(grad, 1.0 - b1);
          st.exp_avg_sq.mul_(b2).addcmul_(grad, grad, 1.0 - b2);
          const at::Tensor denom = (st.exp_avg_sq.sqrt() / bc2_sqrt).add_(options_.eps);
          p.addcdiv_(st.exp_avg, denom, -step_size);
        }
        continue;
      }
      std::vector<at::Tensor> params, grads, m, v;
      for (size_t i : members) {
        params.push_back(group.params[i]);
        grads.push_back(group.params[i].grad());
        m.push_back(state_[g][i].exp_avg);
        v.push_back(state_[g][i].exp_avg_sq);
      }
      at::_foreach_mul_(params, decay);
      at::_foreach_lerp_(m, grads, 1.0 - b1);
      at::_foreach_mul_(v, b2);
      at::_foreach_addcmul_(v, grads, grads, 1.0 - b2);
      std::vector<at::Tensor> denom = at::_foreach_sqrt(v);
      at::_foreach_div_(denom, bc2_sqrt);
      at::_foreach_add_(denom, options_.eps);
      at::_foreach_addcdiv_(params, m, denom, -step_size);
    }
  }
}

std::vector<std::string> AdamW::step_scalar_names() const {
  std::vector<std::string> names;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (const char* name : {"decay", "bc2_sqrt", "neg_step_size"}) {
      names.push_back(group_slot(g, name));
    }
  }
  return names;
}

void AdamW::write_step_scalars(StepScalars& scalars) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    // Every parameter with a gradient steps; in capturable mode they must share one step number,
    // since the captured step has one set of bias corrections per group.
    int64_t step = 0;
    for (size_t i = 0; i < group.params.size(); ++i) {
      const at::Tensor& p = group.params[i];
      if (!p.grad().defined()) continue;
      ParamState& st = state_[g][i];
      if (!st.exp_avg.defined()) {
        st.exp_avg = at::zeros_like(p);
        st.exp_avg_sq = at::zeros_like(p);
      }
      if (step != 0 && st.step + 1 != step) {
        throw std::runtime_error("capturable AdamW: the parameters of group " + group.name +
                                 " are at different step numbers (" + std::to_string(step - 1) +
                                 " and " + std::to_string(st.step) + ")");
      }
      step = st.step + 1;
    }
    // A group without gradients steps nothing: neutral values.
    const double bc1 = step > 0 ? 1.0 - std::pow(options_.beta1, static_cast<double>(step)) : 1.0;
    const double bc2_sqrt =
        step > 0 ? std::sqrt(1.0 - std::pow(options_.beta2, static_cast<double>(step))) : 1.0;
    scalars.set(group_slot(g, "decay"), 1.0 - group.lr * group.weight_decay);
    scalars.set(group_slot(g, "bc2_sqrt"), bc2_sqrt);
    scalars.set(group_slot(g, "neg_step_size"), -(group.lr / bc1));
  }
}

void AdamW::advance_step_counts() {
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      if (groups_[g].params[i].grad().defined() && state_[g][i].exp_avg.defined()) {
        ++state_[g][i].step;
      }
    }
  }
}

// The foreach step with the per-step numbers from the slots: decay, bias corrections and step size
// enter as 0-d tensors in the parameters' dtype (multiplies and divides of their own where the
// eager step passes Scalars), the constant betas and eps stay Scalars.
void AdamW::step_capturable() {
  const double b1 = options_.beta1;
  const double b2 = options_.beta2;
  for (size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    std::vector<at::Tensor> params, grads, m, v;
    for (size_t i = 0; i < group.params.size(); ++i) {
      at::Tensor& p = group.params[i];
      if (!p.grad().defined()) continue;
      if (!state_[g][i].exp_avg.defined()) {
        throw std::logic_error("capturable AdamW: a gradient appeared after prepare_step()");
      }
      params.push_back(p);
      grads.push_back(p.grad());
      m.push_back(state_[g][i].exp_avg);
      v.push_back(state_[g][i].exp_avg_sq);
    }
    if (params.empty()) continue;
    const auto dtype = params.front().scalar_type();
    for (const auto& p : params) {
      if (p.scalar_type() != dtype || (dtype != at::kFloat && dtype != at::kDouble)) {
        throw std::runtime_error("capturable AdamW: fp32 or fp64 parameters of one dtype");
      }
    }
    at::_foreach_mul_(params, step_scalar(group_slot(g, "decay")).to(dtype));
    at::_foreach_lerp_(m, grads, 1.0 - b1);
    at::_foreach_mul_(v, b2);
    at::_foreach_addcmul_(v, grads, grads, 1.0 - b2);
    std::vector<at::Tensor> denom = at::_foreach_sqrt(v);
    at::_foreach_div_(denom, step_scalar(group_slot(g, "bc2_sqrt")).to(dtype));
    at::_foreach_add_(denom, options_.eps);
    std::vector<at::Tensor> update = at::_foreach_div(m, denom);
    at::_foreach_mul_(update, step_scalar(group_slot(g, "neg_step_size")).to(dtype));
    at::_foreach_add_(params, update);
  }
}

StateDict AdamW::state_dict() const {
  StateDict out;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const ParamState& st = state_[g][i];
      if (!st.exp_avg.defined()) continue;
      out[state_key(g, i, "exp_avg")] = st.exp_avg.clone();
      out[state_key(g, i, "exp_avg_sq")] = st.exp_avg_sq.clone();
      out[state_key(g, i, "step")] = at::scalar_tensor(st.step, at::kLong);
    }
  }
  return out;
}

void AdamW::load_state_dict(const StateDict& state) {
  size_t used = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const std::string key = state_key(g, i, "exp_avg");
      if (!state.count(key)) continue;
      const at::Tensor& p = groups_[g].params[i];
      ParamState& st = state_[g][i];
      st.exp_avg = load_state_entry(state, key, p);
      st.exp_avg_sq = load_state_entry(state, state_key(g, i, "exp_avg_sq"), p);
      const auto step = state.find(state_key(g, i, "step"));
      if (step == state.end())
        throw std::runtime_error("optimizer state is missing '" + state_key(g, i, "step") + "'");
      st.step = step->second.item<int64_t>();
      used += 3;
    }
  }
  check_all_state_used(state, used);
}

}  // namespace trainer::optim
