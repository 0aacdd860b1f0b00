// OBB and OBB26 heads (see obb_head.h).
// Tested by tests/model/test_obb_model.cpp: decode_angle for OBB/OBB26, rotated box decode by hand,
//   decode_output, forward angle ranges and keys.
#include "model/obb_head.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "model/rotated_box_ops.h"

namespace trainer::model {

torch::Tensor decode_angle(const torch::Tensor& logits, ObbHeadKind kind) {
  return kind == ObbHeadKind::kObb ? (logits.sigmoid() - 0.25) * M_PI : logits;
}

torch::Tensor decode_rotated_boxes(const torch::Tensor& distances, const torch::Tensor& angles,
                                   const torch::Tensor& anchor_points,
                                   const torch::Tensor& anchor_strides) {
  // dist2rbox works on the last dimension; the head's layout is channels first.
  const auto boxes = dist2rbox(distances.transpose(1, 2), angles.transpose(1, 2),
                               anchor_points.unsqueeze(0));  // (B, A, 4)
  return boxes.transpose(1, 2) * anchor_strides.t().unsqueeze(0);
}

ObbImpl::ObbImpl(int64_t nc, int64_t reg_max, bool end2end, const std::vector<int64_t>& ch,
                 ObbHeadKind kind, const ClassWidths& cls_width)
    : DetectImpl(nc, reg_max, end2end, ch, cls_width),
      kind_(kind),
      c4_(std::max<int64_t>(ch.at(0) / 4, 1)) {
  one2many_angle_ = make_tower("cv4", ch);
  if (end2end) {
    one2one_angle_ = make_tower("one2one_cv4", ch);
    for (size_t i = 0; i < ch.size(); ++i) copy_parameters(*one2many_angle_[i], *one2one_angle_[i]);
  }
}

std::vector<Chain> ObbImpl::make_tower(const std::string& name, const std::vector<int64_t>& ch) {
  std::vector<Chain> tower;
  auto list = register_module(name, torch::nn::ModuleList());
  for (const int64_t x : ch) {
    auto level = Chain();
    level->append(Conv(x, c4_, 3).ptr());
    level->append(Conv(c4_, c4_, 3).ptr());
    level->append(torch::nn::Conv2d(torch::nn::Conv2dOptions(c4_, 1, 1)).ptr());
    list->push_back(level.ptr());
    tower.push_back(level);
  }
  return tower;
}

std::vector<torch::Tensor> ObbImpl::run_tower(std::vector<Chain>& tower,
                                              const std::vector<torch::Tensor>& x) {
  std::vector<torch::Tensor> angles;
  for (size_t i = 0; i < x.size(); ++i)
    angles.push_back(decode_angle(tower[i]->forward(x[i]), kind_));
  return angles;
}

DetectOutput ObbImpl::forward(const std::vector<torch::Tensor>& x) {
  DetectOutput out = DetectImpl::forward(x);
  if (runs_one2many()) out.one2many_angle = run_tower(one2many_angle_, x);
  if (runs_one2one()) {
    std::vector<torch::Tensor> detached;
    for (const auto& xi : x) detached.push_back(xi.detach());
    out.one2one_angle = run_tower(one2one_angle_, detached);
  }
  return out;
}

torch::Tensor ObbImpl::decode_output(const DetectOutput& raw, bool one2one, bool /*xywh*/) const {
  const auto& levels = one2one ? raw.one2one : raw.one2many;
  const auto& angle_levels = one2one ? raw.one2one_angle : raw.one2many_angle;
  TORCH_CHECK(!angle_levels.empty(), "OBB head: the raw output has no angles");
  std::vector<torch::Tensor> flat;
  for (const auto& l : angle_levels) flat.push_back(l.to(torch::kFloat).flatten(2));
  const auto angles = torch::cat(flat, 2);  // (B, 1, A)
  const FlatOutputs out = flatten_outputs(levels);
  const auto boxes =
      decode_rotated_boxes(out.distances, angles, out.anchor_points, out.anchor_strides);
  return torch::cat({boxes, out.scores, angles}, 1);
}

torch::nn::Conv2d ObbImpl::angle_output(size_t level, bool one2one) const {
  const auto& tower = one2one ? one2one_angle_ : one2many_angle_;
  return torch::nn::Conv2d(
      std::dynamic_pointer_cast<torch::nn::Conv2dImpl>(tower.at(level)->children().back()));
}

}  // namespace trainer::model
