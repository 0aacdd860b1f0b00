#include "optim/newton_schulz.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace trainer::optim {

at::Tensor orthogonalize(const at::Tensor& matrix, const NewtonSchulzOptions& options) {
  if (matrix.dim() != 2) throw std::invalid_argument("orthogonalize expects a 2-D matrix");
  const auto [a, b, c] = options.coefficients;
  at::Tensor x = matrix.to(options.dtype);
  x = x / (x.norm() + options.eps);
  const bool transposed = x.size(0) > x.size(1);
  if (transposed) x = x.t();
  for (int i = 0; i < options.steps; ++i) {
    const at::Tensor gram = x.mm(x.t());
    const at::Tensor poly = b * gram + c * gram.mm(gram);
    x = a * x + poly.mm(x);
  }
  return transposed ? x.t() : x;
}

at::Tensor orthogonalize_batched(const at::Tensor& stack, const NewtonSchulzOptions& options) {
  if (stack.dim() != 3 || stack.size(1) > stack.size(2)) {
    throw std::invalid_argument("orthogonalize_batched expects (B, r, c) with r <= c");
  }
  const auto [a, b, c] = options.coefficients;
  at::Tensor x = stack.to(options.dtype);
  const at::Tensor norms = at::linalg_vector_norm(x, 2, at::IntArrayRef{1, 2}, /*keepdim=*/true);
  x = x / (norms + options.eps);
  for (int i = 0; i < options.steps; ++i) {
    const at::Tensor gram = at::bmm(x, x.transpose(1, 2));
    const at::Tensor poly = at::baddbmm(gram, gram, gram, /*beta=*/b, /*alpha=*/c);
    x = at::baddbmm(x, poly, x, /*beta=*/a, /*alpha=*/1.0);
  }
  return x;
}

}  // namespace trainer::optim
