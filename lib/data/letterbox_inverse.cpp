// See letterbox_inverse.h.
#include "data/letterbox_inverse.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace trainer::data {
namespace {

// Masks resized at once: the reference bounds its float intermediate to 16 M pixels.
constexpr int64_t kPixelBudget = 16'000'000;

}  // namespace

std::array<float, 2> to_original_point(float x, float y, const ImageGeometry& g) {
  auto unletterbox = [](float v, double pad, double gain, int limit) {
    return static_cast<float>(std::clamp((v - pad) / gain, 0.0, static_cast<double>(limit)));
  };
  return {unletterbox(x, g.pad_x, g.gain_x, g.original_width),
          unletterbox(y, g.pad_y, g.gain_y, g.original_height)};
}

std::array<float, 4> to_original_xyxy(const std::array<float, 4>& xyxy, const ImageGeometry& g) {
  const auto [x1, y1] = to_original_point(xyxy[0], xyxy[1], g);
  const auto [x2, y2] = to_original_point(xyxy[2], xyxy[3], g);
  return {x1, y1, x2, y2};
}

geometry::RotatedBox to_original_rbox(const geometry::RotatedBox& box, const ImageGeometry& g) {
  return {(box.cx - g.pad_x) / g.gain_x, (box.cy - g.pad_y) / g.gain_y, box.w / g.gain_x,
          box.h / g.gain_y, box.angle};
}

at::Tensor masks_to_original(const at::Tensor& masks, const ImageGeometry& g) {
  const int64_t oh = g.original_height, ow = g.original_width;
  const int64_t n = masks.size(0), h = masks.size(1), w = masks.size(2);
  if (n == 0) return at::zeros({0, oh, ow}, masks.options().dtype(at::kByte));
  if (h == oh && w == ow) return masks.to(at::kByte);
  // Python's round (half to even), as scale_masks computes its window.
  const auto py_round = [](double v) { return static_cast<int64_t>(std::nearbyint(v)); };
  const int64_t top = py_round(g.pad_y - 0.1), left = py_round(g.pad_x - 0.1);
  const int64_t bottom = std::min(h, top + std::max<int64_t>(py_round(oh * g.gain_y), 1));
  const int64_t right = std::min(w, left + std::max<int64_t>(py_round(ow * g.gain_x), 1));
  auto out = at::empty({n, oh, ow}, masks.options().dtype(at::kByte));
  const int64_t chunk = std::max<int64_t>(1, kPixelBudget / (oh * ow + h * w));
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t len = std::min(chunk, n - start);
    const auto window = masks.narrow(0, start, len)
                            .narrow(1, top, bottom - top)
                            .narrow(2, left, right - left)
                            .to(at::kFloat)
                            .unsqueeze(0);
    const auto resized = at::upsample_bilinear2d(window, {oh, ow}, false).squeeze(0);
    out.narrow(0, start, len).copy_(resized.to(at::kByte));  // truncation, as .byte()
  }
  return out;
}

}  // namespace trainer::data
