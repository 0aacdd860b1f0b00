// From the letterboxed model input back to the original image: points, boxes, rotated boxes and
// masks, as 8.4.190's scale_coords, scale_boxes and scale_masks map them.
//
// Why below the engine: validation (COCO results) and `trainer predict` both map every output back
// with these rules; predict now depends on them here instead of on the validator.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>

#include "data/batch.h"
#include "geometry/rotated_box.h"

namespace trainer::data {

// A point on the letterboxed input -> original-image pixels (scale_coords): minus the padding,
// divided by the axis's gain, clipped to the image.
std::array<float, 2> to_original_point(float x, float y, const ImageGeometry& geometry);

// A box on the letterboxed input -> original-image pixels (scale_boxes): each corner as a point,
// so an inverted box (x2 < x1, as YOLO26's raw side distances can give) stays inverted.
std::array<float, 4> to_original_xyxy(const std::array<float, 4>& xyxy,
                                      const ImageGeometry& geometry);

// A rotated box on the letterboxed input -> original pixels (scale_boxes with xywh: the centre
// minus the padding, centre and sides over each axis's gain, no clipping).
geometry::RotatedBox to_original_rbox(const geometry::RotatedBox& box,
                                      const ImageGeometry& geometry);

// Native masks (n, H, W) of the letterboxed input -> the original image's (n, oh, ow) uint8 0/1,
// as the reference's scale_masks(ratio_pad) + .byte(): the content window [round(pad - 0.1),
// + round(original x gain)) cropped, bilinearly resized, truncated (only pixels interpolated to
// exactly 1 stay set).
at::Tensor masks_to_original(const at::Tensor& masks, const ImageGeometry& geometry);

}  // namespace trainer::data
