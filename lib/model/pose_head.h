// The pose heads: Detect plus a keypoint tower per level (reference-tasks.md 2.1, 2.5).
// YOLO11's Pose: cv4[i] = Conv 3x3 -> Conv 3x3 -> 1x1 conv to K * ndim. YOLO26's Pose26: the
// cv4[i] trunk (two Convs) feeds cv4_kpts[i] (K * ndim) and, in training mode only, cv4_sigma[i]
// (2K), plus the RealNVP flow of the RLE loss and one2one_* deep copies of the towers.
//
// Why a subclass of Detect: the box and class towers, the strides, the bias init and the box
// decode are Detect's unchanged (a detection model never builds this class), and the modules
// registered after Detect's give the reference's state-dict key order.
#pragma once

#include <torch/nn/modules/conv.h>

#include <vector>

#include "model/detect_head.h"
#include "model/keypoint_shape.h"
#include "model/real_nvp.h"

namespace trainer::model {

enum class PoseHeadKind {
  kPose,    // YOLO11 (v8): x = (2 raw + anchor - 0.5) * stride
  kPose26,  // YOLO26: x = (raw + anchor) * stride, sigma outputs, RealNVP flow
};

// Raw keypoints (B, K * ndim, A) -> input pixels with the head's rule, v = sigmoid(raw v) when
// ndim is 3. anchor_points (A, 2) are cell centres in grid units, anchor_strides (A, 1).
torch::Tensor decode_keypoints(const torch::Tensor& raw, const torch::Tensor& anchor_points,
                               const torch::Tensor& anchor_strides, const KeypointShape& shape,
                               PoseHeadKind kind);

class PoseImpl : public DetectImpl {
 public:
  PoseImpl(int64_t nc, int64_t reg_max, bool end2end, const std::vector<int64_t>& ch,
           const KeypointShape& kpt_shape, PoseHeadKind kind, const ClassWidths& cls_width = {});

  // Detect's outputs plus the raw keypoints of each branch (and the sigmas in training mode).
  DetectOutput forward(const std::vector<torch::Tensor>& x) override;

  // (B, 4 + nc + K * ndim, A): Detect's decode, then the keypoints in input pixels.
  torch::Tensor decode_output(const DetectOutput& raw, bool one2one,
                              bool xywh = false) const override;
  int64_t extra_channels() const override { return kpt_shape_.channels(); }

  const KeypointShape& keypoint_shape() const { return kpt_shape_; }
  PoseHeadKind kind() const { return kind_; }
  int64_t keypoint_hidden() const { return c4_; }  // c4
  RealNvp flow() const { return flow_; }           // Pose26 only; empty holder otherwise

 private:
  struct Towers {
    std::vector<Chain> trunk;                    // Pose: the whole cv4 tower; Pose26: the two Convs
    std::vector<torch::nn::Conv2d> kpts, sigma;  // Pose26 only
  };
  Towers make_towers(const std::string& prefix, const std::vector<int64_t>& ch);
  void register_outputs(Towers& towers, const std::string& prefix, size_t levels);
  void run_towers(Towers& towers, const std::vector<torch::Tensor>& x,
                  std::vector<torch::Tensor>& kpts, std::vector<torch::Tensor>& sigma);

  KeypointShape kpt_shape_;
  PoseHeadKind kind_;
  int64_t c4_;
  Towers one2many_pose_, one2one_pose_;
  RealNvp flow_{nullptr};
};
TORCH_MODULE(Pose);

}  // namespace trainer::model
