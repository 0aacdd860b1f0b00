// Rectangular batch shapes for validation (the reference's set_rectangle).
//
// Why: validating letterboxed squares wastes pixels on padding; sorting images by aspect ratio
// and giving each batch one shape keeps padding small. Rule: ar = h / w; images sorted by ar
// (stable); per batch, if max ar < 1 the shape is (max ar, 1), if min ar > 1 it is (1, 1 / min ar),
// else (1, 1); the batch shape (h, w) is ceil(shape * imgsz / stride + pad) * stride
// (pad 0.5 for val, 0 for train).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace trainer::data {

struct RectPlan {
  std::vector<int64_t> order;              // dataset indices sorted by aspect ratio
  std::vector<std::array<int, 2>> shapes;  // per batch (height, width)
};

// The shape (height, width) of a batch whose aspect ratios (h / w) span [min_ar, max_ar].
std::array<int, 2> rect_shape(double min_ar, double max_ar, int imgsz, int stride, double pad);

// `sizes` are (height, width) per dataset index.
RectPlan rect_plan(const std::vector<std::array<int, 2>>& sizes, int batch, int imgsz, int stride,
                   double pad);

}  // namespace trainer::data
