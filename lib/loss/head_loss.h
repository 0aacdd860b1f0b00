// The loss of one detection head (the reference's v8DetectionLoss): assign, then BCE class loss,
// CIoU box loss and the DFL / L1 term, each normalised by the batch's target score sum.
//
// Why: the end-to-end loss runs this twice (one-to-many and one-to-one heads, different top-k),
// so one head's loss is its own unit.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "loss/gt_targets.h"
#include "loss/task_aligned_assigner.h"

namespace trainer::loss {

struct LossGains {
  double box = 7.5;
  double cls = 0.5;
  double dfl = 1.5;  // also the gain of the reg_max == 1 L1 term
};

// Per-head tensors in the layout the loss works in (fp32), for tests and diagnostics.
struct HeadPredictions {
  at::Tensor pred_dist;             // (B, A, 4 * reg_max) raw box channels
  at::Tensor pred_scores;           // (B, A, nc) class logits
  at::Tensor pred_bboxes;           // (B, A, 4) decoded xyxy, grid units
  at::Tensor anchor_points;         // (A, 2) grid units
  at::Tensor stride;                // (A, 1)
  double image_h = 0, image_w = 0;  // input size in pixels: level-0 size x strides[0]
};

class HeadLoss {
 public:
  HeadLoss(int64_t num_classes, int64_t reg_max, std::vector<double> strides, LossGains gains,
           int64_t topk, int64_t topk2 = -1);

  // Flattens the per-level outputs (B, 4 * reg_max + nc, H, W) to fp32 (B, A, .) and decodes boxes.
  HeadPredictions parse(const std::vector<at::Tensor>& levels) const;

  // (3,) gain-scaled [box, cls, dfl], with gradient, for one head. `gt` in pixels of the input
  // size that `parse` derives from the levels.
  at::Tensor operator()(const HeadPredictions& pred, const GtTargets& gt) const;

  // The two halves of the above, for tasks that add terms on the same assignment (pose): the CIoU
  // assignment of `pred`, and the (3,) [box, cls, dfl] of a given assignment.
  Assignment assign(const HeadPredictions& pred, const GtTargets& gt) const;
  at::Tensor box_cls_dfl(const HeadPredictions& pred, const Assignment& assignment) const;

  int64_t num_classes() const { return num_classes_; }
  int64_t reg_max() const { return reg_max_; }
  const std::vector<double>& strides() const { return strides_; }
  const TaskAlignedAssigner& assigner() const { return assigner_; }

 private:
  int64_t num_classes_;
  int64_t reg_max_;
  std::vector<double> strides_;
  LossGains gains_;
  TaskAlignedAssigner assigner_;
};

}  // namespace trainer::loss
