// Anchor points and distance-to-box decoding (reference-behaviour.md 4.2 "Anchors", 5.1).
//
// Why: the head's raw ltrb outputs are distances in grid units from each grid-cell centre; the
// decoder, the inference postprocess and the loss all need the same anchor order (P3, P4, P5,
// row-major within a level), so this is the one implementation (lib/loss uses it too).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace trainer::model {

struct Anchors {
  at::Tensor points;   // (A, 2): (x + offset, y + offset) in grid units, level by level
  at::Tensor strides;  // (A, 1): the level's stride for each anchor
};

// One anchor per cell of maps of the given (H, W) per level, row by row. At 640 with strides
// 8/16/32 that is 80^2 + 40^2 + 20^2 = 8400 anchors. Throws std::invalid_argument when the level
// and stride counts differ. fp32 by default (bf16 cannot hold 159.5 exactly).
Anchors make_anchors(const std::vector<std::pair<int64_t, int64_t>>& level_hw,
                     const std::vector<double>& strides, double offset, at::Device device,
                     at::ScalarType dtype = at::kFloat);
// Same, reading (H, W) from each feature map (B, C, H, W); dtype and device follow feats[0]
// unless `dtype` is given (the decoder and the loss ask for float32).
Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset = 0.5);
Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset, at::ScalarType dtype);

// ltrb distances -> boxes around `anchor_points` along `dim` (size 4 there): xyxy, or xywh when
// `xywh` is true. Shapes broadcast, e.g. distance (B, 4, A) with anchors (1, 2, A) and dim 1.
at::Tensor dist2bbox(const at::Tensor& distance, const at::Tensor& anchor_points, bool xywh,
                     int64_t dim);

}  // namespace trainer::model
