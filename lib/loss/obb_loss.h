// The training objective of an OBB model: the OBB head loss of the one-to-many branch (YOLO11), or
// for end-to-end models (YOLO26) the ProgLoss-weighted sum of both branches' OBB losses, as the
// reference's OBBModel.init_criterion builds it (E2ELoss over v8OBBLoss; the angle term is active
// for both families).
//
// Why a YoloLoss: the trainer holds one loss object, calls it with the head outputs and the
// batch targets, and updates the ProgLoss weights at each epoch's end, whatever the task.
#pragma once

#include <string>
#include <vector>

#include "loss/obb_head_loss.h"
#include "loss/yolo_loss.h"

namespace trainer::loss {

class ObbLoss : public YoloLoss {
 public:
  ObbLoss(int num_classes, int reg_max, std::vector<double> strides, LossGains gains,
          double angle_gain, bool end2end);
  using YoloLoss::operator();

  // Items: (4,) [box, cls, dfl | l1, angle] (the o2o items when end2end). targets.rboxes is
  // required (the batch's rotated boxes, rows of targets.labels).
  LossResult operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                        int64_t batch_size) override;
  // targets.rboxes packed (B, M, 5) xywhr pixels; the boxes under 2 px dropped (host work).
  GtTargets prepare(const LossTargets& targets, int64_t batch_size, double image_h, double image_w,
                    at::Device device) const override;
  LossResult compute(const model::DetectOutput& outputs, const GtTargets& gt,
                     int64_t batch_size) override;
  std::vector<std::string> item_names() const;

 private:
  ObbHeadLoss obb_o2m_;
  ObbHeadLoss obb_o2o_;
};

}  // namespace trainer::loss
