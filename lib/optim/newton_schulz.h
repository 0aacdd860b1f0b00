// Newton-Schulz orthogonalisation, the core of the Muon update (reference-behaviour.md 1.1).
//
// Why: MuSGD replaces each matrix update by an approximately orthogonal one. The scalar form is the
// reference formula for one matrix; the batched form runs a stack of matrices with the
// scale-and-add folded into `baddbmm` epilogues (B = b*A + c*A*A, X = a*X + B*X), one launch per
// product.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>

namespace trainer::optim {

struct NewtonSchulzOptions {
  int steps = 5;
  std::array<double, 3> coefficients{3.4445, -4.7750, 2.0315};  // (a, b, c)
  c10::ScalarType dtype = c10::ScalarType::BFloat16;            // the reference computes in bf16
  double eps = 1e-7;
};

// One 2-D matrix: X = G/(|G|_F + eps); transposed when rows > cols; `steps` iterations; transposed
// back. Returns a tensor of `options.dtype` with G's shape.
at::Tensor orthogonalize(const at::Tensor& matrix, const NewtonSchulzOptions& options);

// A stack (B, r, c) with r <= c, each slice normalised by its own Frobenius norm. Zero columns
// appended to a slice stay zero (this is what makes mixed-width padded stacks exact in maths).
at::Tensor orthogonalize_batched(const at::Tensor& stack, const NewtonSchulzOptions& options);

}  // namespace trainer::optim
