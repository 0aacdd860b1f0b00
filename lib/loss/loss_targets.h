// What a batch gives the loss besides the head's outputs: the box labels and, for keypoint tasks,
// the keypoints, rotated boxes or masks of the same rows.
//
// Why a struct: the loss of each task reads different batch fields (pose keypoints, OBB rotated
// boxes, segmentation masks), and the train step and the validator hand over one value.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace trainer::loss {

struct LossTargets {
  at::Tensor labels;     // (n, 6) float [image_index, class, cx, cy, w, h], normalised to [0, 1]
  at::Tensor keypoints;  // (n, K, 3) float [x / W, y / H, visibility 0/1/2]; undefined or K = 0
                         // for tasks without keypoints
  at::Tensor rboxes;     // (n, 5) float [cx / W, cy / H, w / W, h / H, angle]: OBB only
  // Segmentation only (data/batch.h): overlap_masks: (B, h, w) int, pixel j + 1 = the image's
  // j-th row of `labels`; else (n, h, w) 0/1, one per row.
  at::Tensor masks;
  bool overlap_masks = true;
  // Static shapes (the training step with `static_shapes: true`): > 0 packs every image's targets
  // to exactly this many rows (loss/instance_cap.h has already dropped any beyond it), and the
  // assigner and the box losses compute on all (image, row, anchor) and (image, anchor) entries
  // with masks instead of selecting them, so no tensor's shape depends on the object count.
  // 0: rows padded to the batch's largest count, positives selected (the reference's way).
  int64_t static_instances = 0;
};

}  // namespace trainer::loss
