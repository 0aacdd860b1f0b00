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

}  // namespace trainer::model
