// Conv, DWConv and the parameter-free containers (see conv.h).
// Tested by tests/model/test_fuse.cpp: Conv fuse_batchnorm folded weight/bias by hand, fused model
//   outputs equal unfused.
#include "model/conv.h"

#include <torch/torch.h>

#include <numeric>

namespace trainer::model {

ConvImpl::ConvImpl(int64_t c1, int64_t c2, int64_t k, int64_t s, int64_t g, bool act) : act_(act) {
  conv = register_module(
      "conv",
      torch::nn::Conv2d(
          torch::nn::Conv2dOptions(c1, c2, k).stride(s).padding(k / 2).groups(g).bias(false)));
  bn = register_module(
      "bn",
      torch::nn::BatchNorm2d(torch::nn::BatchNormOptions(c2).eps(kBnEps).momentum(kBnMomentum)));
}

void copy_parameters(const torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  const auto src = from.parameters();
  auto dst = to.parameters();
  TORCH_CHECK(src.size() == dst.size(), "copy_parameters: ", src.size(), " parameters into ",
              dst.size());
  for (size_t j = 0; j < src.size(); ++j) dst[j].copy_(src[j]);
}

void count_conv2d(const torch::nn::Conv2dImpl& conv, const torch::Tensor& output) {
  FlopCount* count = active_flop_count();
  if (count == nullptr) return;
  const auto& o = conv.options;
  const double per_output = static_cast<double>(o.in_channels() / o.groups()) *
                            static_cast<double>((*o.kernel_size())[0] * (*o.kernel_size())[1]);
  count->conv_macs += static_cast<double>(output.numel()) * per_output;
}

torch::Tensor ConvImpl::forward(const torch::Tensor& x) {
  auto z = conv->forward(x);
  if (FlopCount* count = active_flop_count()) {
    count_conv2d(*conv, z);
    if (!fused()) count->norm_elements += static_cast<double>(z.numel());
  }
  auto y = fused()                               ? z
           : (bn_override_ && bn->is_training()) ? (*bn_override_)(*bn, z)
                                                 : bn->forward(z);
  return act_ ? torch::silu(y) : y;
}

int64_t set_batch_norm_override(torch::nn::Module& model, const BatchNormOverride& f) {
  auto shared = f ? std::make_shared<const BatchNormOverride>(f) : nullptr;
  int64_t count = 0;
  for (const auto& m : model.modules(/*include_self=*/true)) {
    if (auto* conv = dynamic_cast<ConvImpl*>(m.get())) {
      conv->set_batch_norm_override(shared);
      ++count;
    }
  }
  return count;
}

void ConvImpl::fuse_batchnorm() {
  if (fused()) return;
  torch::NoGradGuard no_grad;
  // y = gamma (conv(x) - mean) / sqrt(var + eps) + beta = conv'(x) + b', computed in float64 so
  // the folded weights round once.
  const auto weight = conv->weight;
  const auto scale = bn->weight.to(torch::kDouble) /
                     torch::sqrt(bn->running_var.to(torch::kDouble) + bn->options.eps());
  const auto bias = bn->bias.to(torch::kDouble) - bn->running_mean.to(torch::kDouble) * scale;
  const auto& o = conv->options;
  torch::nn::Conv2d folded(
      torch::nn::Conv2dOptions(o.in_channels(), o.out_channels(), o.kernel_size())
          .stride(o.stride())
          .padding(o.padding())
          .dilation(o.dilation())
          .groups(o.groups())
          .bias(true));
  folded->to(weight.device(), weight.scalar_type());
  folded->weight.copy_(weight.to(torch::kDouble) * scale.view({-1, 1, 1, 1}));
  folded->bias.copy_(bias);
  folded->train(conv->is_training());
  conv = replace_module("conv", folded);
  unregister_module("bn");
  bn = nullptr;
}

Conv make_dwconv(int64_t c1, int64_t c2, int64_t k, int64_t s, bool act) {
  return Conv(c1, c2, k, s, std::gcd(c1, c2), act);
}

torch::Tensor ChainImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = x;
  for (const auto& step : steps_) y = step(y);
  return y;
}

torch::Tensor Upsample2xImpl::forward(const torch::Tensor& x) {
  // Not counted: the reference's FLOP count charges nothing for nearest upsampling.
  return torch::upsample_nearest2d(x, std::vector<int64_t>{x.size(2) * 2, x.size(3) * 2});
}

torch::Tensor ConcatImpl::forward(const std::vector<torch::Tensor>& xs) {
  return torch::cat(xs, 1);
}

}  // namespace trainer::model
