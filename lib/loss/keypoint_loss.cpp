#include "loss/keypoint_loss.h"

#include <ATen/ATen.h>

namespace trainer::loss {

at::Tensor keypoint_location_loss(const at::Tensor& pred, const at::Tensor& gt,
                                  const at::Tensor& mask, const at::Tensor& area,
                                  const at::Tensor& sigmas) {
  const auto diff = pred.narrow(-1, 0, 2) - gt.narrow(-1, 0, 2);
  const auto d = diff.select(-1, 0).pow(2) + diff.select(-1, 1).pow(2);  // (N, K)
  const auto maskf = mask.to(d.scalar_type());
  const auto factor = static_cast<double>(mask.size(1)) / (mask.ne(0).sum(1) + 1e-9);  // (N)
  const auto e = d / ((2 * sigmas).pow(2) * (area + 1e-9) * 2);
  return (factor.view({-1, 1}) * ((1 - at::exp(-e)) * maskf)).mean();
}

at::Tensor keypoint_objectness_loss(const at::Tensor& logits, const at::Tensor& mask) {
  return at::binary_cross_entropy_with_logits(logits, mask.to(logits.scalar_type()));
}

at::Tensor masked_keypoint_location_loss(const at::Tensor& pred, const at::Tensor& gt,
                                         const at::Tensor& mask, const at::Tensor& area,
                                         const at::Tensor& sigmas, const at::Tensor& positives) {
  // Zero where masked before the square: a non-finite prediction on a filler or invisible row
  // must not reach the gradient as 0 x inf.
  const auto diff = at::where(mask.unsqueeze(-1), pred.narrow(-1, 0, 2) - gt.narrow(-1, 0, 2),
                              at::zeros({}, pred.options()));
  const auto d = diff.select(-1, 0).pow(2) + diff.select(-1, 1).pow(2);  // (..., K)
  const int64_t k = mask.size(-1);
  const auto maskf = mask.to(d.scalar_type());
  const auto factor = static_cast<double>(k) / (mask.sum(-1, /*keepdim=*/true) + 1e-9);
  const auto e = d / ((2 * sigmas).pow(2) * (area + 1e-9) * 2);
  return (factor * ((1 - at::exp(-e)) * maskf)).sum() / (positives * static_cast<double>(k));
}

at::Tensor masked_keypoint_objectness_loss(const at::Tensor& logits, const at::Tensor& visible,
                                           const at::Tensor& row_weight,
                                           const at::Tensor& positives) {
  const auto bce = at::binary_cross_entropy_with_logits(logits, visible.to(logits.scalar_type()),
                                                        {}, {}, at::Reduction::None);
  const int64_t k = logits.size(-1);
  return (bce * row_weight.unsqueeze(-1)).sum() / (positives * static_cast<double>(k));
}

}  // namespace trainer::loss
