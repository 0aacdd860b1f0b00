// The Detect head: per-level box and class towers, DFL, the end-to-end one-to-one copy, bias
// init and decoding (reference-behaviour.md 4.2 "Detect", "Bias init").
//
// Why one class for both families: YOLO11 (reg_max 16, DFL, one-to-many only) and YOLO26
// (reg_max 1, raw ltrb, plus one2one_* copies fed detached features) differ only in these
// settings. Task heads (pose_head.h) derive from it, add towers beside cv2/cv3 and reuse the
// decode.
#pragma once

#include <torch/nn/modules/container/modulelist.h>

#include <vector>

#include "model/class_widths.h"
#include "model/conv.h"
#include "model/detect_output.h"

namespace trainer::model {

// DFL(reg_max): softmax over the bins of each side, then the expectation with a frozen 1x1 conv
// whose weights are 0..reg_max-1 (registered as dfl.conv.weight, requires_grad false).
class DflImpl : public torch::nn::Module {
 public:
  explicit DflImpl(int64_t reg_max);
  // (B, 4 reg_max, A) -> (B, 4, A)
  torch::Tensor forward(const torch::Tensor& x) const;

  torch::nn::Conv2d conv{nullptr};

 private:
  int64_t reg_max_;
};
TORCH_MODULE(Dfl);

class DetectImpl : public torch::nn::Module {
 public:
  // ch: input channels of the levels (P3, P4, P5); cls_width: the class branches' hidden widths
  // (0: the reference's default from ch and nc).
  DetectImpl(int64_t nc, int64_t reg_max, bool end2end, const std::vector<int64_t>& ch,
             const ClassWidths& cls_width = {});

  // Raw per-level outputs; the one2one branch (end2end only) runs on detached features. Task heads
  // (pose_head.h) add their fields to the same output.
  virtual DetectOutput forward(const std::vector<torch::Tensor>& x);

  // Sets the level strides, then the reference's bias init: box bias 2.0, class bias
  // log(5 / nc / (640 / s)^2), for both branches.
  void set_strides(const std::vector<double>& strides);
  void bias_init();

  // Per-level raw outputs -> (B, 4 + nc, A) float32: boxes in input pixels (xyxy, or xywh when
  // `xywh`), then sigmoid class scores.
  torch::Tensor decode(const std::vector<torch::Tensor>& levels, bool xywh = false) const;

  // The inference decode of one branch of `raw` (the one-to-one branch when `one2one`):
  // (B, 4 + nc + extra_channels(), A) float32, decode() of the box/class outputs followed by the
  // task's decoded per-anchor channels (none for Detect).
  virtual torch::Tensor decode_output(const DetectOutput& raw, bool one2one,
                                      bool xywh = false) const;
  // Channels decode_output() adds after the class scores (pose: K * ndim).
  virtual int64_t extra_channels() const { return 0; }

  // Which branches forward() runs. Training and the val loss need both (the default); an
  // inference copy (model/fuse.h) runs only the one its postprocess decodes, as the reference's
  // Detect.fuse() drops the other. kOne2One needs an end-to-end head.
  enum class Branches { kBoth, kOne2Many, kOne2One };
  void set_branches(Branches branches);
  bool runs_one2many() const { return branches_ != Branches::kOne2One; }
  bool runs_one2one() const { return end2end_ && branches_ != Branches::kOne2Many; }

  int64_t nc() const { return nc_; }
  int64_t reg_max() const { return reg_max_; }
  bool end2end() const { return end2end_; }
  int64_t box_hidden() const { return c2_; }  // c2 = max(16, ch0 / 4, 4 reg_max)
  // c3 of the class branches: by default max(ch0, min(nc, 100)) (see class_widths.h).
  int64_t class_hidden() const { return c3_; }
  int64_t class_hidden_one2one() const { return c3_one2one_; }  // = class_hidden() by default
  const std::vector<double>& strides() const { return strides_; }

  // Final 1x1 convs of each tower (the ones with a bias), per level: for tests and bias init.
  torch::nn::Conv2d box_output(size_t level, bool one2one = false) const;
  torch::nn::Conv2d class_output(size_t level, bool one2one = false) const;

 protected:
  // The per-level outputs flattened over anchors, float32: the ltrb distances in grid units (after
  // the DFL expectation when reg_max > 1), the sigmoid class scores, and the anchors (grid units,
  // with their strides). decode() builds axis-aligned boxes from these; the OBB head rotated ones.
  struct FlatOutputs {
    torch::Tensor distances;                      // (B, 4, A)
    torch::Tensor scores;                         // (B, nc, A)
    torch::Tensor anchor_points, anchor_strides;  // (A, 2), (A, 1)
  };
  FlatOutputs flatten_outputs(const std::vector<torch::Tensor>& levels) const;

 private:
  struct Branch {
    std::vector<Chain> box, cls;
  };
  Branch make_branch(const std::string& box_name, const std::string& cls_name,
                     const std::vector<int64_t>& ch, int64_t c3);
  static std::vector<torch::Tensor> run_branch(Branch& branch, const std::vector<torch::Tensor>& x);
  void init_branch_bias(const Branch& branch);

  int64_t nc_, reg_max_;
  bool end2end_;
  int64_t c2_, c3_, c3_one2one_;
  Branch one2many_, one2one_;
  Dfl dfl_{nullptr};
  std::vector<double> strides_;
  Branches branches_ = Branches::kBoth;
};
TORCH_MODULE(Detect);

}  // namespace trainer::model
