// See muon_update.h.
// Tested by tests/optim/test_musgd.cpp: scale_and_widen equals per-member mul then upcast,
//   ScaleFactorCache made once per bucket.
#include "optim/muon_update.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace trainer::optim {

namespace {

at::Tensor make_factors(const std::vector<double>& scales, at::ScalarType dtype,
                        const at::Device& device) {
  // Made on the host and copied without blocking (at::tensor with device options fills on the
  // host and copies with a sync).
  return at::tensor(scales, at::kDouble)
      .to(dtype)
      .view({-1, 1, 1})
      .to(device, /*non_blocking=*/true);
}

}  // namespace

const at::Tensor& ScaleFactorCache::factors(const std::vector<double>& scales, at::ScalarType dtype,
                                            const at::Device& device) {
  const auto key = std::make_tuple(scales, static_cast<int>(dtype), device.str());
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, make_factors(scales, dtype, device)).first;
  return it->second;
}

at::Tensor scale_and_widen(const at::Tensor& stack, const std::vector<double>& scales,
                           at::ScalarType dtype, ScaleFactorCache* cache) {
  const at::ScalarType own = stack.scalar_type();
  const bool widen = c10::elementSize(dtype) > c10::elementSize(own);
  const bool all_one = std::all_of(scales.begin(), scales.end(), [](double s) { return s == 1.0; });
  if (all_one) return widen ? stack.to(dtype) : stack;
  // A scalar multiply computes in the op-math type (float for BF16/half) with the scalar cast to
  // it.
  const at::ScalarType opmath = at::isReducedFloatingType(own) ? at::kFloat : own;
  const at::Tensor factors = cache ? cache->factors(scales, opmath, stack.device())
                                   : make_factors(scales, opmath, stack.device());
  const at::Tensor scaled = (stack.to(opmath) * factors).to(own);
  return widen ? scaled.to(dtype) : scaled;
}

}  // namespace trainer::optim
