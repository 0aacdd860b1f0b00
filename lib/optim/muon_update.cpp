// See muon_update.h.
#include "optim/muon_update.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace trainer::optim {

at::Tensor scale_and_widen(const at::Tensor& stack, const std::vector<double>& scales,
                           at::ScalarType dtype) {
  const at::ScalarType own = stack.scalar_type();
  const bool widen = c10::elementSize(dtype) > c10::elementSize(own);
  const bool all_one = std::all_of(scales.begin(), scales.end(), [](double s) { return s == 1.0; });
  if (all_one) return widen ? stack.to(dtype) : stack;
  // A scalar multiply computes in the op-math type (float for BF16/half) with the scalar cast to
  // it.
  const at::ScalarType opmath = at::isReducedFloatingType(own) ? at::kFloat : own;
  // Made on the host and copied without blocking (at::tensor with device options fills on the
  // host and copies with a sync, once per bucket and step).
  const at::Tensor factors = at::tensor(scales, at::kDouble)
                                 .to(opmath)
                                 .view({-1, 1, 1})
                                 .to(stack.device(), /*non_blocking=*/true);
  const at::Tensor scaled = (stack.to(opmath) * factors).to(own);
  return widen ? scaled.to(dtype) : scaled;
}

}  // namespace trainer::optim
