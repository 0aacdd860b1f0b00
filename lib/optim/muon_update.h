// The Newton-Schulz output of a stack of Muon updates, scaled and in its parameters' dtype.
//
// Why: Newton-Schulz runs in BF16 while parameters are fp32; adding BF16 (and transposed or
// narrowed) updates to fp32 parameters makes `_foreach_add_` fall back to one add per tensor.
// Scaling and widening a whole stack at once keeps the oracle's numbers exactly: `o.mul(scale)` on
// a BF16 `o` multiplies in float and rounds once to BF16, and BF16 -> fp32 is exact, so the later
// fp32 add sees the very values the per-parameter add used to upcast itself.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace trainer::optim {

// stack (n, r, c): member k times scales[k] in the stack's dtype (one multiply in float for
// reduced types, one rounding), then converted to `dtype` when that is wider than the stack's
// (an exact conversion); a narrower `dtype` leaves the stack's dtype (converting would round).
at::Tensor scale_and_widen(const at::Tensor& stack, const std::vector<double>& scales,
                           at::ScalarType dtype);

}  // namespace trainer::optim
