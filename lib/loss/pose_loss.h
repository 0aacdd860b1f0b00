// The training objective of a pose model: the pose head loss of the one-to-many branch (YOLO11),
// or for end-to-end models (YOLO26) the ProgLoss-weighted sum of both branches' pose losses, as
// the reference's PoseModel.init_criterion builds it (E2ELoss over PoseLoss26 / v8PoseLoss).
//
// Why a YoloLoss: the trainer holds one loss object, calls it with the head outputs and the
// batch targets, and updates the ProgLoss weights at each epoch's end, whatever the task.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loss/keypoint_flow.h"
#include "loss/pose_head_loss.h"
#include "loss/yolo_loss.h"

namespace trainer::loss {

class PoseLoss : public YoloLoss {
 public:
  // sigmas: the dataset's kpt_oks_sigmas, empty for the default (keypoint_sigmas.h). flow: the
  // YOLO26 head's RealNVP (keypoint_flow()), which selects PoseLoss26 (OKS assigner, raw + anchor
  // decode, RLE term); nullopt selects v8PoseLoss (YOLO11). end2end as YoloLoss.
  PoseLoss(int num_classes, int reg_max, std::vector<double> strides, LossGains gains,
           PoseGains pose_gains, bool end2end, int64_t num_keypoints, int64_t keypoint_dim,
           std::vector<double> sigmas = {}, std::optional<KeypointFlow> flow = std::nullopt);

  using YoloLoss::operator();
  // Items: (5,) [box, pose, kobj, cls, dfl] (YOLO11) or (6,) [box, pose, kobj, cls, l1, rle]
  // (YOLO26; the o2o items when end2end). targets.keypoints is required. Outputs without sigma
  // channels (validation) give rle 0.
  LossResult operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                        int64_t batch_size) override;
  // prepare also packs the keypoints (GtTargets::keypoints); with static shapes the keypoint
  // terms are computed on a fixed number of slots per image (positive_slots.h).
  GtTargets prepare(const LossTargets& targets, int64_t batch_size, double image_h, double image_w,
                    at::Device device) const override;
  LossResult compute(const model::DetectOutput& outputs, const GtTargets& gt,
                     int64_t batch_size) override;

  std::vector<std::string> item_names() const;

 private:
  // Checks the outputs (boxes and keypoints of each branch) and returns the input's (h, w).
  std::pair<double, double> check_pose_outputs(const model::DetectOutput& outputs,
                                               int64_t batch_size) const;

  PoseHeadLoss pose_o2m_;
  PoseHeadLoss pose_o2o_;
};

}  // namespace trainer::loss
