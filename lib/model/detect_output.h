// The value the detection head hands to the loss in training mode. Kept in its own header so the
// loss (lib/loss) depends on this contract only, not on the model's building blocks.
#pragma once

#include <torch/types.h>

#include <array>
#include <vector>

namespace trainer::model {

// Raw training outputs of a Detect head, one tensor per pyramid level (P3, P4, P5), each
// (B, 4 * reg_max + nc, H_l, W_l): the box channels first, then the class logits.
struct DetectOutput {
  std::vector<torch::Tensor> one2many;  // the one-to-many head (always present)
  std::vector<torch::Tensor>
      one2one;  // the end-to-end copy on detached features (YOLO26); empty otherwise

  // Pose heads only (empty for the other tasks), per level and branch like the above:
  // raw keypoints (B, K * ndim, H_l, W_l), channels [x, y(, v)] per keypoint, not decoded; and
  // YOLO26's raw sigmas (B, 2 K, H_l, W_l), [sigma_x, sigma_y] per keypoint, in training mode only.
  std::vector<torch::Tensor> one2many_kpts, one2one_kpts;
  std::vector<torch::Tensor> one2many_sigma, one2one_sigma;

  // OBB heads only: the angle of each anchor (B, 1, H_l, W_l) in radians, per level and branch.
  // YOLO11's OBB has already mapped its logit to (sigmoid - 0.25) * pi; YOLO26's OBB26 gives the
  // raw output (reference-tasks.md 3.1).
  std::vector<torch::Tensor> one2many_angle, one2one_angle;

  // Segmentation heads only: the 32 mask coefficients of each anchor (B, nm, H_l, W_l), raw, per
  // level and branch; the prototypes (B, nm, H/4, W/4) as a one-element list (one tensor for the
  // whole image, shared by both branches: the loss detaches it for the one-to-one branch, as the
  // reference does); and, from YOLO26's Proto26 in training mode only, the semantic logits
  // (B, nc, H/8, W/8), again a one-element list.
  std::vector<torch::Tensor> one2many_coef, one2one_coef;
  std::vector<torch::Tensor> protos, semantic;

  // Every per-level field above, for code that treats them alike (the validator concatenates the
  // outputs of a batch run in chunks): a field added above must be added here.
  using Field = std::vector<torch::Tensor> DetectOutput::*;
  static std::array<Field, 12> fields() {
    return {
        &DetectOutput::one2many,       &DetectOutput::one2one,        &DetectOutput::one2many_kpts,
        &DetectOutput::one2one_kpts,   &DetectOutput::one2many_sigma, &DetectOutput::one2one_sigma,
        &DetectOutput::one2many_angle, &DetectOutput::one2one_angle,  &DetectOutput::one2many_coef,
        &DetectOutput::one2one_coef,   &DetectOutput::protos,         &DetectOutput::semantic};
  }
};

}  // namespace trainer::model
