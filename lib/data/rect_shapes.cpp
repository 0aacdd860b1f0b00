// Rect batch shapes; see rect_shapes.h.
// Tested by tests/data/test_augment.cpp: rect_shape set_rectangle rule and rect_plan ordering/batch
//   shapes.
#include "data/rect_shapes.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trainer::data {

std::array<int, 2> rect_shape(double min_ar, double max_ar, int imgsz, int stride, double pad) {
  double sh = 1.0, sw = 1.0;
  if (max_ar < 1.0) {
    sh = max_ar;
  } else if (min_ar > 1.0) {
    sw = 1.0 / min_ar;
  }
  auto side = [&](double f) {
    return static_cast<int>(std::ceil(f * imgsz / stride + pad)) * stride;
  };
  return {side(sh), side(sw)};
}

RectPlan rect_plan(const std::vector<std::array<int, 2>>& sizes, int batch, int imgsz, int stride,
                   double pad) {
  RectPlan plan;
  const size_t n = sizes.size();
  std::vector<double> ar(n);
  for (size_t i = 0; i < n; ++i) ar[i] = static_cast<double>(sizes[i][0]) / sizes[i][1];
  plan.order.resize(n);
  std::iota(plan.order.begin(), plan.order.end(), 0);
  std::stable_sort(plan.order.begin(), plan.order.end(),
                   [&](int64_t a, int64_t b) { return ar[a] < ar[b]; });
  for (size_t start = 0; start < n; start += batch) {
    const size_t end = std::min(n, start + batch);
    double lo = ar[plan.order[start]], hi = lo;
    for (size_t k = start; k < end; ++k) {
      lo = std::min(lo, ar[plan.order[k]]);
      hi = std::max(hi, ar[plan.order[k]]);
    }
    plan.shapes.push_back(rect_shape(lo, hi, imgsz, stride, pad));
  }
  return plan;
}

}  // namespace trainer::data
