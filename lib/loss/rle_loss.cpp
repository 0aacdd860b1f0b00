// Tested by tests/loss/test_keypoint_loss.cpp: RLE formula and loss with a standard-normal flow,
//   zero loss touching every flow parameter.
#include "loss/rle_loss.h"

#include <ATen/ATen.h>

namespace trainer::loss {

at::Tensor rle_formula(const at::Tensor& sigma, const at::Tensor& log_phi, const at::Tensor& error,
                       const at::Tensor& weight) {
  auto loss = at::log(sigma) - log_phi.unsqueeze(1) + at::log(sigma * 2) + at::abs(error);
  loss = loss * weight.view({-1, 1});
  return loss.sum() / static_cast<double>(loss.size(0));
}

at::Tensor rle_zero(const at::Tensor& pred, const KeypointFlow& flow) {
  auto zero = pred.narrow(-1, 0, 0).sum();
  for (const auto& p : flow.parameters) zero = zero + p.narrow(-1, 0, 0).sum();
  return zero;
}

at::Tensor rle_loss(const at::Tensor& pred_xy, const at::Tensor& sigma_raw, const at::Tensor& gt,
                    const at::Tensor& mask, const at::Tensor& weights, const KeypointFlow& flow,
                    double sigma_tiny) {
  if (!mask.any().item<bool>()) return rle_zero(pred_xy, flow);
  const auto pred = pred_xy.narrow(-1, 0, 2).index({mask});  // (V, 2)
  const auto target = gt.narrow(-1, 0, 2).index({mask});
  auto w = weights.to(pred.options()).unsqueeze(0).expand(mask.sizes()).index({mask});  // (V)
  auto sigma = sigma_raw.index({mask}).to(at::kFloat).sigmoid().clamp_min(sigma_tiny);
  auto error = (pred - target) / (sigma + 1e-9);
  const auto valid = at::isfinite(error).all(-1);
  if (!valid.any().item<bool>()) return rle_zero(pred_xy, flow);
  error = error.index({valid}).clamp(-100, 100);
  sigma = sigma.index({valid});
  w = w.index({valid});
  return rle_formula(sigma, flow.log_prob(error), error, w).clamp_min(0);
}

at::Tensor masked_rle_loss(const at::Tensor& pred_xy, const at::Tensor& sigma_raw,
                           const at::Tensor& gt, const at::Tensor& mask, const at::Tensor& weights,
                           const KeypointFlow& flow, double sigma_tiny) {
  const auto pred = pred_xy.narrow(-1, 0, 2);  // (..., K, 2)
  const auto target = gt.narrow(-1, 0, 2);
  const auto sigma = sigma_raw.to(at::kFloat).sigmoid().clamp_min(sigma_tiny);
  // Which rows rle_loss keeps, decided without gradient; the others get a zero residual before the
  // division, so not even 0 x inf reaches a gradient from them.
  const auto residual = pred - target;
  const auto kept = mask.logical_and(at::isfinite((residual / (sigma + 1e-9)).detach()).all(-1))
                        .unsqueeze(-1);  // (..., K, 1)
  const auto zero = at::zeros({}, sigma.options());
  const auto safe_error = (at::where(kept, residual, zero) / (sigma + 1e-9)).clamp(-100, 100);
  const auto safe_sigma = at::where(kept, sigma, at::ones({}, sigma.options()));
  const auto rows = safe_error.reshape({-1, 2});
  const auto log_phi = flow.log_prob(rows).view(mask.sizes()).unsqueeze(-1);  // (..., K, 1)
  const auto per_row =
      at::log(safe_sigma) - log_phi + at::log(safe_sigma * 2) + at::abs(safe_error);
  const auto weight = weights.to(per_row.options()) * kept.squeeze(-1).to(per_row.scalar_type());
  const auto count = kept.sum().to(per_row.scalar_type()).clamp_min(1);
  return ((per_row * weight.unsqueeze(-1)).sum() / count).clamp_min(0);
}

}  // namespace trainer::loss
