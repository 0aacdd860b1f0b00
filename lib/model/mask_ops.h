// Instance masks from a segmentation head's outputs (reference-tasks.md 4.4, 4.5): coefficients
// times prototypes, and the crop of a mask (or of a per-pixel loss) to its box.
//
// Why in the model: the loss, the validator and prediction all assemble and crop masks the same
// way; one definition keeps the pixel rules (which columns a box covers) identical between them.
#pragma once

#include <ATen/core/Tensor.h>

namespace trainer::model {

// (n, nm) coefficients x (nm, h, w) prototypes -> (n, h, w) mask logits.
at::Tensor mask_logits(const at::Tensor& coefficients, const at::Tensor& protos);

// Zeroes what lies outside each box: masks (n, h, w) (any dtype; a new tensor is returned),
// boxes (n, 4) xyxy in mask pixels. Pixel (row r, column c) stays when x1 <= c < x2 and
// y1 <= r < y2 (the reference's crop_mask: pixel indices, not centres).
at::Tensor crop_mask(const at::Tensor& masks, const at::Tensor& boxes);

// Predicted masks, uint8 0/1 (the reference's process_mask): protos (nm, mh, mw), coefficients
// (n, nm), boxes (n, 4) xyxy in input pixels (input_h x input_w = 4 x the prototypes' size).
// Binarised at logit > 0 and cropped to the box scaled to prototype pixels: (n, mh, mw). With
// `native` (save_json validation, predict) the logits are upsampled bilinearly to the input size
// first, then binarised and cropped to the input-pixel box: (n, input_h, input_w).
at::Tensor predicted_masks(const at::Tensor& protos, const at::Tensor& coefficients,
                           const at::Tensor& boxes, int64_t input_h, int64_t input_w, bool native);

}  // namespace trainer::model
