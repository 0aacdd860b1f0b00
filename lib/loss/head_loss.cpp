// Tested by tests/loss/test_yolo_loss.cpp: HeadLoss terms via YoloLoss: BCE/CIoU/L1 normalised by
//   target score sum (hand-computed), no-GT batches, DFL gradients.
#include "loss/head_loss.h"

#include <ATen/ATen.h>

#include <sstream>
#include <stdexcept>

#include "loss/anchors.h"
#include "loss/bbox_loss.h"

namespace trainer::loss {

namespace {

AssignerOptions assigner_options(int64_t nc, const std::vector<double>& strides, int64_t topk,
                                 int64_t topk2) {
  AssignerOptions o;
  o.num_classes = nc;
  o.topk = topk;
  o.topk2 = topk2;
  o.strides = strides;
  return o;
}

}  // namespace

HeadLoss::HeadLoss(int64_t num_classes, int64_t reg_max, std::vector<double> strides,
                   LossGains gains, int64_t topk, int64_t topk2)
    : num_classes_(num_classes),
      reg_max_(reg_max),
      strides_(std::move(strides)),
      gains_(gains),
      assigner_(assigner_options(num_classes, strides_, topk, topk2)) {
  if (reg_max_ < 1) throw std::invalid_argument("detection loss: reg_max must be >= 1");
}

HeadPredictions HeadLoss::parse(const std::vector<at::Tensor>& levels) const {
  const int64_t channels = 4 * reg_max_ + num_classes_;
  if (levels.size() != strides_.size() || levels.empty()) {
    throw std::invalid_argument("detection loss: " + std::to_string(levels.size()) +
                                " output levels for " + std::to_string(strides_.size()) +
                                " strides");
  }
  std::vector<at::Tensor> flat;
  for (size_t i = 0; i < levels.size(); ++i) {
    const auto& l = levels[i];
    if (l.dim() != 4 || l.size(1) != channels || l.size(0) != levels[0].size(0)) {
      std::ostringstream msg;
      msg << "detection loss: level " << i << " output is " << l.sizes() << ", expected (B, "
          << channels << " = 4 x reg_max " << reg_max_ << " + nc " << num_classes_ << ", H, W)";
      throw std::invalid_argument(msg.str());
    }
    flat.push_back(l.to(at::kFloat).flatten(2));  // (B, C, H * W), computed in fp32
  }
  const auto all = at::cat(flat, 2);  // (B, C, A)
  HeadPredictions p;
  p.pred_dist = all.narrow(1, 0, 4 * reg_max_).permute({0, 2, 1}).contiguous();
  p.pred_scores = all.narrow(1, 4 * reg_max_, num_classes_).permute({0, 2, 1}).contiguous();
  const auto anchors = model::make_anchors(levels, strides_, 0.5, at::kFloat);
  p.anchor_points = anchors.points;
  p.stride = anchors.strides;
  p.image_h = static_cast<double>(levels[0].size(2)) * strides_[0];
  p.image_w = static_cast<double>(levels[0].size(3)) * strides_[0];
  auto ltrb = p.pred_dist;
  if (reg_max_ > 1) {
    // Expected distance under the softmax over the bins 0 .. reg_max - 1.
    const auto bins = at::arange(reg_max_, p.pred_dist.options());
    const auto sizes = p.pred_dist.sizes();
    ltrb = p.pred_dist.view({sizes[0], sizes[1], 4, reg_max_}).softmax(3).matmul(bins);
  }
  p.pred_bboxes = dist_to_bbox(ltrb, p.anchor_points);
  return p;
}

at::Tensor HeadLoss::operator()(const HeadPredictions& p, const GtTargets& gt) const {
  return box_cls_dfl(p, assign(p, gt));
}

Assignment HeadLoss::assign(const HeadPredictions& p, const GtTargets& gt) const {
  return assigner_(p.pred_scores.detach().sigmoid(), p.pred_bboxes.detach() * p.stride,
                   p.anchor_points * p.stride, gt.labels, gt.bboxes, gt.mask, gt.static_shapes);
}

at::Tensor HeadLoss::box_cls_dfl(const HeadPredictions& p, const Assignment& a) const {
  const auto target_scores_sum = a.target_scores.sum().clamp_min(1.0);
  const auto cls = at::binary_cross_entropy_with_logits(p.pred_scores, a.target_scores, {}, {},
                                                        at::Reduction::None)
                       .sum() /
                   target_scores_sum;
  // With no foreground the box terms are empty sums (0) that still join the graph.
  const auto box_loss = a.static_shapes ? masked_bbox_loss : bbox_loss;
  const auto box = box_loss(p.pred_dist, p.pred_bboxes, p.anchor_points, a.target_bboxes / p.stride,
                            a.target_scores, target_scores_sum, a.fg_mask, p.stride, p.image_h,
                            p.image_w, reg_max_);
  return at::stack({box.iou * gains_.box, cls * gains_.cls, box.dfl * gains_.dfl});
}

}  // namespace trainer::loss
