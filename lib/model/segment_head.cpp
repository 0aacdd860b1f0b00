// Segment and Segment26 heads (see segment_head.h).
// Tested by tests/model/test_segment_model.cpp: Segment26/Segment forward (coefficients per level,
//   o2o detached), decode_output, keys and head rows.
#include "model/segment_head.h"

#include <torch/torch.h>

#include <algorithm>

namespace trainer::model {

SegmentImpl::SegmentImpl(int64_t nc, int64_t nm, int64_t npr, int64_t reg_max, bool end2end,
                         const std::vector<int64_t>& ch, SegmentHeadKind kind,
                         const ClassWidths& cls_width)
    : DetectImpl(nc, reg_max, end2end, ch, cls_width),
      kind_(kind),
      nm_(nm),
      npr_(npr),
      c4_(std::max(ch.at(0) / 4, nm)) {
  proto_ =
      register_module("proto", kind == SegmentHeadKind::kSegment26 ? MaskProto(ch, npr, nm, nc)
                                                                   : MaskProto(ch.at(0), npr, nm));
  one2many_coef_ = make_tower("cv4", ch);
  if (end2end) {
    one2one_coef_ = make_tower("one2one_cv4", ch);
    for (size_t i = 0; i < ch.size(); ++i) copy_parameters(*one2many_coef_[i], *one2one_coef_[i]);
  }
}

std::vector<Chain> SegmentImpl::make_tower(const std::string& name,
                                           const std::vector<int64_t>& ch) {
  std::vector<Chain> tower;
  auto list = register_module(name, torch::nn::ModuleList());
  for (const int64_t x : ch) {
    auto level = Chain();
    level->append(Conv(x, c4_, 3).ptr());
    level->append(Conv(c4_, c4_, 3).ptr());
    level->append(torch::nn::Conv2d(torch::nn::Conv2dOptions(c4_, nm_, 1)).ptr());
    list->push_back(level.ptr());
    tower.push_back(level);
  }
  return tower;
}

std::vector<torch::Tensor> SegmentImpl::run_tower(std::vector<Chain>& tower,
                                                  const std::vector<torch::Tensor>& x) {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < x.size(); ++i) out.push_back(tower[i]->forward(x[i]));
  return out;
}

DetectOutput SegmentImpl::forward(const std::vector<torch::Tensor>& x) {
  DetectOutput out = DetectImpl::forward(x);
  if (runs_one2many()) out.one2many_coef = run_tower(one2many_coef_, x);
  if (runs_one2one()) {
    std::vector<torch::Tensor> detached;
    for (const auto& xi : x) detached.push_back(xi.detach());
    out.one2one_coef = run_tower(one2one_coef_, detached);
  }
  ProtoOutput p = proto_->forward(x);
  out.protos = {p.protos};
  if (p.semantic.defined()) out.semantic = {p.semantic};
  return out;
}

torch::Tensor SegmentImpl::decode_output(const DetectOutput& raw, bool one2one, bool xywh) const {
  const auto& coef_levels = one2one ? raw.one2one_coef : raw.one2many_coef;
  TORCH_CHECK(!coef_levels.empty(), "segment head: the raw output has no mask coefficients");
  std::vector<torch::Tensor> flat;
  for (const auto& l : coef_levels) flat.push_back(l.to(torch::kFloat).flatten(2));
  const auto& levels = one2one ? raw.one2one : raw.one2many;
  return torch::cat({decode(levels, xywh), torch::cat(flat, 2)}, 1);
}

}  // namespace trainer::model
