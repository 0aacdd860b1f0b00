// YOLO26-pose's task-aligned assigner: the detection assigner with keypoint OKS as the overlap and
// a gate that keeps each GT on the pyramid levels that fit its size.
//
// Why: with OKS ranking the anchors, positives, conflicts and soft class targets favour anchors
// with accurate keypoints; OKS has no scale prior, so the level gate replaces the one IoU gave.
// Built on TaskAlignedAssigner's hooks, so detection's assignment is untouched.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "loss/task_aligned_assigner.h"

namespace trainer::loss {

// OKS of P (prediction, GT) pairs: pd (P, K, 2) and gt (P, K, 3) keypoints in pixels, area (P, 1)
// the GT box area in pixels x 0.53, sigmas (K):
// sum_k exp(-d_k^2 / ((2 sigma_k)^2 (area + eps) 2)) vis_k / max(sum_k vis_k, 1), vis = v > 0.
at::Tensor keypoint_oks(const at::Tensor& pd_kpts, const at::Tensor& gt_kpts,
                        const at::Tensor& area, const at::Tensor& sigmas, double eps = 1e-9);

// The pyramid-level gate: candidates (B, M, A) bool, GT boxes (B, M, 4) xyxy pixels, the stride of
// each anchor (A). With side = sqrt(GT area), an anchor of stride s stays a candidate if
// (side >= lo s or s is the smallest stride) and (side <= hi s or s is the largest stride); a GT
// that would be left with no candidate keeps all its candidates.
at::Tensor gate_candidates_by_level(const at::Tensor& candidates, const at::Tensor& gt_bboxes,
                                    const at::Tensor& anchor_strides, double lo = 2.0,
                                    double hi = 12.0);

class PoseTaskAlignedAssigner {
 public:
  // sigmas: the OKS sigmas (K), as keypoint_sigmas.h picks them.
  PoseTaskAlignedAssigner(AssignerOptions options, std::vector<double> sigmas);

  // As TaskAlignedAssigner, plus pd_kpts (B, A, K, 2) predicted keypoints in pixels, gt_kpts
  // (B, M, K, 3) GT keypoints in pixels, anchor_strides (A). A GT without a visible keypoint is
  // ranked by the box CIoU (clamped >= 0) instead of OKS. static_shapes: the OKS of every
  // (image, GT, anchor), in chunks of GT rows, kept on the candidates (TaskAlignedAssigner's
  // static path).
  Assignment operator()(const at::Tensor& pd_scores, const at::Tensor& pd_bboxes,
                        const at::Tensor& anchor_points, const at::Tensor& gt_labels,
                        const at::Tensor& gt_bboxes, const at::Tensor& mask_gt,
                        const at::Tensor& pd_kpts, const at::Tensor& gt_kpts,
                        const at::Tensor& anchor_strides, bool static_shapes = false) const;

  const AssignerOptions& options() const { return base_.options(); }
  const std::vector<double>& sigmas() const { return sigmas_; }

  static constexpr double kLevelLo = 2.0;
  static constexpr double kLevelHi = 12.0;
  static constexpr double kAreaFactor = 0.53;  // as the validator's OKS

 private:
  TaskAlignedAssigner base_;
  std::vector<double> sigmas_;
  mutable at::Tensor sigmas_on_device_;  // static shapes: made once per device, not per step
};

}  // namespace trainer::loss
