// The training objective of a segmentation model: the segmentation head loss of the one-to-many
// branch (YOLO11, the reference's v8SegmentationLoss), or for end-to-end models (YOLO26,
// SegmentLoss26 under E2ELoss) the ProgLoss-weighted sum of both branches' losses, the one-to-one
// branch seeing detached prototypes and semantic logits (so it trains only its own towers).
//
// Why a YoloLoss: the trainer holds one loss object, calls it with the head outputs and the
// batch targets, and updates the ProgLoss weights at each epoch's end, whatever the task.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "loss/segment_head_loss.h"
#include "loss/yolo_loss.h"

namespace trainer::loss {

class SegmentLoss : public YoloLoss {
 public:
  // end2end: YOLO26 (the mask-aware assigner on both branches, o2m topk 10, o2o topk 7 / 1).
  SegmentLoss(int num_classes, int reg_max, std::vector<double> strides, LossGains gains,
              bool end2end);
  using YoloLoss::operator();

  // Items: (5,) [box, seg, cls, dfl | l1, sem] (the o2o items when end2end). targets.masks is
  // required (data/batch.h), in the layout targets.overlap_masks says.
  LossResult operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                        int64_t batch_size) override;
  // prepare also moves the masks and label rows to the device (GtTargets::masks, label_rows); with
  // static shapes per-object masks are padded to (B, M, h, w) there, and the mask terms run on a
  // fixed number of slots per image (positive_slots.h).
  GtTargets prepare(const LossTargets& targets, int64_t batch_size, double image_h, double image_w,
                    at::Device device) const override;
  LossResult compute(const model::DetectOutput& outputs, const GtTargets& gt,
                     int64_t batch_size) override;
  std::vector<std::string> item_names() const;

 private:
  // Checks the outputs (boxes, coefficients and prototypes of each branch) -> the input's (h, w).
  std::pair<double, double> check_segment_outputs(const model::DetectOutput& outputs,
                                                  int64_t batch_size) const;

  SegmentHeadLoss seg_o2m_;
  SegmentHeadLoss seg_o2o_;
};

}  // namespace trainer::loss
