// The Newton-Schulz output of a stack of Muon updates, scaled and in its parameters' dtype.
//
// Why: Newton-Schulz runs in BF16 while parameters are fp32; adding BF16 (and transposed or
// narrowed) updates to fp32 parameters makes `_foreach_add_` fall back to one add per tensor.
// Scaling and widening a whole stack at once keeps the oracle's numbers exactly: `o.mul(scale)` on
// a BF16 `o` multiplies in float and rounds once to BF16, and BF16 -> fp32 is exact, so the later
// fp32 add sees the very values the per-parameter add used to upcast itself.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace trainer::optim {

// The per-member scale factors of the stacks, as device tensors made once: the same buckets recur
// every step with the same scales, and a tensor made from host values each step is a host-to-device
// copy per bucket (a sync-free one, but one a CUDA graph could not replay).
class ScaleFactorCache {
 public:
  // (n, 1, 1) factors in `dtype` on `device`, made on the first request for these scales.
  const at::Tensor& factors(const std::vector<double>& scales, at::ScalarType dtype,
                            const at::Device& device);
  size_t size() const { return cache_.size(); }

 private:
  std::map<std::tuple<std::vector<double>, int, std::string>, at::Tensor> cache_;
};

// stack (n, r, c): member k times scales[k] in the stack's dtype (one multiply in float for
// reduced types, one rounding), then converted to `dtype` when that is wider than the stack's
// (an exact conversion); a narrower `dtype` leaves the stack's dtype (converting would round).
// `cache` (optional) keeps the factors on the device between calls.
at::Tensor scale_and_widen(const at::Tensor& stack, const std::vector<double>& scales,
                           at::ScalarType dtype, ScaleFactorCache* cache = nullptr);

}  // namespace trainer::optim
