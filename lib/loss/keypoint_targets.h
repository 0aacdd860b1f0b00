// Ground-truth keypoints of a batch, padded per image like the boxes (gt_targets.h).
//
// Why: the pose losses and the pose assigner look keypoints up by (image, GT slot), the slots
// pack_targets gives the boxes, so the keypoints must be packed in the same row order.
#pragma once

#include <ATen/core/Tensor.h>

namespace trainer::loss {

// labels (n, 6) [image_index, class, cx, cy, w, h] (only the image index is read), keypoints
// (n, K, 2 or 3) [x / W, y / H(, visibility)] normalised, same rows -> (B, M, K, 3) fp32 on
// `device`, xy in input pixels (x W, y H), M the largest count in any image (as pack_targets).
// A last dimension of 2 gets visibility 1 appended. Padding slots are zero. static_instances > 0:
// M is that number (static shapes; pack_targets refuses an image with more rows).
at::Tensor pack_keypoints(const at::Tensor& labels, const at::Tensor& keypoints, int64_t batch_size,
                          double image_h, double image_w, at::Device device,
                          int64_t static_instances = 0);

}  // namespace trainer::loss
