// Ground-truth boxes of a batch, padded per image so the assigner can run on the whole batch.
//
// Why: labels arrive as one (n, 6) list for the batch; the assigner wants (B, M, .) with M the
// largest count in any image and a mask for the padding rows, boxes in input-image pixels.
#pragma once

#include <ATen/core/Tensor.h>

namespace trainer::loss {

struct GtTargets {
  at::Tensor labels;     // (B, M, 1) float class ids (0 on padding rows)
  at::Tensor bboxes;     // (B, M, 4) xyxy pixels (0 on padding rows)
  at::Tensor mask;       // (B, M, 1) bool: a real box (coordinate sum > 0, as the reference)
  at::Tensor keypoints;  // (B, M, K, 3) pixels, pose only (PoseLoss::prepare, pack_keypoints)
  // Segmentation only (SegmentLoss::prepare), on the device: the masks in the batch's layout
  // (data/batch.h; with static shapes per-object masks are padded to (B, M, h, w) by pack_rows)
  // and the label rows (n, 6) the selecting path reads image indices and classes from.
  at::Tensor masks;
  bool overlap_masks = true;
  at::Tensor label_rows;
  // M was fixed by the caller (static shapes): the assigner and the box losses then work on every
  // entry with masks (no selection by a data-dependent mask).
  bool static_shapes = false;
};

// labels (n, 6) [image_index, class, cx, cy, w, h] normalised; rows keep their order within an
// image. Throws std::invalid_argument naming the row for an image index outside [0, batch_size)
// or a class outside [0, num_classes). The result is fp32 on `device`.
// static_instances > 0: M is that number (static shapes) instead of the largest count of any
// image; an image with more rows is refused (std::invalid_argument: loss/instance_cap.h caps them).
GtTargets pack_targets(const at::Tensor& labels, int64_t batch_size, int64_t num_classes,
                       double image_h, double image_w, at::Device device,
                       int64_t static_instances = 0);

// OBB: the rotated boxes `rboxes` (n, 5) [cx, cy, w, h, angle] (normalised, the rows of `labels`)
// -> bboxes (B, M, 5) [cx, cy, w, h, angle] in pixels. Rows whose w x image_w or h x image_h is
// under 2 px are dropped first (the reference's v8OBBLoss filter); mask = coordinate sum > 0.
GtTargets pack_rotated_targets(const at::Tensor& labels, const at::Tensor& rboxes,
                               int64_t batch_size, int64_t num_classes, double image_h,
                               double image_w, at::Device device, int64_t static_instances = 0);

// values (n, ...), one per row of labels (n, 6) -> (B, slots, ...): each row at its image and its
// position among that image's rows (input order), the slots pack_targets gives its boxes; zeros
// elsewhere. An image with more rows than `slots` is refused (std::invalid_argument).
at::Tensor pack_rows(const at::Tensor& labels, const at::Tensor& values, int64_t batch_size,
                     int64_t slots);

}  // namespace trainer::loss
