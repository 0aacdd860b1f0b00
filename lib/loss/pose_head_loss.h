// The loss of one pose head: detection's box / class / DFL-or-L1 terms on an assignment, plus the
// keypoint location loss, keypoint objectness and, for YOLO26, the RLE loss.
//
// Why: the reference has two variants that differ in the keypoint decode, the assigner and the
// RLE term (v8PoseLoss for YOLO11, PoseLoss26 for YOLO26); end-to-end models run one head loss per
// branch with different top-k, so one head's loss is its own unit.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "loss/head_loss.h"
#include "loss/keypoint_flow.h"
#include "loss/pose_assigner.h"

namespace trainer::loss {

struct PoseGains {
  double pose = 12.0;
  double kobj = 1.0;
  double rle = 1.0;
};

struct PoseHeadConfig {
  int64_t num_keypoints = 17;
  int64_t keypoint_dim = 3;         // 2 [x, y] or 3 [x, y, visibility logit]
  std::vector<double> sigmas;       // OKS sigmas (K), see keypoint_sigmas.h
  std::vector<double> rle_weights;  // (K), YOLO26 only
  PoseGains gains;
  std::optional<KeypointFlow> flow;  // set: YOLO26 (PoseLoss26); unset: YOLO11 (v8PoseLoss)
};

// Keypoint predictions of one head in the loss layout (fp32).
struct KeypointPredictions {
  at::Tensor kpts;        // (B, A, K, ndim) decoded to grid units (x, y), visibility logits raw
  at::Tensor sigma;       // (B, A, K, 2) raw sigma channels; undefined without them (validation)
  double sigma_tiny = 0;  // smallest normal value of the raw sigma's dtype
};

// Item names: [box_loss, pose_loss, kobj_loss, cls_loss, dfl_loss | l1_loss (reg_max 1)] and
// rle_loss for YOLO26.
std::vector<std::string> pose_loss_item_names(int64_t reg_max, bool yolo26);

class PoseHeadLoss {
 public:
  // head: the detection head loss of this branch (its top-k are this branch's).
  PoseHeadLoss(HeadLoss head, PoseHeadConfig config);

  // Flattens the per-level keypoint outputs (B, K * ndim, H, W) and, when given, the sigma outputs
  // (B, 2 K, H, W), and decodes x, y around the anchors of `pred` (YOLO11: 2 raw + anchor - 0.5,
  // YOLO26: raw + anchor).
  KeypointPredictions parse(const std::vector<at::Tensor>& kpts,
                            const std::vector<at::Tensor>& sigma,
                            const HeadPredictions& pred) const;

  // (5,) [box, pose, kobj, cls, dfl] or, for YOLO26, (6,) [..., rle]; gain-scaled, with gradient.
  // gt_kpts (B, M, K, 3) in pixels (pack_keypoints).
  at::Tensor operator()(const HeadPredictions& pred, const KeypointPredictions& kp,
                        const GtTargets& gt, const at::Tensor& gt_kpts) const;

  bool yolo26() const { return config_.flow.has_value(); }
  const HeadLoss& head() const { return head_; }
  const PoseHeadConfig& config() const { return config_; }

 private:
  // Static shapes: the sigmas and RLE weights as device tensors, made once per device (a tensor
  // made from host values in the step is a copy a CUDA graph would not replay).
  struct DeviceValues {
    at::Tensor tensor;
  };
  const at::Tensor& device_values(DeviceValues& cache, const std::vector<double>& values,
                                  const at::TensorOptions& options) const;
  // [pose, kobj, rle] of a static-shapes assignment, on the positives gathered into slots
  // (positive_slots.h); kobj and rle undefined where the head has none.
  std::array<at::Tensor, 3> static_keypoint_terms(const HeadPredictions& pred,
                                                  const KeypointPredictions& kp,
                                                  const Assignment& assignment,
                                                  const at::Tensor& gt_kpts) const;

  HeadLoss head_;
  PoseHeadConfig config_;
  mutable DeviceValues sigmas_cache_;
  mutable DeviceValues rle_weights_cache_;
  std::optional<PoseTaskAlignedAssigner> pose_assigner_;  // YOLO26
};

}  // namespace trainer::loss
