// The mask prototypes of the segmentation heads (reference-tasks.md 4.1): 32 prototype masks at a
// quarter of the input size, which each detection's 32 coefficients mix into its instance mask.
// YOLO11's Proto reads P3 only: Conv 3x3 -> ConvTranspose 2x2 stride 2 -> Conv 3x3 -> Conv 1x1.
// YOLO26's Proto26 first fuses P4 and P5 into P3 (1x1 refine, nearest upsample x2 / x4, sum),
// then Conv 3x3 and the same chain; in training it also returns semantic logits from a branch on
// the fused P3 features (the semantic-segmentation auxiliary loss).
//
// Why one class for both: Proto26's chain is Proto's with Proto's own module names (cv1,
// upsample, cv2, cv3), registered first as in the reference, so the state-dict keys and their
// order are the reference's in both cases.
#pragma once

#include <torch/nn/modules/conv.h>

#include <vector>

#include "model/conv.h"

namespace trainer::model {

struct ProtoOutput {
  torch::Tensor protos;    // (B, nm, H/4, W/4), SiLU outputs
  torch::Tensor semantic;  // Proto26 in training mode: (B, nc, H/8, W/8) logits; else undefined
};

class MaskProtoImpl : public torch::nn::Module {
 public:
  // YOLO11's Proto on P3 with c1 channels: npr hidden channels, nm prototypes.
  MaskProtoImpl(int64_t c1, int64_t npr, int64_t nm);
  // YOLO26's Proto26 on the levels with channels `ch` (P3 first) and nc semantic classes.
  MaskProtoImpl(const std::vector<int64_t>& ch, int64_t npr, int64_t nm, int64_t nc);

  // x: the head's inputs (P3, P4, P5).
  ProtoOutput forward(const std::vector<torch::Tensor>& x);

  bool multi_scale() const { return multi_scale_; }
  int64_t num_masks() const { return nm_; }

 private:
  void make_chain(int64_t c1, int64_t npr, int64_t nm);

  bool multi_scale_;
  int64_t nm_;
  Conv cv1_{nullptr}, cv2_{nullptr}, cv3_{nullptr};
  torch::nn::ConvTranspose2d upsample_{nullptr};
  std::vector<Conv> feat_refine_;  // Proto26: P4, P5 -> ch0
  Conv feat_fuse_{nullptr};        // Proto26: ch0 -> npr
  Chain semseg_{nullptr};          // Proto26: Conv 3x3, Conv 3x3, 1x1 conv to nc (with bias)
};
TORCH_MODULE(MaskProto);

}  // namespace trainer::model
