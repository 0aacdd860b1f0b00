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

}  // namespace trainer::loss
