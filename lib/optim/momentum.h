// The two momentum recurrences of MuSGD, each as a one-parameter (oracle) and a foreach form.
//
// Why: SGD and MuSGD share them, and the foreach forms must keep the scalar operation order so
// their results match the oracle bit for bit (one foreach call per step instead of one launch per
// parameter is the whole point; the arithmetic is the same).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace trainer::optim {

struct SgdStepArgs {
  double lr = 0;  // already multiplied by the SGD gain
  double momentum = 0;
  double weight_decay = 0;
  bool nesterov = true;
};

// g' = g + wd*W (skipped when wd == 0); B = momentum*B + g'; V = g' + momentum*B (Nesterov) or B;
// W -= lr*V.
void sgd_step(at::Tensor& param, const at::Tensor& grad, at::Tensor& buffer, const SgdStepArgs& a);
void sgd_step_foreach(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                      std::vector<at::Tensor>& buffers, const SgdStepArgs& a);

// The foreach SGD step with the momentum and the learning rate in 0-d device tensors (fp64, e.g.
// StepScalars slots; `lr` already multiplied by the SGD gain), for a captured CUDA graph. The same
// recurrence; ATen has no tensor `alpha`, so momentum x B and lr x V are multiplies of their own
// before the adds: equal to sgd_step_foreach to rounding (the adds of the alpha form may fuse).
// fp32 or fp64 parameters of one dtype (a reduced type would round the scalars to itself).
void sgd_step_foreach_tensor(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                             std::vector<at::Tensor>& buffers, const at::Tensor& lr,
                             const at::Tensor& momentum, double weight_decay, bool nesterov);
// Muon momentum: M = lerp(M, g, 1-beta); returns U = lerp(g, M, beta) (Nesterov) or M.
at::Tensor muon_momentum(const at::Tensor& grad, at::Tensor& buffer, double beta, bool nesterov);
std::vector<at::Tensor> muon_momentum_foreach(const std::vector<at::Tensor>& grads,
                                              std::vector<at::Tensor>& buffers, double beta,
                                              bool nesterov);

// muon_momentum_foreach with the lerp weights in 0-d fp64 device tensors (StepScalars slots:
// one_minus_beta = 1 - beta computed on the host in double, as the Scalar form does, and beta),
// for a captured CUDA graph: one tensor-weight lerp per tensor (a graph replays the launches for
// free). fp32 or fp64 tensors of one dtype.
std::vector<at::Tensor> muon_momentum_foreach_tensor(const std::vector<at::Tensor>& grads,
                                                     std::vector<at::Tensor>& buffers,
                                                     const at::Tensor& one_minus_beta,
                                                     const at::Tensor& beta, bool nesterov);

}  // namespace trainer::optim
