// Anchor points (grid-cell centres) and the ltrb <-> box conversions the head's outputs live in.
//
// Why: the Detect head predicts, per grid cell, distances from the cell centre to the four box
// sides in grid units. The loss and the decoder both need the same anchors and conversions.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace trainer::loss {

struct Anchors {
  at::Tensor points;   // (A, 2) [x, y] cell centres in grid units, level by level (P3, P4, P5)
  at::Tensor strides;  // (A, 1) the stride of each anchor's level
};

// Anchors for feature maps of the given (H, W) per level: centres (x + offset, y + offset), row
// by row. At 640 with strides 8/16/32 that is 80^2 + 40^2 + 20^2 = 8400 anchors. Always fp32
// (bf16 cannot hold 159.5 exactly), on `device`.
Anchors make_anchors(const std::vector<std::pair<int64_t, int64_t>>& level_hw,
                     const std::vector<double>& strides, double offset, at::Device device);
// Same, reading (H, W) from each feature map (B, C, H, W).
Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset = 0.5);

// distance (..., 4) [l, t, r, b] around points (..., 2) -> [x1, y1, x2, y2] (or [cx, cy, w, h]).
at::Tensor dist_to_bbox(const at::Tensor& distance, const at::Tensor& points, bool xywh = false);

// boxes (..., 4) xyxy around points (..., 2) -> [l, t, r, b]; clamped to [0, max_dist] when
// max_dist >= 0 (the DFL uses reg_max - 1 - 0.01), unclamped otherwise.
at::Tensor bbox_to_dist(const at::Tensor& points, const at::Tensor& boxes, double max_dist = -1.0);

}  // namespace trainer::loss
