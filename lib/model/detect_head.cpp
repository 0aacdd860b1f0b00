// Detect head (see detect_head.h).
#include "model/detect_head.h"

#include <torch/torch.h>

#include <cmath>

#include "model/anchors.h"

namespace trainer::model {

DflImpl::DflImpl(int64_t reg_max) : reg_max_(reg_max) {
  conv = register_module("conv",
                         torch::nn::Conv2d(torch::nn::Conv2dOptions(reg_max, 1, 1).bias(false)));
  torch::NoGradGuard no_grad;
  conv->weight.copy_(torch::arange(reg_max, torch::kFloat).view({1, reg_max, 1, 1}));
  conv->weight.set_requires_grad(false);
}

torch::Tensor DflImpl::forward(const torch::Tensor& x) const {
  const int64_t b = x.size(0), a = x.size(2);
  if (FlopCount* count = active_flop_count()) {
    // The reference's DFL is the 1x1 conv: reg_max MACs per (b, 4, a) output.
    count->conv_macs += static_cast<double>(b * 4 * a * reg_max_);
  }
  auto probs = x.view({b, 4, reg_max_, a}).softmax(2);
  auto w = conv->weight.to(probs.scalar_type()).view({1, 1, reg_max_, 1});
  return (probs * w).sum(2);
}

DetectImpl::DetectImpl(int64_t nc, int64_t reg_max, bool end2end, const std::vector<int64_t>& ch,
                       const ClassWidths& cls_width)
    : nc_(nc),
      reg_max_(reg_max),
      end2end_(end2end),
      c2_(std::max({int64_t{16}, ch.at(0) / 4, 4 * reg_max})),
      c3_(cls_width.one2many > 0 ? cls_width.one2many : default_class_width(ch.at(0), nc)),
      c3_one2one_(cls_width.one2one > 0 ? cls_width.one2one : default_class_width(ch.at(0), nc)) {
  one2many_ = make_branch("cv2", "cv3", ch, c3_);
  if (reg_max_ > 1) {
    dfl_ = register_module("dfl", Dfl(reg_max_));
  } else {
    register_module("dfl", torch::nn::Identity());
  }
  if (end2end_) {
    // The reference deep-copies cv2/cv3, so both branches start from the same weights (the class
    // towers only when they have the same width: see class_widths.h).
    one2one_ = make_branch("one2one_cv2", "one2one_cv3", ch, c3_one2one_);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < ch.size(); ++i) {
      for (auto [src, dst] : {std::pair{one2many_.box[i], one2one_.box[i]},
                              std::pair{one2many_.cls[i], one2one_.cls[i]}}) {
        if (src.ptr() == one2many_.cls[i].ptr() && c3_ != c3_one2one_) continue;
        auto from = src->parameters();
        auto to = dst->parameters();
        for (size_t j = 0; j < from.size(); ++j) to[j].copy_(from[j]);
      }
    }
  }
  strides_.assign(ch.size(), 0.0);
}

DetectImpl::Branch DetectImpl::make_branch(const std::string& box_name, const std::string& cls_name,
                                           const std::vector<int64_t>& ch, int64_t c3) {
  Branch branch;
  auto box_list = register_module(box_name, torch::nn::ModuleList());
  auto cls_list = register_module(cls_name, torch::nn::ModuleList());
  for (const int64_t x : ch) {
    auto box = Chain();
    box->append(Conv(x, c2_, 3).ptr());
    box->append(Conv(c2_, c2_, 3).ptr());
    box->append(torch::nn::Conv2d(torch::nn::Conv2dOptions(c2_, 4 * reg_max_, 1)).ptr());
    box_list->push_back(box.ptr());
    branch.box.push_back(box);

    // Non-legacy class tower: [DWConv 3x3, Conv 1x1] twice, then the 1x1 output conv.
    auto pair1 = Chain();
    pair1->append(make_dwconv(x, x, 3).ptr());
    pair1->append(Conv(x, c3, 1).ptr());
    auto pair2 = Chain();
    pair2->append(make_dwconv(c3, c3, 3).ptr());
    pair2->append(Conv(c3, c3, 1).ptr());
    auto cls = Chain();
    cls->append(pair1.ptr());
    cls->append(pair2.ptr());
    cls->append(torch::nn::Conv2d(torch::nn::Conv2dOptions(c3, nc_, 1)).ptr());
    cls_list->push_back(cls.ptr());
    branch.cls.push_back(cls);
  }
  return branch;
}

std::vector<torch::Tensor> DetectImpl::run_branch(Branch& branch,
                                                  const std::vector<torch::Tensor>& x) {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < x.size(); ++i) {
    out.push_back(torch::cat({branch.box[i]->forward(x[i]), branch.cls[i]->forward(x[i])}, 1));
  }
  return out;
}

DetectOutput DetectImpl::forward(const std::vector<torch::Tensor>& x) {
  TORCH_CHECK(x.size() == one2many_.box.size(), "Detect: expected ", one2many_.box.size(),
              " levels, got ", x.size());
  DetectOutput out;
  if (runs_one2many()) out.one2many = run_branch(one2many_, x);
  if (runs_one2one()) {
    std::vector<torch::Tensor> detached;
    for (const auto& xi : x) detached.push_back(xi.detach());
    out.one2one = run_branch(one2one_, detached);
  }
  return out;
}

void DetectImpl::set_branches(Branches branches) {
  TORCH_CHECK(end2end_ || branches != Branches::kOne2One, "Detect: no one-to-one branch");
  branches_ = branches;
}

namespace {

torch::nn::Conv2d last_conv(const Chain& chain) {
  return torch::nn::Conv2d(
      std::dynamic_pointer_cast<torch::nn::Conv2dImpl>(chain->children().back()));
}

}  // namespace

torch::nn::Conv2d DetectImpl::box_output(size_t level, bool one2one) const {
  return last_conv((one2one ? one2one_ : one2many_).box.at(level));
}

torch::nn::Conv2d DetectImpl::class_output(size_t level, bool one2one) const {
  return last_conv((one2one ? one2one_ : one2many_).cls.at(level));
}

void DetectImpl::set_strides(const std::vector<double>& strides) {
  TORCH_CHECK(strides.size() == one2many_.box.size(), "Detect: ", strides.size(), " strides for ",
              one2many_.box.size(), " levels");
  strides_ = strides;
  bias_init();
}

void DetectImpl::init_branch_bias(const Branch& branch) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < branch.box.size(); ++i) {
    auto box = last_conv(branch.box[i]);
    auto cls = last_conv(branch.cls[i]);
    box->bias.fill_(2.0);
    const double cells = 640.0 / strides_[i];
    cls->bias.fill_(std::log(5.0 / static_cast<double>(nc_) / (cells * cells)));
  }
}

void DetectImpl::bias_init() {
  init_branch_bias(one2many_);
  if (end2end_) init_branch_bias(one2one_);
}

DetectImpl::FlatOutputs DetectImpl::flatten_outputs(
    const std::vector<torch::Tensor>& levels) const {
  std::vector<torch::Tensor> flat;
  for (const auto& l : levels) flat.push_back(l.to(torch::kFloat).flatten(2));
  auto all = torch::cat(flat, 2);  // (B, 4 reg_max + nc, A)
  auto parts = all.split({4 * reg_max_, nc_}, 1);
  auto anchors = make_anchors(levels, strides_, 0.5, torch::kFloat);
  return {reg_max_ > 1 ? dfl_->forward(parts[0]) : parts[0], parts[1].sigmoid(), anchors.points,
          anchors.strides};
}

torch::Tensor DetectImpl::decode(const std::vector<torch::Tensor>& levels, bool xywh) const {
  const FlatOutputs out = flatten_outputs(levels);
  auto boxes = dist2bbox(out.distances, out.anchor_points.t().unsqueeze(0), xywh, 1) *
               out.anchor_strides.t().unsqueeze(0);
  return torch::cat({boxes, out.scores}, 1);
}

torch::Tensor DetectImpl::decode_output(const DetectOutput& raw, bool one2one, bool xywh) const {
  return decode(one2one ? raw.one2one : raw.one2many, xywh);
}

}  // namespace trainer::model
