// Newton-Schulz: against an independent double-precision computation, and batched vs one-at-a-time.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <vector>

#include "optim/newton_schulz.h"

using trainer::optim::NewtonSchulzOptions;
using trainer::optim::orthogonalize;
using trainer::optim::orthogonalize_batched;

namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix mul(const Matrix& a, const Matrix& b) {
  Matrix c(a.size(), std::vector<double>(b[0].size(), 0.0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < b.size(); ++k)
      for (size_t j = 0; j < b[0].size(); ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}

Matrix transpose(const Matrix& a) {
  Matrix t(a[0].size(), std::vector<double>(a.size()));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[0].size(); ++j) t[j][i] = a[i][j];
  return t;
}

// The reference recipe written out with plain loops in double precision.
Matrix reference_ns(Matrix x, int steps) {
  const double a = 3.4445, b = -4.7750, c = 2.0315;
  double norm = 0;
  for (const auto& row : x)
    for (double v : row) norm += v * v;
  norm = std::sqrt(norm) + 1e-7;
  for (auto& row : x)
    for (double& v : row) v /= norm;
  const bool tall = x.size() > x[0].size();
  if (tall) x = transpose(x);
  for (int s = 0; s < steps; ++s) {
    const Matrix gram = mul(x, transpose(x));
    const Matrix gram2 = mul(gram, gram);
    Matrix poly = gram;
    for (size_t i = 0; i < poly.size(); ++i)
      for (size_t j = 0; j < poly.size(); ++j) poly[i][j] = b * gram[i][j] + c * gram2[i][j];
    const Matrix px = mul(poly, x);
    for (size_t i = 0; i < x.size(); ++i)
      for (size_t j = 0; j < x[0].size(); ++j) x[i][j] = a * x[i][j] + px[i][j];
  }
  return tall ? transpose(x) : x;
}

}  // namespace

TEST_CASE("NS of a 3x2 matrix equals an independent double-precision computation") {
  const Matrix g = {{1.0, -2.0}, {0.5, 3.0}, {-1.5, 0.25}};
  const Matrix expected = reference_ns(g, 5);
  const auto t = torch::tensor({1.0, -2.0, 0.5, 3.0, -1.5, 0.25}, torch::kDouble).view({3, 2});
  NewtonSchulzOptions fp64;
  fp64.dtype = torch::kDouble;
  const auto out = orthogonalize(t, fp64);
  REQUIRE(out.sizes() == t.sizes());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      CHECK(out[i][j].item<double>() == doctest::Approx(expected[i][j]).epsilon(1e-12));
  // The default bf16 arithmetic stays within bf16 rounding of the exact result.
  const auto bf = orthogonalize(t.to(torch::kFloat), NewtonSchulzOptions{});
  CHECK((bf.scalar_type() == torch::kBFloat16));
  CHECK((bf.to(torch::kDouble) - out).abs().max().item<double>() < 0.05);
  // Singular values end up near 1 (in [0.5, 1.5] per the reference).
  const auto sv = torch::linalg_svdvals(out);
  CHECK(sv.min().item<double>() > 0.5);
  CHECK(sv.max().item<double>() < 1.5);
}

TEST_CASE("batched NS equals per-matrix NS in float64, and zero columns stay zero") {
  torch::manual_seed(1);
  NewtonSchulzOptions fp64;
  fp64.dtype = torch::kDouble;
  const auto stack = torch::randn({3, 4, 7}, torch::kDouble);
  const auto batched = orthogonalize_batched(stack, fp64);
  for (int k = 0; k < 3; ++k)
    CHECK(torch::allclose(batched[k], orthogonalize(stack[k], fp64), 0, 1e-12));
  const auto padded = torch::cat({stack, torch::zeros({3, 4, 5}, torch::kDouble)}, 2);
  const auto out = orthogonalize_batched(padded, fp64);
  CHECK(out.narrow(2, 7, 5).abs().max().item<double>() == 0.0);
  CHECK(torch::allclose(out.narrow(2, 0, 7), batched, 0, 1e-12));
}
