// The few NumPy numerics the two evaluators depend on, reproduced operation for operation.
//
// Why: "identical to pycocotools" means the same doubles, and pycocotools' answers depend on how
// NumPy builds its threshold grids (`linspace`), how `np.mean` sums (pairwise, not left to right)
// and how `np.interp` treats repeated abscissae. Keeping these in one place lets the evaluators
// read like the formulas and lets the tests pin each one against values printed by NumPy.
#pragma once

#include <cstddef>
#include <vector>

namespace trainer::eval {

// np.linspace(start, stop, num): start + i * ((stop - start) / (num - 1)), the last value exactly
// `stop`.
std::vector<double> linspace(double start, double stop, int num);

// np.add.reduce over a contiguous double array: NumPy's pairwise summation (blocks of 128 with an
// 8-way unrolled inner loop), starting from 0.0. Bit-identical to `np.sum`.
double pairwise_sum(const double* values, size_t count);

// np.mean: pairwise_sum / count (NaN for an empty input, as NumPy's 0/0).
double numpy_mean(const std::vector<double>& values);

// np.interp(x, xp, fp, left, right) for one x; xp must be non-decreasing. With repeated xp the
// last of the equal entries wins, as in NumPy's binary search.
double interp(double x, const std::vector<double>& xp, const std::vector<double>& fp, double left,
              double right);

}  // namespace trainer::eval
