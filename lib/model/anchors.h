// Anchor points and distance-to-box decoding (reference-behaviour.md 4.2 "Anchors", 5.1).
//
// Why: the head's raw ltrb outputs are distances in grid units from each grid-cell centre; the
// decoder, the inference postprocess and the loss all need the same anchor order (P3, P4, P5,
// row-major within a level).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace trainer::model {

struct Anchors {
  at::Tensor points;   // (A, 2) float: (x + offset, y + offset) in grid units
  at::Tensor strides;  // (A, 1) float: the level's stride for each anchor
};

// One anchor per cell of each feature map (B, C, H_l, W_l), level by level; `dtype`/device follow
// feats[0] unless `dtype` is given (the decoder asks for float32).
Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset = 0.5);
Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset, at::ScalarType dtype);

// ltrb distances -> boxes around `anchor_points` along `dim` (size 4 there): xyxy, or xywh when
// `xywh` is true. Shapes broadcast, e.g. distance (B, 4, A) with anchors (1, 2, A) and dim 1.
at::Tensor dist2bbox(const at::Tensor& distance, const at::Tensor& anchor_points, bool xywh,
                     int64_t dim);

}  // namespace trainer::model
