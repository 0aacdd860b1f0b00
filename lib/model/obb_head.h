// The oriented-box heads: Detect plus an angle tower per level (reference-tasks.md 3.1).
// cv4[i] = Conv 3x3 (ch_i -> c4) -> Conv 3x3 (c4 -> c4) -> 1x1 conv to one angle, c4 = max(ch0 / 4,
// 1), and a deep copy one2one_cv4 fed detached features when the head is end-to-end (YOLO26).
// YOLO11's OBB maps the logit to (sigmoid - 0.25) * pi in [-pi/4, 3pi/4); YOLO26's OBB26 keeps it
// raw. Boxes decode with dist2rbox: the ltrb distances are measured in the box's rotated frame.
//
// Why a subclass of Detect: the box and class towers, strides, bias init and the DFL are Detect's
// unchanged, and the towers registered after Detect's give the reference's state-dict order
// (cv2, cv3, dfl, one2one_cv2, one2one_cv3, cv4, one2one_cv4).
#pragma once

#include <vector>

#include "model/detect_head.h"

namespace trainer::model {

enum class ObbHeadKind {
  kObb,    // YOLO11: angle = (sigmoid(logit) - 0.25) * pi
  kObb26,  // YOLO26: angle = logit
};

// The angle the head outputs for `logits` (any shape).
torch::Tensor decode_angle(const torch::Tensor& logits, ObbHeadKind kind);

// Rotated boxes of one branch: distances (B, 4, A) in grid units, angles (B, 1, A), anchor points
// (A, 2) and strides (A, 1) -> (B, 4, A) [cx, cy, w, h] in input pixels (dist2rbox, then x stride).
torch::Tensor decode_rotated_boxes(const torch::Tensor& distances, const torch::Tensor& angles,
                                   const torch::Tensor& anchor_points,
                                   const torch::Tensor& anchor_strides);

class ObbImpl : public DetectImpl {
 public:
  ObbImpl(int64_t nc, int64_t reg_max, bool end2end, const std::vector<int64_t>& ch,
          ObbHeadKind kind, const ClassWidths& cls_width = {});

  // Detect's outputs plus the angle of each branch (one2many_angle, one2one_angle).
  DetectOutput forward(const std::vector<torch::Tensor>& x) override;

  // (B, 4 + nc + 1, A) float32: [cx, cy, w, h] in input pixels, the sigmoid class scores, the
  // angle in radians. Rotated boxes have no xyxy form, so `xywh` is ignored.
  torch::Tensor decode_output(const DetectOutput& raw, bool one2one,
                              bool xywh = false) const override;
  int64_t extra_channels() const override { return 1; }

  ObbHeadKind kind() const { return kind_; }
  int64_t angle_hidden() const { return c4_; }  // c4
  // The last 1x1 conv of the angle tower of `level`.
  torch::nn::Conv2d angle_output(size_t level, bool one2one = false) const;

 private:
  std::vector<Chain> make_tower(const std::string& name, const std::vector<int64_t>& ch);
  std::vector<torch::Tensor> run_tower(std::vector<Chain>& tower,
                                       const std::vector<torch::Tensor>& x);

  ObbHeadKind kind_;
  int64_t c4_;
  std::vector<Chain> one2many_angle_, one2one_angle_;
};
TORCH_MODULE(Obb);

}  // namespace trainer::model
