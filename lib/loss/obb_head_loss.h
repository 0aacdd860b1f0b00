// The loss of one oriented-box head (the reference's v8OBBLoss, reference-tasks.md 3.4): the
// rotated task-aligned assignment (anchor inside the rotated box, ProbIoU overlaps), BCE classes,
// the ProbIoU box loss (floor 0.01), the DFL (YOLO11) or image-normalised L1 (YOLO26) on rotated
// ltrb distances, and the angle loss, each normalised by the target score sum.
//
// Why its own unit: the end-to-end loss runs it on both branches with different top-k, and each
// term has numbers worth checking by hand.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "loss/gt_targets.h"
#include "loss/head_loss.h"
#include "loss/task_aligned_assigner.h"

namespace trainer::loss {

// (B, M, A) bool: the anchor (A, 2) lies inside the rotated GT (B, M, 5) [cx, cy, w, h, angle],
// borders included, after STAL raises valid sides under `stal_side` to it. With corners a, b, d
// of xywhr2xyxyxyxy: 0 <= AP.AB <= |AB|^2 and 0 <= AP.AD <= |AD|^2.
at::Tensor select_candidates_in_rotated_gts(const at::Tensor& anchor_points,
                                            const at::Tensor& gt_bboxes, const at::Tensor& mask_gt,
                                            double stal_side);

// The assigner hooks that make the task-aligned assigner the reference's
// RotatedTaskAlignedAssigner: the candidates above and ProbIoU (floor 0) clamped >= 0.
AssignerHooks rotated_assigner_hooks(const AssignerOptions& options);

// The angle loss on foreground anchors: sum of sin^2(2 dw) exp(-ln(w / h)^2 / lambda^2) weight /
// target_scores_sum, dw = pred - gt wrapped by round(d / pi) pi; lambda = 3. pred_angle and
// gt (N) angles, gt_w, gt_h (N), weight (N).
at::Tensor angle_loss(const at::Tensor& pred_angle, const at::Tensor& gt_angle,
                      const at::Tensor& gt_w, const at::Tensor& gt_h, const at::Tensor& weight,
                      const at::Tensor& target_scores_sum, double lambda = 3.0);

// One head's predictions in the loss's layout: Detect's (HeadPredictions) plus the angle (B, A, 1)
// and the decoded rotated boxes (B, A, 5) [cx, cy, w, h, angle] in grid units.
struct ObbPredictions {
  HeadPredictions head;
  at::Tensor pred_angle;
  at::Tensor pred_rboxes;
};

class ObbHeadLoss {
 public:
  ObbHeadLoss(int64_t num_classes, int64_t reg_max, std::vector<double> strides, LossGains gains,
              double angle_gain, int64_t topk, int64_t topk2 = -1);

  ObbPredictions parse(const std::vector<at::Tensor>& levels,
                       const std::vector<at::Tensor>& angle_levels) const;
  // The rotated assignment of `pred` against `gt` (pack_rotated_targets, pixels).
  Assignment assign(const ObbPredictions& pred, const GtTargets& gt) const;
  // (4,) gain-scaled [box, cls, dfl | l1, angle], with gradient.
  at::Tensor operator()(const ObbPredictions& pred, const GtTargets& gt) const;

  const HeadLoss& head() const { return head_; }

 private:
  // The box, DFL / L1 and angle terms on every anchor with weights (static shapes); `target` the
  // assigned boxes in grid units, `cls` the class term already computed.
  at::Tensor masked_terms(const ObbPredictions& p, const Assignment& a, const at::Tensor& target,
                          const at::Tensor& cls, const at::Tensor& target_scores_sum) const;

  HeadLoss head_;
  LossGains gains_;
  double angle_gain_;
};

// "box_loss", "cls_loss", "dfl_loss" (reg_max > 1) or "l1_loss", "angle_loss".
std::vector<std::string> obb_loss_item_names(int64_t reg_max);

}  // namespace trainer::loss
