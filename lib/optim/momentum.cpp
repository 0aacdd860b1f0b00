// Tested by tests/optim/test_sgd_adamw.cpp: sgd_step Nesterov by hand, foreach equals scalar,
//   device-slot lr/momentum and Muon momentum equal the scalar form.
#include "optim/momentum.h"

#include <ATen/ATen.h>

namespace trainer::optim {

void sgd_step(at::Tensor& param, const at::Tensor& grad, at::Tensor& buffer, const SgdStepArgs& a) {
  const at::Tensor g = a.weight_decay != 0 ? grad.add(param, a.weight_decay) : grad;
  buffer.mul_(a.momentum).add_(g);
  const at::Tensor v = a.nesterov ? g.add(buffer, a.momentum) : buffer;
  param.add_(v, -a.lr);
}

void sgd_step_foreach(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                      std::vector<at::Tensor>& buffers, const SgdStepArgs& a) {
  if (params.empty()) return;
  const std::vector<at::Tensor> g =
      a.weight_decay != 0 ? at::_foreach_add(grads, params, a.weight_decay) : grads;
  at::_foreach_mul_(buffers, a.momentum);
  at::_foreach_add_(buffers, g);
  if (a.nesterov) {
    at::_foreach_add_(params, at::_foreach_add(g, buffers, a.momentum), -a.lr);
  } else {
    at::_foreach_add_(params, buffers, -a.lr);
  }
}

void sgd_step_foreach_tensor(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                             std::vector<at::Tensor>& buffers, const at::Tensor& lr,
                             const at::Tensor& momentum, double weight_decay, bool nesterov) {
  if (params.empty()) return;
  const auto dtype = params.front().scalar_type();
  for (const auto& p : params) {
    TORCH_CHECK(p.scalar_type() == dtype && (dtype == at::kFloat || dtype == at::kDouble),
                "sgd_step_foreach_tensor: fp32 or fp64 parameters of one dtype");
  }
  // The scalars in the parameters' dtype, as a Scalar operand is used there (fp64 -> fp32 once).
  const auto beta = momentum.to(dtype);
  const auto neg_lr = lr.neg().to(dtype);
  const std::vector<at::Tensor> g =
      weight_decay != 0 ? at::_foreach_add(grads, params, weight_decay) : grads;
  at::_foreach_mul_(buffers, beta);
  at::_foreach_add_(buffers, g);
  const std::vector<at::Tensor> v =
      nesterov ? at::_foreach_add(g, at::_foreach_mul(buffers, beta)) : buffers;
  at::_foreach_add_(params, at::_foreach_mul(v, neg_lr));
}

at::Tensor muon_momentum(const at::Tensor& grad, at::Tensor& buffer, double beta, bool nesterov) {
  buffer.lerp_(grad, 1.0 - beta);
  return nesterov ? grad.lerp(buffer, beta) : buffer;
}

std::vector<at::Tensor> muon_momentum_foreach(const std::vector<at::Tensor>& grads,
                                              std::vector<at::Tensor>& buffers, double beta,
                                              bool nesterov) {
  if (grads.empty()) return {};
  at::_foreach_lerp_(buffers, grads, 1.0 - beta);
  return nesterov ? at::_foreach_lerp(grads, buffers, beta) : buffers;
}

std::vector<at::Tensor> muon_momentum_foreach_tensor(const std::vector<at::Tensor>& grads,
                                                     std::vector<at::Tensor>& buffers,
                                                     const at::Tensor& one_minus_beta,
                                                     const at::Tensor& beta, bool nesterov) {
  if (grads.empty()) return {};
  const auto dtype = buffers.front().scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kDouble,
              "muon_momentum_foreach_tensor: fp32 or fp64 buffers");
  const auto w_buffer = one_minus_beta.to(dtype);
  const auto w_out = beta.to(dtype);
  std::vector<at::Tensor> out;
  out.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    TORCH_CHECK(buffers[i].scalar_type() == dtype && grads[i].scalar_type() == dtype,
                "muon_momentum_foreach_tensor: one dtype");
    buffers[i].lerp_(grads[i], w_buffer);
    out.push_back(nesterov ? grads[i].lerp(buffers[i], w_out) : buffers[i]);
  }
  return out;
}

}  // namespace trainer::optim
