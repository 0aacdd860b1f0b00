// The keypoint terms of the pose losses on the positives: the OKS-shaped location loss and the
// keypoint objectness (visibility) BCE.
//
// Why separate: these are small formulas with numbers worth testing by hand; the pose head loss
// only gathers positives and applies gains.
#pragma once

#include <ATen/core/Tensor.h>

namespace trainer::loss {

// pred (N, K, >= 2) and gt (N, K, >= 2) keypoints [x, y, ...] in grid units, mask (N, K) bool
// (GT visibility != 0), area (N, 1) the target box w x h in grid units (no 0.53 factor), sigmas
// (K). Per keypoint e = d^2 / ((2 sigma)^2 (area + 1e-9) 2); per instance the factor
// K / (sum mask + 1e-9); the mean over N x K of factor (1 - exp(-e)) mask. 0-d, with gradient.
at::Tensor keypoint_location_loss(const at::Tensor& pred, const at::Tensor& gt,
                                  const at::Tensor& mask, const at::Tensor& area,
                                  const at::Tensor& sigmas);

// The mean BCE-with-logits of the visibility logits (N, K) against mask (N, K) as 0/1.
at::Tensor keypoint_objectness_loss(const at::Tensor& logits, const at::Tensor& mask);

// Static shapes: the same two means over keypoint rows (..., K) gathered into fixed slots
// (positive_slots.h). mask (..., K) is the visibility and already false on filler slots,
// row_weight (...) is 1 on positives and 0 on fillers, positives the 0-d device count N (>= 1):
// each sum over the rows divided by N x K, so the fillers add exact zeros.
at::Tensor masked_keypoint_location_loss(const at::Tensor& pred, const at::Tensor& gt,
                                         const at::Tensor& mask, const at::Tensor& area,
                                         const at::Tensor& sigmas, const at::Tensor& positives);
at::Tensor masked_keypoint_objectness_loss(const at::Tensor& logits, const at::Tensor& visible,
                                           const at::Tensor& row_weight,
                                           const at::Tensor& positives);

}  // namespace trainer::loss
