// See positive_slots.h.
// Tested by tests/loss/test_static_loss.cpp: positive_capacity bound, positive_slots
//   anchors/weights/count floor, gather_slots, overflow refused.
#include "loss/positive_slots.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

namespace trainer::loss {

int64_t positive_capacity(int64_t anchors, int64_t max_instances, int64_t topk, int64_t topk2) {
  if (anchors < 0 || max_instances < 0 || topk < 1) {
    throw std::invalid_argument("positive_capacity: anchors, max_instances >= 0 and topk >= 1");
  }
  const int64_t per_gt = topk2 > 0 ? std::min(topk, topk2) : topk;
  return std::min(anchors, per_gt * max_instances);
}

PositiveSlots positive_slots(const at::Tensor& fg_mask, int64_t capacity) {
  if (fg_mask.dim() != 2 || capacity < 0 || capacity > fg_mask.size(1)) {
    throw std::invalid_argument("positive_slots: fg_mask (B, A) and 0 <= capacity <= A");
  }
  const auto fg = fg_mask.to(at::kFloat);
  auto [weight, anchor] = fg.topk(capacity, 1, /*largest=*/true, /*sorted=*/false);
  return {anchor, weight, fg.sum().clamp_min(1)};
}

at::Tensor gather_slots(const at::Tensor& values, const at::Tensor& anchor) {
  const int64_t bs = values.size(0), na = values.size(1);
  const auto flat = anchor + at::arange(bs, anchor.options()).unsqueeze(1) * na;  // (B, P)
  return values.flatten(0, 1).index({flat});
}

}  // namespace trainer::loss
