// Masks in validation (reference-tasks.md 4.5): the ground truth the predicted masks are matched
// with, and their IoU. The predicted masks are model::predicted_masks (model/mask_ops.h), at
// prototype resolution every epoch and at the input's with save_json (`trainer val`), where the
// GT is upsampled bilinearly and thresholded at 0.5; predictions.json's masks are
// data::masks_to_original (data/letterbox_inverse.h) as COCO RLE.
//
// Why its own unit: these pixel rules decide the (M) metrics; each is checked by hand and with the
// reference's numbers, apart from the scorer's bookkeeping.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace trainer::engine {

// The GT masks of image `image` of a batch, float 0/1 (rows, h, w) at (h, w): batch masks in the
// overlap layout (index image, row j = value j + 1) or one per label row (`first_row` = the
// image's first row in the batch); resized bilinearly and thresholded at 0.5 when (h, w) differs.
at::Tensor truth_masks(const at::Tensor& batch_masks, bool overlap, int64_t image,
                       int64_t first_row, int64_t rows, int64_t h, int64_t w);

// The reference's mask_iou: [gt][pred] row-major, intersection / (|gt| + |pred| - intersection +
// 1e-7), for gt (m, h, w) and pred (n, h, w) 0/1 masks of the same size.
std::vector<float> mask_overlaps(const at::Tensor& gt, const at::Tensor& pred);

}  // namespace trainer::engine
