// Mask assembly and cropping; see mask_ops.h.
#include "model/mask_ops.h"

#include <ATen/ATen.h>

namespace trainer::model {

at::Tensor mask_logits(const at::Tensor& coefficients, const at::Tensor& protos) {
  const int64_t nm = protos.size(0), h = protos.size(1), w = protos.size(2);
  return coefficients.matmul(protos.reshape({nm, h * w})).view({-1, h, w});
}

at::Tensor crop_mask(const at::Tensor& masks, const at::Tensor& boxes) {
  const int64_t h = masks.size(1), w = masks.size(2);
  const auto b = boxes.to(masks.device()).unsqueeze(-1).unsqueeze(-1);  // (n, 4, 1, 1)
  const auto x1 = b.select(1, 0), y1 = b.select(1, 1), x2 = b.select(1, 2), y2 = b.select(1, 3);
  const auto opts = boxes.options().device(masks.device());
  const auto cols = at::arange(w, opts).view({1, 1, w});
  const auto rows = at::arange(h, opts).view({1, h, 1});
  const auto keep_cols = cols.ge(x1).logical_and(cols.lt(x2));  // (n, 1, w)
  const auto keep_rows = rows.ge(y1).logical_and(rows.lt(y2));  // (n, h, 1)
  return masks * keep_cols.to(masks.scalar_type()) * keep_rows.to(masks.scalar_type());
}

namespace {

// Masks upsampled at once in the native path: the reference bounds its float intermediate to 16 M
// pixels.
constexpr int64_t kPixelBudget = 16'000'000;

}  // namespace

at::Tensor predicted_masks(const at::Tensor& protos, const at::Tensor& coefficients,
                           const at::Tensor& boxes, int64_t input_h, int64_t input_w, bool native) {
  const int64_t mh = protos.size(1), mw = protos.size(2);
  const int64_t n = coefficients.size(0);
  const auto byte_opts = protos.options().dtype(at::kByte);
  if (n == 0) return at::zeros({0, native ? input_h : mh, native ? input_w : mw}, byte_opts);
  const auto logits = mask_logits(coefficients.to(at::kFloat), protos.to(at::kFloat));
  if (!native) {
    const auto ratios = at::tensor(
        {double(mw) / input_w, double(mh) / input_h, double(mw) / input_w, double(mh) / input_h},
        boxes.options().dtype(at::kFloat));
    return crop_mask(logits.gt(0).to(at::kByte), boxes.to(at::kFloat) * ratios);
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
  return crop_mask(out, boxes.to(at::kFloat));
}

}  // namespace trainer::model
