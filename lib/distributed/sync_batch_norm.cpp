// See sync_batch_norm.h. The statistics and the normalisation run in fp32 (under autocast too, as
// autocast keeps batch_norm in fp32); the output has the input's dtype.
#include "distributed/sync_batch_norm.h"

#include <torch/torch.h>

#include "distributed/group.h"

namespace trainer::distributed {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor per_channel(const at::Tensor& v) {
  return v.view({1, -1, 1, 1});
}

struct SyncBatchNormFunction : torch::autograd::Function<SyncBatchNormFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, at::Tensor running_mean, at::Tensor running_var,
                            double eps, double momentum, Group* group) {
    const at::Tensor xf = x.to(torch::kFloat);
    const int64_t channels = x.size(1);
    const double local_count = static_cast<double>(x.numel() / std::max<int64_t>(channels, 1));
    at::Tensor packed = torch::cat(
        {xf.sum({0, 2, 3}), xf.pow(2).sum({0, 2, 3}), torch::full({1}, local_count, xf.options())});
    group->all_reduce_sum(packed);
    const double n = packed[2 * channels].item<double>();
    const at::Tensor mean = packed.slice(0, 0, channels) / n;
    const at::Tensor var = (packed.slice(0, channels, 2 * channels) / n - mean * mean).clamp_min(0);
    const at::Tensor invstd = (var + eps).rsqrt();
    {
      torch::NoGradGuard no_grad;
      running_mean.mul_(1.0 - momentum).add_(mean * momentum);
      running_var.mul_(1.0 - momentum).add_(var * (n / std::max(n - 1.0, 1.0)) * momentum);
    }
    const at::Tensor xhat = (xf - per_channel(mean)) * per_channel(invstd);
    ctx->save_for_backward({xhat, weight, invstd});
    ctx->saved_data["n"] = n;
    ctx->saved_data["group"] = reinterpret_cast<int64_t>(group);
    ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());
    return (xhat * per_channel(weight.to(torch::kFloat)) + per_channel(bias.to(torch::kFloat)))
        .to(x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& xhat = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& invstd = saved[2];
    const double n = ctx->saved_data["n"].toDouble();
    auto* group = reinterpret_cast<Group*>(ctx->saved_data["group"].toInt());
    const auto dtype = static_cast<c10::ScalarType>(ctx->saved_data["dtype"].toInt());
    const at::Tensor g = grads[0].to(torch::kFloat);
    const at::Tensor sum_dy = g.sum({0, 2, 3});
    const at::Tensor sum_dy_xhat = (g * xhat).sum({0, 2, 3});
    const int64_t channels = sum_dy.size(0);
    at::Tensor packed = torch::cat({sum_dy, sum_dy_xhat});
    group->all_reduce_sum(packed);
    const at::Tensor mean_dy = packed.slice(0, 0, channels) / n;
    const at::Tensor mean_dy_xhat = packed.slice(0, channels, 2 * channels) / n;
    const at::Tensor grad_x = (per_channel(weight.to(torch::kFloat) * invstd) *
                               (g - per_channel(mean_dy) - xhat * per_channel(mean_dy_xhat)))
                                  .to(dtype);
    return {grad_x,
            sum_dy_xhat.to(weight.scalar_type()),
            sum_dy.to(weight.scalar_type()),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

at::Tensor sync_batch_norm(const at::Tensor& x, torch::nn::BatchNorm2dImpl& bn, Group& group) {
  const auto& o = bn.options;
  const double momentum = o.momentum().has_value() ? *o.momentum() : 0.1;
  if (bn.num_batches_tracked.defined()) {
    torch::NoGradGuard no_grad;
    bn.num_batches_tracked.add_(1);
  }
  return SyncBatchNormFunction::apply(x, bn.weight, bn.bias, bn.running_mean, bn.running_var,
                                      o.eps(), momentum, &group);
}

}  // namespace trainer::distributed
