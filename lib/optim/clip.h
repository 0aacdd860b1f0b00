// Gradient clipping to a global L2 norm without a device-to-host synchronisation.
//
// Why: LibTorch's clip_grad_norm_ returns a host double (a sync every step). Here the per-tensor
// norms come from one _foreach_norm, the clip coefficient stays a 0-d device tensor, and the
// gradients are scaled by one _foreach_mul_. The total norm is returned as a tensor: read it only
// when logging.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace trainer::optim {

// Scales `grads` so their global L2 norm is at most `max_norm` (coef = min(1, max/(norm + 1e-6)),
// as the reference). Returns the total norm before clipping (fp32, 0-d, on the grads' device).
// Undefined gradients are skipped; with none, returns a zero tensor on the CPU.
at::Tensor clip_grad_norm(const std::vector<at::Tensor>& grads, double max_norm);

}  // namespace trainer::optim
