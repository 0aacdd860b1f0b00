// The RealNVP normalising flow of YOLO26-pose's residual log-likelihood (RLE) loss
// (reference-tasks.md 2.2): six affine coupling layers over 2-D residuals.
//
// Why in lib/model: it is part of the pose head's state dict (model.<i>.flow_model.*) and trains
// with the model, but only the loss calls it; the head owns it, the loss receives log_prob.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include <utility>
#include <vector>

namespace trainer::model {

class RealNvpImpl : public torch::nn::Module {
 public:
  static constexpr int kLayers = 6;
  static constexpr int kHidden = 64;

  RealNvpImpl();

  // Data space (N, 2) -> latent z (N, 2) and the log-determinant of the Jacobian (N).
  std::pair<torch::Tensor, torch::Tensor> backward_p(const torch::Tensor& x);

  // log N(z; 0, I) + logdet, (N) float32: -0.5 |z|^2 - ln(2 pi) + logdet. The flow runs in the
  // input's dtype (the reference casts itself to fp32 for fp32 input, which our parameters are).
  torch::Tensor log_prob(const torch::Tensor& x);

  torch::nn::ModuleList s{nullptr}, t{nullptr};  // registered as "s" and "t" (the reference's keys)
  torch::Tensor loc, cov, mask;  // loc/cov unused, kept as the reference keeps them (strict loads)

 private:
  std::vector<torch::nn::Sequential> scale_nets_, shift_nets_;  // the entries of s and t
};
TORCH_MODULE(RealNvp);

}  // namespace trainer::model
