// The training objective of a YOLO model, and the base the pose, segmentation and OBB losses
// extend: the one-to-many head's loss (YOLO11), or for end-to-end models (YOLO26) the weighted
// sum of the one-to-many and one-to-one heads' losses with the reference's per-epoch "ProgLoss"
// weights.
//
// Why: the trainer needs one call that turns the head's raw outputs and the batch labels into the
// value to backpropagate and the items to log, whatever the model family.
#pragma once

#include <torch/types.h>

#include <utility>
#include <vector>

#include "loss/head_loss.h"
#include "loss/loss_targets.h"
#include "model/detect_output.h"

namespace trainer::loss {

struct LossResult {
  torch::Tensor
      total;  // 0-d, with grad: sum over items x batch size (what backward() is called on)
  torch::Tensor items;  // detached, gain-scaled items, (3,) [box, cls, dfl] for detection (the
                        // o2o items for end-to-end); a task's loss defines its own list
};

// ProgLoss: the one-to-many weight after `updates` end-of-epoch updates of a run of
// `total_epochs`: max(1 - updates / max(E - 1, 1), 0) (0.8 - 0.1) + 0.1; the one-to-one weight is
// max(1 - that, 0). 0.8 / 0.2 at the start, 0.1 / 0.9 in the last epoch.
double prog_loss_o2m_weight(int64_t updates, int total_epochs);

class YoloLoss {
 public:
  // end2end: YOLO26 (o2m topk 10 + o2o topk 7 / topk2 1); otherwise only the o2m head (topk 10).
  YoloLoss(int num_classes, int reg_max, std::vector<double> strides, LossGains gains,
           bool end2end);
  virtual ~YoloLoss() = default;

  // The loss of a batch. Tasks with more labels than boxes (pose) override this one.
  virtual LossResult operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                                int64_t batch_size);

  // labels: (n, 6) float [image_index, class, cx, cy, w, h] normalised to [0,1] (as
  // lib/data/batch.h). Works on fp32 or bf16 outputs (computed in fp32, autocast off inside).
  LossResult operator()(const model::DetectOutput& outputs, const torch::Tensor& labels,
                        int64_t batch_size) {
    return (*this)(outputs, LossTargets{labels, {}, {}, {}, true}, batch_size);
  }

  // ProgLoss update at the end of each epoch (no-op unless end2end).
  void end_epoch(int total_epochs);
  int64_t epoch_updates() const { return updates_; }
  // Resume: sets the update count and the weights it implies for a run of `total_epochs` (the
  // reference sets updates = start_epoch - 1 and then updates once, i.e. updates = start_epoch).
  void set_epoch_updates(int64_t updates, int total_epochs);
  double o2m_weight() const { return o2m_weight_; }
  double o2o_weight() const { return o2o_weight_; }
  bool end2end() const { return end2end_; }

  // Whether the task's loss has the static-shapes path (LossTargets::static_instances) and the
  // two halves below.
  virtual bool supports_static_shapes() const { return true; }

  // operator() in two halves, for the static training step. prepare: host work (the label
  // checks, packing to (B, M, .) with M = targets.static_instances, the copies to `device`), for
  // an input of image_h x image_w pixels. compute: device work only; with gt.static_shapes no
  // tensor's shape depends on the objects and nothing is read back to the host.
  virtual GtTargets prepare(const LossTargets& targets, int64_t batch_size, double image_h,
                            double image_w, at::Device device) const;
  virtual LossResult compute(const model::DetectOutput& outputs, const GtTargets& gt,
                             int64_t batch_size);

 protected:
  // Throws std::invalid_argument (naming `task`) unless the outputs hold `batch_size` images and
  // the heads the family needs (`needs_angle`: OBB's angle outputs too). Returns the input's
  // height and width in pixels (level 0's grid x the first stride).
  std::pair<double, double> check_outputs(const model::DetectOutput& outputs, int64_t batch_size,
                                          const char* task, bool needs_angle = false) const;

  // The value to backpropagate from the heads' (k,) items: o2m sum x batch size, or for end2end
  // the ProgLoss-weighted sum of both. With static shapes the weights enter as device scalars
  // (kept equal to o2m_weight() / o2o_weight()), so a captured step reads their current values
  // instead of baking in the epoch's.
  at::Tensor weighted_total(const at::Tensor& loss_o2m, const at::Tensor& loss_o2o,
                            int64_t batch_size, bool static_shapes) const;

 private:
  HeadLoss one2many_;
  HeadLoss one2one_;
  bool end2end_;
  int64_t updates_ = 0;
  double o2m_weight_;
  double o2o_weight_;
  // (2,) [o2m, o2o] on the loss's device, made at the first static-shapes call and refilled
  // (a fill, not a new tensor) whenever the weights change.
  mutable at::Tensor weight_tensor_;
};

}  // namespace trainer::loss
