// See multi_scale.h.
#include "engine/multi_scale.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "data/augment/sample_rng.h"

namespace trainer::engine {

MultiScaleRange multi_scale_range(int64_t imgsz, double fraction, int64_t stride) {
  MultiScaleRange r;
  r.stride = stride;
  r.lo = std::max(stride, static_cast<int64_t>(static_cast<double>(imgsz) * (1.0 - fraction)));
  r.hi = static_cast<int64_t>(static_cast<double>(imgsz) * (1.0 + fraction) +
                              static_cast<double>(stride));
  return r;
}

int64_t draw_multi_scale_size(const MultiScaleRange& range, uint64_t seed, int64_t ni) {
  data::augment::SampleRng rng(seed, 0, ni, data::augment::StreamPurpose::kMultiScale);
  const auto span = static_cast<uint64_t>(std::max<int64_t>(range.hi - range.lo, 1));
  const int64_t value = range.lo + static_cast<int64_t>(rng.below(span));
  return value / range.stride * range.stride;
}

std::array<int64_t, 2> multi_scale_shape(int64_t height, int64_t width, int64_t size,
                                         int64_t stride) {
  const double scale = static_cast<double>(size) / static_cast<double>(std::max(height, width));
  if (scale == 1.0) return {height, width};
  const auto side = [&](int64_t x) {
    return static_cast<int64_t>(
               std::ceil(static_cast<double>(x) * scale / static_cast<double>(stride))) *
           stride;
  };
  return {side(height), side(width)};
}

at::Tensor apply_multi_scale(const at::Tensor& images, int64_t size, int64_t stride) {
  const auto shape = multi_scale_shape(images.size(2), images.size(3), size, stride);
  if (shape[0] == images.size(2) && shape[1] == images.size(3)) return images;
  namespace F = torch::nn::functional;
  return F::interpolate(images, F::InterpolateFuncOptions()
                                    .size(std::vector<int64_t>{shape[0], shape[1]})
                                    .mode(torch::kBilinear)
                                    .align_corners(false));
}

}  // namespace trainer::engine
