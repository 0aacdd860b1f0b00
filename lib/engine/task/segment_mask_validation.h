// Masks in validation (reference-tasks.md 4.5): the predicted masks of the detections, the ground
// truth they are matched with, their IoU, and the masks written to predictions.json.
//   process_mask (every epoch): coefficients x prototypes at prototype resolution, binarised
//     (logit > 0), cropped to the detection's box scaled to prototype pixels; GT at the same size.
//   native (save_json, `trainer val` with predictions): the logits bilinearly upsampled to the
//     input size, binarised, cropped to the input-pixel box; GT upsampled bilinearly and > 0.5.
//   predictions.json: the native masks resized to the original image (letterbox padding cropped,
//     bilinear), truncated to bytes as the reference's .byte() does, then COCO RLE.
//
// Why its own unit: these pixel rules decide the (M) metrics and the RLE strings; each is checked
// by hand and with the reference's numbers, apart from the validator's bookkeeping.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "data/batch.h"

namespace trainer::engine {

// Predicted masks, uint8 0/1: protos (nm, mh, mw), coefficients (n, nm), boxes (n, 4) xyxy in
// input pixels (input_h x input_w = 4 x the prototypes' size). (n, mh, mw), or with `native`
// (n, input_h, input_w).
at::Tensor predicted_masks(const at::Tensor& protos, const at::Tensor& coefficients,
                           const at::Tensor& boxes, int64_t input_h, int64_t input_w, bool native);

// The GT masks of image `image` of a batch, float 0/1 (rows, h, w) at (h, w): batch masks in the
// overlap layout (index image, row j = value j + 1) or one per label row (`first_row` = the
// image's first row in the batch); resized bilinearly and thresholded at 0.5 when (h, w) differs.
at::Tensor truth_masks(const at::Tensor& batch_masks, bool overlap, int64_t image,
                       int64_t first_row, int64_t rows, int64_t h, int64_t w);

// The reference's mask_iou: [gt][pred] row-major, intersection / (|gt| + |pred| - intersection +
// 1e-7), for gt (m, h, w) and pred (n, h, w) 0/1 masks of the same size.
std::vector<float> mask_overlaps(const at::Tensor& gt, const at::Tensor& pred);

// Native masks (n, H, W) of the letterboxed input -> the original image's (n, oh, ow) uint8 0/1,
// as the reference's scale_masks(ratio_pad) + .byte(): the content window [round(pad - 0.1),
// + round(original x gain)) cropped, bilinearly resized, truncated (only pixels interpolated to
// exactly 1 stay set).
at::Tensor masks_to_original(const at::Tensor& masks, const data::ImageGeometry& geometry);

}  // namespace trainer::engine
