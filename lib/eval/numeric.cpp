// NumPy-compatible numerics; see numeric.h.
#include "eval/numeric.h"

#include <algorithm>
#include <limits>

namespace trainer::eval {

std::vector<double> linspace(double start, double stop, int num) {
  std::vector<double> out(static_cast<size_t>(std::max(num, 0)));
  if (num == 1) out[0] = start;
  if (num < 2) return out;
  const double step = (stop - start) / static_cast<double>(num - 1);
  for (int i = 0; i < num; ++i) out[static_cast<size_t>(i)] = static_cast<double>(i) * step + start;
  out.back() = stop;
  return out;
}

double pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

double numpy_mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return (0.0 + pairwise_sum(values.data(), values.size())) / static_cast<double>(values.size());
}

double interp(double x, const std::vector<double>& xp, const std::vector<double>& fp, double left,
              double right) {
  const size_t n = xp.size();
  if (n == 0) return left;
  if (x > xp[n - 1]) return right;
  if (x < xp[0]) return left;
  // j: the last index with xp[j] <= x.
  const size_t j = static_cast<size_t>(std::upper_bound(xp.begin(), xp.end(), x) - xp.begin()) - 1;
  if (j == n - 1 || xp[j] == x) return fp[j];
  const double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
  double y = slope * (x - xp[j]) + fp[j];
  if (y != y) {  // NaN in one direction: try the other, as NumPy does
    y = slope * (x - xp[j + 1]) + fp[j + 1];
    if (y != y && fp[j] == fp[j + 1]) y = fp[j];
  }
  return y;
}

}  // namespace trainer::eval
