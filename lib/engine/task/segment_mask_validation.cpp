// Validation masks; see mask_validation.h.
#include "engine/task/segment_mask_validation.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "model/mask_ops.h"

namespace trainer::engine {
namespace {

// Masks at once in the native path: the reference bounds its float intermediate to 16 M pixels.
constexpr int64_t kPixelBudget = 16'000'000;

}  // namespace

at::Tensor predicted_masks(const at::Tensor& protos, const at::Tensor& coefficients,
                           const at::Tensor& boxes, int64_t input_h, int64_t input_w, bool native) {
  const int64_t mh = protos.size(1), mw = protos.size(2);
  const int64_t n = coefficients.size(0);
  const auto byte_opts = protos.options().dtype(at::kByte);
  if (n == 0) return at::zeros({0, native ? input_h : mh, native ? input_w : mw}, byte_opts);
  const auto logits = model::mask_logits(coefficients.to(at::kFloat), protos.to(at::kFloat));
  if (!native) {
    const auto ratios = at::tensor(
        {double(mw) / input_w, double(mh) / input_h, double(mw) / input_w, double(mh) / input_h},
        boxes.options().dtype(at::kFloat));
    return model::crop_mask(logits.gt(0).to(at::kByte), boxes.to(at::kFloat) * ratios);
  }
  // Upsampled in chunks to the input size (the letterbox padding then lies on whole pixels).
  auto out = at::empty({n, input_h, input_w}, byte_opts);
  const int64_t chunk = std::max<int64_t>(1, kPixelBudget / (input_h * input_w + mh * mw));
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t len = std::min(chunk, n - start);
    const auto up = at::upsample_bilinear2d(logits.narrow(0, start, len).unsqueeze(0),
                                            {input_h, input_w}, /*align_corners=*/false);
    out.narrow(0, start, len).copy_(up.squeeze(0).gt(0));
  }
  return model::crop_mask(out, boxes.to(at::kFloat));
}

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

at::Tensor masks_to_original(const at::Tensor& masks, const data::ImageGeometry& g) {
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

}  // namespace trainer::engine
