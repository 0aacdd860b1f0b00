// Validation masks; see segment_mask_validation.h.
#include "engine/task/segment_mask_validation.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace trainer::engine {
namespace {

// Masks at once in the native path: the reference bounds its float intermediate to 16 M pixels.
constexpr int64_t kPixelBudget = 16'000'000;

}  // namespace

at::Tensor truth_masks(const at::Tensor& batch_masks, bool overlap, int64_t image,
                       int64_t first_row, int64_t rows, int64_t h, int64_t w) {
  at::Tensor masks;
  if (overlap) {
    const auto ids =
        at::arange(1, rows + 1, batch_masks.options().dtype(at::kInt)).view({-1, 1, 1});
    masks = batch_masks[image].unsqueeze(0).eq(ids).to(at::kFloat);
  } else {
    masks = batch_masks.narrow(0, first_row, rows).to(at::kFloat);
  }
  if (rows > 0 && (masks.size(1) != h || masks.size(2) != w)) {
    masks = at::upsample_bilinear2d(masks.unsqueeze(0), {h, w}, false)
                .squeeze(0)
                .gt(0.5)
                .to(at::kFloat);
  }
  return masks;
}

std::vector<float> mask_overlaps(const at::Tensor& gt, const at::Tensor& pred) {
  const int64_t m = gt.size(0), n = pred.size(0);
  std::vector<float> out(static_cast<size_t>(m * n));
  if (m == 0 || n == 0) return out;
  const auto g = gt.reshape({m, -1}).to(at::kFloat);
  const auto g_area = g.sum(1).unsqueeze(1);
  // Predictions in slices, so a full-resolution float copy of all of them never exists.
  const int64_t pixels = g.size(1);
  const int64_t chunk = std::max<int64_t>(1, kPixelBudget / std::max<int64_t>(pixels, 1));
  auto iou = at::empty({m, n}, g.options());
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t len = std::min(chunk, n - start);
    const auto p = pred.narrow(0, start, len).reshape({len, -1}).to(at::kFloat);
    const auto inter = g.matmul(p.t()).clamp_min(0);
    const auto uni = g_area + p.sum(1).unsqueeze(0) - inter;
    iou.narrow(1, start, len).copy_(inter / (uni + 1e-7));
  }
  const auto host = iou.to(at::kCPU).contiguous();
  std::copy_n(host.data_ptr<float>(), m * n, out.begin());
  return out;
}

}  // namespace trainer::engine
