// The reference's `multi_scale`: each training batch at a random size around imgsz.
//
// Why: training at sizes from imgsz * (1 - f) to imgsz * (1 + f) makes a model robust to the
// scale it sees at inference. As 8.4.190 does it, the size is drawn per batch
// (randrange(lo, hi) // stride * stride), the batch (already at training size) is resized
// bilinearly so its long side is that size with each side rounded up to a stride multiple, and
// the labels, normalised, stay as they are. The draw comes from (seed, iteration), so a resumed
// run repeats it.
#pragma once

#include <array>
#include <cstdint>

namespace at {
class Tensor;
}

namespace trainer::engine {

// randrange's bounds: lo = max(stride, int(imgsz * (1 - f))), hi = int(imgsz * (1 + f) + stride)
// (exclusive).
struct MultiScaleRange {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t stride = 32;

  int64_t smallest() const { return lo / stride * stride; }
  int64_t largest() const { return (hi - 1) / stride * stride; }
};

MultiScaleRange multi_scale_range(int64_t imgsz, double fraction, int64_t stride);

// The size drawn for iteration `ni` of a run with `seed`: uniform over [lo, hi), floored to the
// stride.
int64_t draw_multi_scale_size(const MultiScaleRange& range, uint64_t seed, int64_t ni);

// The (h, w) a (height, width) batch is resized to when `size` is drawn: unchanged when its long
// side already is `size`, else each side * size / long side rounded up to the stride.
std::array<int64_t, 2> multi_scale_shape(int64_t height, int64_t width, int64_t size,
                                         int64_t stride);

// `images` (B, 3, H, W) float resized bilinearly (align_corners false) to multi_scale_shape(),
// or returned as they are.
at::Tensor apply_multi_scale(const at::Tensor& images, int64_t size, int64_t stride);

}  // namespace trainer::engine
