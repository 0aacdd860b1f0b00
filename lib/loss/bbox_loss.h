// The box terms of the detection loss: CIoU, and either the distribution focal loss (reg_max > 1,
// YOLO11) or the image-normalised L1 on ltrb distances (reg_max == 1, YOLO26).
//
// Why separate: these are the per-anchor maths with numbers worth testing on their own (the DFL's
// two-bin targets, the L1 normalisation); the detection loss only gathers and sums.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace trainer::loss {

// DFL targets for continuous distances t (..., 4): clamped to [0, reg_max - 1 - 0.01], then the
// lower bin tl = floor(t) with weight wl = tl + 1 - t and the upper bin tl + 1 with 1 - wl.
struct DflTargets {
  at::Tensor lower;         // int64
  at::Tensor lower_weight;  // wl
  at::Tensor upper_weight;  // wr = 1 - wl
};
DflTargets dfl_targets(const at::Tensor& target, int64_t reg_max);

// pred_dist (N * 4, reg_max) logits, target (N, 4) distances in grid units -> (N, 1):
// mean over the 4 sides of CE(pred, tl) wl + CE(pred, tl + 1) wr.
at::Tensor dfl_loss(const at::Tensor& pred_dist, const at::Tensor& target, int64_t reg_max);

struct BoxLossTerms {
  at::Tensor iou;  // 0-d: sum_fg (1 - CIoU) w / target_scores_sum
  at::Tensor dfl;  // 0-d: the DFL (reg_max > 1) or the normalised L1 (reg_max == 1) term
};

// Inputs per anchor (B, A, .) in grid units: pred_dist (raw head box channels, 4 * reg_max),
// pred_bboxes (decoded xyxy), anchor_points (A, 2), target_bboxes (xyxy), target_scores (B, A, nc),
// fg_mask (B, A) bool, stride (A, 1); image_hw the input size in pixels (for the L1 term).
// The weight of a foreground anchor is the sum of its target scores.
BoxLossTerms bbox_loss(const at::Tensor& pred_dist, const at::Tensor& pred_bboxes,
                       const at::Tensor& anchor_points, const at::Tensor& target_bboxes,
                       const at::Tensor& target_scores, const at::Tensor& target_scores_sum,
                       const at::Tensor& fg_mask, const at::Tensor& stride, double image_h,
                       double image_w, int64_t reg_max);

// The same terms for static shapes: computed on every anchor and weighted, instead of on the
// foreground anchors selected by fg_mask (a selection's size depends on the data). Off the
// foreground the weight is 0 (target scores are 0 there) and the boxes are replaced by a unit box
// before the CIoU, so background entries add exactly 0 to the sums and to every gradient. Equal
// to bbox_loss up to the order of the sums.
BoxLossTerms masked_bbox_loss(const at::Tensor& pred_dist, const at::Tensor& pred_bboxes,
                              const at::Tensor& anchor_points, const at::Tensor& target_bboxes,
                              const at::Tensor& target_scores, const at::Tensor& target_scores_sum,
                              const at::Tensor& fg_mask, const at::Tensor& stride, double image_h,
                              double image_w, int64_t reg_max);

// ltrb distances (..., 4) in pixels -> l and r over image_w, t and b over image_h, as scalar
// divisions (no tensor made on the host): the static paths' L1 normalisation.
at::Tensor ltrb_over_image_size(const at::Tensor& ltrb, double image_h, double image_w);

// (..., D) -> where the mask (...) is false, the row `fill` (D values) made on the device by fill
// kernels (no host-to-device copy); where true, `boxes` (gradient flows only there).
at::Tensor keep_where(const at::Tensor& mask, const at::Tensor& boxes,
                      const std::vector<double>& fill);

}  // namespace trainer::loss
