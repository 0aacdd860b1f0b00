// The ltrb <-> box conversions the loss works in; the anchors themselves are model/anchors.h.
//
// Why: the Detect head predicts, per grid cell, distances from the cell centre to the four box
// sides in grid units. The loss decodes them like the model's decoder (same function) and also
// needs the inverse, clamped for the DFL bins.
#pragma once

#include <ATen/core/Tensor.h>

#include "model/anchors.h"

namespace trainer::loss {

// distance (..., 4) [l, t, r, b] around points (..., 2) -> [x1, y1, x2, y2] (or [cx, cy, w, h]).
at::Tensor dist_to_bbox(const at::Tensor& distance, const at::Tensor& points, bool xywh = false);

// boxes (..., 4) xyxy around points (..., 2) -> [l, t, r, b]; clamped to [0, max_dist] when
// max_dist >= 0 (the DFL uses reg_max - 1 - 0.01), unclamped otherwise.
at::Tensor bbox_to_dist(const at::Tensor& points, const at::Tensor& boxes, double max_dist = -1.0);

}  // namespace trainer::loss
