// See real_nvp.h. Forward order and the inverse coupling follow the reference's backward_p.
// Tested by tests/loss/test_keypoint_loss.cpp: RealNVP 53,784 parameters, zeroed coupling nets give
//   the standard-normal log_prob.
#include "model/real_nvp.h"

#include <torch/torch.h>

#include <cmath>

namespace trainer::model {

namespace {

torch::nn::Sequential coupling_net(bool scale) {
  torch::nn::Sequential net(torch::nn::Linear(2, RealNvpImpl::kHidden), torch::nn::SiLU(),
                            torch::nn::Linear(RealNvpImpl::kHidden, RealNvpImpl::kHidden),
                            torch::nn::SiLU(), torch::nn::Linear(RealNvpImpl::kHidden, 2));
  if (scale) net->push_back(torch::nn::Tanh());
  // xavier_uniform with gain 0.01 on the weights; the biases keep the default init.
  torch::NoGradGuard no_grad;
  for (auto& m : net->modules(/*include_self=*/false)) {
    if (auto* linear = m->as<torch::nn::Linear>()) {
      torch::nn::init::xavier_uniform_(linear->weight, 0.01);
    }
  }
  return net;
}

}  // namespace

RealNvpImpl::RealNvpImpl() {
  loc = register_buffer("loc", torch::zeros({2}));
  cov = register_buffer("cov", torch::eye(2));
  mask = register_buffer("mask",
                         torch::tensor({0.f, 1.f, 1.f, 0.f, 0.f, 1.f, 1.f, 0.f, 0.f, 1.f, 1.f, 0.f})
                             .view({kLayers, 2}));
  s = register_module("s", torch::nn::ModuleList());
  t = register_module("t", torch::nn::ModuleList());
  for (int i = 0; i < kLayers; ++i) {
    scale_nets_.push_back(coupling_net(/*scale=*/true));
    s->push_back(scale_nets_.back());
  }
  for (int i = 0; i < kLayers; ++i) {
    shift_nets_.push_back(coupling_net(/*scale=*/false));
    t->push_back(shift_nets_.back());
  }
}

std::pair<torch::Tensor, torch::Tensor> RealNvpImpl::backward_p(const torch::Tensor& x) {
  auto log_det = torch::zeros({x.size(0)}, x.options());
  auto z = x;
  for (int i = kLayers - 1; i >= 0; --i) {
    const auto m = mask[i].to(x.scalar_type());
    const auto keep = 1 - m;
    const auto z_ = m * z;
    const auto scale = scale_nets_[i]->forward(z_) * keep;
    const auto shift = shift_nets_[i]->forward(z_) * keep;
    z = keep * (z - shift) * torch::exp(-scale) + z_;
    log_det = log_det - scale.sum(1);
  }
  return {z, log_det};
}

torch::Tensor RealNvpImpl::log_prob(const torch::Tensor& x) {
  const auto [z, log_det] = backward_p(x);
  return -0.5 * z.to(torch::kFloat).pow(2).sum(-1) - std::log(2.0 * M_PI) + log_det;
}

}  // namespace trainer::model
