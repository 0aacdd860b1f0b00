// Pose and Pose26 heads (see pose_head.h).
// Tested by tests/model/test_pose_decode.cpp: decode_keypoints for Pose26 and Pose (YOLO11), ndim
//   2, pose predict rows through NMS/top-k.
#include "model/pose_head.h"

#include <torch/torch.h>

#include <algorithm>

#include "model/anchors.h"

namespace trainer::model {

torch::Tensor decode_keypoints(const torch::Tensor& raw, const torch::Tensor& anchor_points,
                               const torch::Tensor& anchor_strides, const KeypointShape& shape,
                               PoseHeadKind kind) {
  const int64_t b = raw.size(0), a = raw.size(2);
  const auto y = raw.view({b, shape.count, shape.dims, a});
  const auto ax = anchor_points.select(1, 0), ay = anchor_points.select(1, 1);  // (A)
  const auto stride = anchor_strides.view({a});
  // The reference's operation order, so the floats agree bit for bit.
  auto place = [&](int64_t d, const torch::Tensor& anchor) {
    const auto v = y.select(2, d);
    return kind == PoseHeadKind::kPose ? (v * 2.0 + (anchor - 0.5)) * stride
                                       : (v + anchor) * stride;
  };
  std::vector<torch::Tensor> parts = {place(0, ax), place(1, ay)};
  if (shape.dims == 3) parts.push_back(y.select(2, 2).sigmoid());
  return torch::stack(parts, 2).view({b, shape.channels(), a});
}

PoseImpl::PoseImpl(int64_t nc, int64_t reg_max, bool end2end, const std::vector<int64_t>& ch,
                   const KeypointShape& kpt_shape, PoseHeadKind kind, const ClassWidths& cls_width)
    : DetectImpl(nc, reg_max, end2end, ch, cls_width),
      kpt_shape_(kpt_shape),
      kind_(kind),
      c4_(std::max(ch.at(0) / 4, kind == PoseHeadKind::kPose
                                     ? kpt_shape.channels()
                                     : kpt_shape.count * (kpt_shape.dims + 2))) {
  TORCH_CHECK(kpt_shape.count > 0 && (kpt_shape.dims == 2 || kpt_shape.dims == 3),
              "pose head: kpt_shape must be [K, 2] or [K, 3], got [", kpt_shape.count, ", ",
              kpt_shape.dims, "]");
  // Registration order = the reference's attribute order: cv4, one2one_cv4, flow_model, cv4_kpts,
  // cv4_sigma, one2one_cv4_kpts, one2one_cv4_sigma.
  one2many_pose_ = make_towers("cv4", ch);
  if (end2end) {
    one2one_pose_ = make_towers("one2one_cv4", ch);
    for (size_t i = 0; i < ch.size(); ++i) {
      copy_parameters(*one2many_pose_.trunk[i], *one2one_pose_.trunk[i]);
    }
  }
  if (kind_ == PoseHeadKind::kPose26) {
    flow_ = register_module("flow_model", RealNvp());
    register_outputs(one2many_pose_, "cv4", ch.size());
    if (end2end) {
      register_outputs(one2one_pose_, "one2one_cv4", ch.size());
      for (size_t i = 0; i < ch.size(); ++i) {
        copy_parameters(*one2many_pose_.kpts[i], *one2one_pose_.kpts[i]);
        copy_parameters(*one2many_pose_.sigma[i], *one2one_pose_.sigma[i]);
      }
    }
  }
}

PoseImpl::Towers PoseImpl::make_towers(const std::string& prefix, const std::vector<int64_t>& ch) {
  Towers towers;
  auto list = register_module(prefix, torch::nn::ModuleList());
  for (const int64_t x : ch) {
    auto trunk = Chain();
    trunk->append(Conv(x, c4_, 3).ptr());
    trunk->append(Conv(c4_, c4_, 3).ptr());
    if (kind_ == PoseHeadKind::kPose) {
      trunk->append(
          torch::nn::Conv2d(torch::nn::Conv2dOptions(c4_, kpt_shape_.channels(), 1)).ptr());
    }
    list->push_back(trunk.ptr());
    towers.trunk.push_back(trunk);
  }
  return towers;
}

void PoseImpl::register_outputs(Towers& towers, const std::string& prefix, size_t levels) {
  auto kpts = register_module(prefix + "_kpts", torch::nn::ModuleList());
  auto sigma = register_module(prefix + "_sigma", torch::nn::ModuleList());
  for (size_t i = 0; i < levels; ++i) {
    towers.kpts.emplace_back(torch::nn::Conv2dOptions(c4_, kpt_shape_.channels(), 1));
    kpts->push_back(towers.kpts.back().ptr());
  }
  for (size_t i = 0; i < levels; ++i) {
    towers.sigma.emplace_back(torch::nn::Conv2dOptions(c4_, 2 * kpt_shape_.count, 1));
    sigma->push_back(towers.sigma.back().ptr());
  }
}

void PoseImpl::run_towers(Towers& towers, const std::vector<torch::Tensor>& x,
                          std::vector<torch::Tensor>& kpts, std::vector<torch::Tensor>& sigma) {
  auto output = [](torch::nn::Conv2d& conv, const torch::Tensor& in) {
    auto y = conv->forward(in);
    count_conv2d(*conv, y);
    return y;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    auto features = towers.trunk[i]->forward(x[i]);
    if (kind_ == PoseHeadKind::kPose) {
      kpts.push_back(features);
      continue;
    }
    kpts.push_back(output(towers.kpts[i], features));
    // The sigma head runs only in training mode, as the reference's `if self.training`.
    if (is_training()) sigma.push_back(output(towers.sigma[i], features));
  }
}

DetectOutput PoseImpl::forward(const std::vector<torch::Tensor>& x) {
  DetectOutput out = DetectImpl::forward(x);
  if (runs_one2many()) run_towers(one2many_pose_, x, out.one2many_kpts, out.one2many_sigma);
  if (runs_one2one()) {
    std::vector<torch::Tensor> detached;
    for (const auto& xi : x) detached.push_back(xi.detach());
    run_towers(one2one_pose_, detached, out.one2one_kpts, out.one2one_sigma);
  }
  return out;
}

torch::Tensor PoseImpl::decode_output(const DetectOutput& raw, bool one2one, bool xywh) const {
  const auto& levels = one2one ? raw.one2one_kpts : raw.one2many_kpts;
  TORCH_CHECK(!levels.empty(), "pose head: the raw output has no keypoints");
  std::vector<torch::Tensor> flat;
  for (const auto& l : levels) flat.push_back(l.to(torch::kFloat).flatten(2));
  const auto anchors = make_anchors(levels, strides(), 0.5, torch::kFloat);
  const auto kpts =
      decode_keypoints(torch::cat(flat, 2), anchors.points, anchors.strides, kpt_shape_, kind_);
  return torch::cat({DetectImpl::decode_output(raw, one2one, xywh), kpts}, 1);
}

}  // namespace trainer::model
