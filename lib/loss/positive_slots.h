// A fixed number of slots per image for the assigned positives, for the static training step.
//
// Why: terms computed only on the positives (pose keypoints, segmentation masks) are cheap on the
// few positives and expensive on every anchor (the pose flow, a mask per anchor). With static
// shapes their number cannot decide a tensor's shape, but it has an exact bound: every positive
// anchor was among some valid GT's top-k candidates (resolving an anchor claimed twice changes its
// GT, not whether it is positive), so an image has at most topk x max_instances of them; after
// the second pass each of the M rows keeps at most topk2, so also topk2 x max_instances; and
// never more than its anchors. The positives are
// gathered into that many slots with a top-k over the foreground mask; the slots left over are
// fillers with weight 0.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace trainer::loss {

// min(anchors, min(topk, topk2) x max_instances): the largest number of positives an image can
// have after the task-aligned assignment (topk2 < 0 means the same as topk).
int64_t positive_capacity(int64_t anchors, int64_t max_instances, int64_t topk, int64_t topk2);

struct PositiveSlots {
  at::Tensor anchor;     // (B, P) int64: the anchor of each slot (a positive first, then fillers)
  at::Tensor weight;     // (B, P) float: 1 for a positive, 0 for a filler
  at::Tensor positives;  // 0-d float: the number of positives in the batch, at least 1
};

// fg_mask (B, A) bool -> P = capacity slots per image. Every positive gets a slot when the
// capacity is positive_capacity()'s bound; the order of the slots is not specified.
PositiveSlots positive_slots(const at::Tensor& fg_mask, int64_t capacity);

// values (B, A, ...) -> (B, P, ...): each slot's anchor row.
at::Tensor gather_slots(const at::Tensor& values, const at::Tensor& anchor);

}  // namespace trainer::loss
