// The segmentation heads (reference-tasks.md 4.1): Detect plus a mask-coefficient tower per level
// and the prototype module. cv4[i] = Conv 3x3 (ch_i -> c4) -> Conv 3x3 (c4 -> c4) -> 1x1 conv to
// nm = 32 raw coefficients, c4 = max(ch0 / 4, nm); a deep copy one2one_cv4 on detached features
// when the head is end-to-end. YOLO11's Segment uses Proto on P3; YOLO26's Segment26 uses
// Proto26 on all levels (with its training-only semantic branch).
//
// Why a subclass of Detect: boxes, classes, strides and bias init are Detect's unchanged; the
// modules registered after Detect's (proto, cv4, one2one_cv4) give the reference's state-dict
// order.
#pragma once

#include <vector>

#include "model/detect_head.h"
#include "model/proto.h"

namespace trainer::model {

enum class SegmentHeadKind {
  kSegment,    // YOLO11: Proto on P3
  kSegment26,  // YOLO26: Proto26 on P3, P4, P5 with the semantic branch
};

class SegmentImpl : public DetectImpl {
 public:
  SegmentImpl(int64_t nc, int64_t nm, int64_t npr, int64_t reg_max, bool end2end,
              const std::vector<int64_t>& ch, SegmentHeadKind kind,
              const ClassWidths& cls_width = {});

  // Detect's outputs plus the coefficients of each branch, the prototypes and (Segment26 in
  // training mode) the semantic logits.
  DetectOutput forward(const std::vector<torch::Tensor>& x) override;

  // (B, 4 + nc + nm, A) float32: Detect's decode, then the raw mask coefficients.
  torch::Tensor decode_output(const DetectOutput& raw, bool one2one,
                              bool xywh = false) const override;
  int64_t extra_channels() const override { return nm_; }

  SegmentHeadKind kind() const { return kind_; }
  int64_t num_masks() const { return nm_; }      // nm
  int64_t proto_hidden() const { return npr_; }  // npr
  int64_t mask_hidden() const { return c4_; }    // c4
  MaskProto proto() const { return proto_; }

 private:
  std::vector<Chain> make_tower(const std::string& name, const std::vector<int64_t>& ch);
  static std::vector<torch::Tensor> run_tower(std::vector<Chain>& tower,
                                              const std::vector<torch::Tensor>& x);

  SegmentHeadKind kind_;
  int64_t nm_, npr_, c4_;
  MaskProto proto_{nullptr};
  std::vector<Chain> one2many_coef_, one2one_coef_;
};
TORCH_MODULE(Segment);

}  // namespace trainer::model
