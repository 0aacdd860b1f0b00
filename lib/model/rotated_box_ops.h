// Rotated boxes as tensors: ProbIoU (element-wise and pairwise) and the distance encoding of the
// OBB head (dist2rbox / rbox2dist).
//
// Why: the OBB assigner, box loss and NMS rank and weigh rotated boxes by ProbIoU, computed on
// whole batches; these follow the reference's `probiou` / `batch_probiou` / `dist2rbox` /
// `rbox2dist` formulas (../shared/spec/reference-tasks.md section 3) and are tested against the
// scalar geometry::probiou and hand-computed encodings. Boxes are (..., 5) [cx, cy, w, h, angle].
#pragma once

#include <ATen/core/Tensor.h>

namespace trainer::model {

// ProbIoU of box1[i] and box2[i] (broadcasting), (...) out; `floor` is added to w^2/12 and h^2/12.
at::Tensor probiou(const at::Tensor& box1, const at::Tensor& box2, double floor = 0.0,
                   double eps = 1e-7);

// Every pair: (N, 5) x (M, 5) -> (N, M), floor 0 (matching, NMS and the assigner's overlap).
at::Tensor batch_probiou(const at::Tensor& box1, const at::Tensor& box2, double eps = 1e-7);

// Distances (..., 4) [l, t, r, b] from `anchors` (..., 2) along a box rotated by `angle` (..., 1)
// -> (..., 4) [cx, cy, w, h]: centre = anchor + R(angle) ((r - l) / 2, (b - t) / 2), w = l + r,
// h = t + b.
at::Tensor dist2rbox(const at::Tensor& distances, const at::Tensor& angle,
                     const at::Tensor& anchors);

// The inverse for targets: rotated boxes (..., 5) and anchors (..., 2) -> [l, t, r, b] in the box's
// frame; clamped to [0, reg_max - 1 - 0.01] when reg_max > 1 (the DFL targets), else unclamped.
at::Tensor rbox2dist(const at::Tensor& rboxes, const at::Tensor& anchors, int64_t reg_max);

}  // namespace trainer::model
