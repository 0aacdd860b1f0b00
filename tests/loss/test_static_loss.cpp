// The static-shapes loss (LossTargets::static_instances) against the reference's selecting path:
// the same assignment bit for bit, the same loss items and the same gradient of every head
// output, for detection and OBB, YOLO11 and YOLO26, on batches with 0, 1 and many objects and one
// image at exactly max_instances; and the instance cap that keeps images within it.
//
// Tolerance: both paths compute every per-entry value with the same ops; they differ only in how
// sums are ordered (over the foreground's N entries, or over all B x A entries of which the
// background adds exact zeros). In fp32 a reordered sum of at most B x A = 252 terms differs by a
// few ulp of its magnitude, so 1e-5 relative (with an absolute floor at 1e-6 of the largest
// gradient) holds with margin, and still fails for any wrong weight, missed anchor or term.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "loss/box_ops.h"
#include "loss/dense_assigner_cpu.h"
#include "loss/head_loss.h"
#include "loss/instance_cap.h"
#include "loss/keypoint_loss.h"
#include "loss/obb_loss.h"
#include "loss/pose_loss.h"
#include "loss/positive_slots.h"
#include "loss/rle_loss.h"
#include "loss/segment_assigner.h"
#include "loss/segment_loss.h"
#include "loss/task_aligned_assigner.h"
#include "loss/yolo_loss.h"
#include "model/mask_ops.h"
#include "model/yolo_model.h"

using namespace trainer;
using namespace trainer::loss;

namespace {

constexpr int64_t kBatch = 3;
constexpr int64_t kMaxInstances = 6;

// Rows [image, class, cx, cy, w, h] normalised: `counts[b]` objects in image b, drawn from a
// fixed generator (boxes 0.08-0.6 of the image, classes 0-2), and OBB rows beside them.
struct Objects {
  at::Tensor labels;
  at::Tensor rboxes;
  at::Tensor keypoints;  // (n, 17, 3): inside the box, visibility 0, 1 or 2 (some invisible)
};
Objects objects(const std::vector<int64_t>& counts, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> labels, rboxes, keypoints;
  for (int64_t b = 0; b < static_cast<int64_t>(counts.size()); ++b) {
    const int64_t n = counts[static_cast<size_t>(b)];
    if (n == 0) continue;
    const auto wh = at::rand({n, 2}, gen) * 0.52 + 0.08;
    const auto centre = wh / 2 + at::rand({n, 2}, gen) * (1 - wh);
    const auto cls = at::randint(0, 3, {n, 1}, gen).to(at::kFloat);
    labels.push_back(at::cat({at::full({n, 1}, static_cast<double>(b)), cls, centre, wh}, 1));
    const auto angle = at::rand({n, 1}, gen) * 1.5;
    rboxes.push_back(at::cat({centre, wh * 0.8, angle}, 1));
    const auto xy = centre.unsqueeze(1) + (at::rand({n, 17, 2}, gen) - 0.5) * wh.unsqueeze(1);
    const auto visibility = at::randint(0, 3, {n, 17, 1}, gen).to(at::kFloat);
    keypoints.push_back(at::cat({xy, visibility}, -1));
  }
  if (labels.empty()) return {at::zeros({0, 6}), at::zeros({0, 5}), at::zeros({0, 17, 3})};
  return {at::cat(labels), at::cat(rboxes), at::cat(keypoints)};
}

// Segmentation masks of `labels` at 16 x 16 (a 64 px input, mask ratio 4): each object's box
// filled. overlap: one index image per image, pixel j + 1 for the image's row j, larger boxes drawn
// first so smaller ones stay on top (as the loader draws them); else one 0/1 mask per row.
at::Tensor box_masks(const at::Tensor& labels, int64_t batch, bool overlap) {
  const int64_t n = labels.size(0), side = 16;
  auto per_row = at::zeros({n, side, side}, at::kByte);
  auto index = at::zeros({batch, side, side}, at::kInt);
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  const auto area = [&](int64_t i) {
    return labels[i][4].item<double>() * labels[i][5].item<double>();
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return area(a) > area(b); });
  for (const int64_t i : order) {
    const auto r = labels[i];
    const int64_t img = r[0].item<int64_t>();
    int64_t slot = 0;
    for (int64_t j = 0; j < i; ++j) slot += labels[j][0].item<int64_t>() == img ? 1 : 0;
    const auto px = [&](int col, double sign) {
      const double v = (r[col].item<double>() + sign * r[col + 2].item<double>() / 2) * side;
      return std::clamp<int64_t>(static_cast<int64_t>(std::round(v)), 0, side);
    };
    const int64_t x1 = px(2, -1), x2 = std::max(px(2, 1), x1 + 1);
    const int64_t y1 = px(3, -1), y2 = std::max(px(3, 1), y1 + 1);
    per_row[i].slice(0, y1, y2).slice(1, x1, x2).fill_(1);
    index[img].slice(0, y1, y2).slice(1, x1, x2).fill_(slot + 1);
  }
  return overlap ? index : per_row;
}

model::DetectOutput detached_leaves(const model::DetectOutput& out) {
  const auto leaves = [](const std::vector<at::Tensor>& levels) {
    std::vector<at::Tensor> r;
    for (const auto& l : levels) r.push_back(l.detach().clone().requires_grad_(true));
    return r;
  };
  model::DetectOutput copy = out;
  copy.one2many = leaves(out.one2many);
  copy.one2one = leaves(out.one2one);
  copy.one2many_angle = leaves(out.one2many_angle);
  copy.one2one_angle = leaves(out.one2one_angle);
  copy.one2many_kpts = leaves(out.one2many_kpts);
  copy.one2one_kpts = leaves(out.one2one_kpts);
  copy.one2many_sigma = leaves(out.one2many_sigma);
  copy.one2one_sigma = leaves(out.one2one_sigma);
  copy.one2many_coef = leaves(out.one2many_coef);
  copy.one2one_coef = leaves(out.one2one_coef);
  copy.protos = leaves(out.protos);
  copy.semantic = leaves(out.semantic);
  return copy;
}

// The gradients of every head output and of the pose flow's parameters (taken, then zeroed: both
// paths share the model's flow).
std::vector<at::Tensor> gradients(const model::DetectOutput& out, model::YoloModel& net) {
  std::vector<at::Tensor> g;
  for (const auto* levels :
       {&out.one2many, &out.one2one, &out.one2many_angle, &out.one2one_angle, &out.one2many_kpts,
        &out.one2one_kpts, &out.one2many_sigma, &out.one2one_sigma, &out.one2many_coef,
        &out.one2one_coef, &out.protos, &out.semantic}) {
    for (const auto& l : *levels) g.push_back(l.grad());
  }
  if (!net->flow().is_empty()) {
    for (auto& p : net->flow()->parameters()) {
      g.push_back(p.grad().defined() ? p.grad().clone() : p.grad());
      if (p.grad().defined()) p.mutable_grad().zero_();
    }
  }
  return g;
}

void check_close(const at::Tensor& a, const at::Tensor& b, double floor) {
  // An output the selecting path leaves out of the graph (pose sigmas without positives) has no
  // gradient there; the static path's must then be exactly 0.
  if (a.defined() != b.defined()) {
    CHECK(torch::equal(a.defined() ? a : b, at::zeros_like(a.defined() ? a : b)));
    return;
  }
  if (!a.defined()) return;
  const double scale = std::max(a.abs().max().item<double>(), floor);
  const double diff = (a - b).abs().max().item<double>();
  CHECK(diff <= 1e-5 * scale);
}

// One comparison: the same outputs through the dynamic loss and the static one.
void compare_paths(model::YoloModel& net, core::Task task, const Objects& objs,
                   bool overlap_masks = true) {
  const auto out = net->forward_for_loss(torch::rand({kBatch, 3, 64, 64}));
  std::unique_ptr<YoloLoss> loss;
  if (task == core::Task::kPose) {
    std::optional<KeypointFlow> flow;
    if (!net->flow().is_empty()) flow = keypoint_flow(net->flow());
    const auto kpt = net->keypoint_shape();
    loss = std::make_unique<PoseLoss>(3, net->reg_max(), net->strides(), LossGains{}, PoseGains{},
                                      net->end2end(), kpt.count, kpt.dims, std::vector<double>{},
                                      std::move(flow));
  } else if (task == core::Task::kSegment) {
    loss = std::make_unique<SegmentLoss>(3, net->reg_max(), net->strides(), LossGains{},
                                         net->end2end());
  } else if (task == core::Task::kObb) {
    loss = std::make_unique<ObbLoss>(3, net->reg_max(), net->strides(), LossGains{}, 1.0,
                                     net->end2end());
  } else {
    loss =
        std::make_unique<YoloLoss>(3, net->reg_max(), net->strides(), LossGains{}, net->end2end());
  }
  loss->set_epoch_updates(1, 4);  // end2end: weights away from the defaults 0.8 / 0.2
  LossTargets targets;
  targets.labels = objs.labels;
  targets.rboxes = objs.rboxes;
  targets.keypoints = objs.keypoints;
  if (task == core::Task::kSegment) {
    targets.masks = box_masks(objs.labels, kBatch, overlap_masks);
    targets.overlap_masks = overlap_masks;
  }
  const auto dynamic_out = detached_leaves(out);
  const auto dynamic = (*loss)(dynamic_out, targets, kBatch);
  dynamic.total.backward();
  const auto g_dynamic = gradients(dynamic_out, net);

  targets.static_instances = kMaxInstances;
  const auto static_out = detached_leaves(out);
  const auto gt = loss->prepare(targets, kBatch, 64, 64, torch::kCPU);
  CHECK(gt.static_shapes);
  CHECK(gt.bboxes.size(1) == kMaxInstances);
  const auto fixed = loss->compute(static_out, gt, kBatch);
  fixed.total.backward();

  CHECK(torch::isfinite(fixed.total).item<bool>());
  // With objects the box term is not 0: the comparison covers the foreground terms.
  if (objs.labels.size(0) > 0) CHECK(dynamic.items[0].item<double>() > 0);
  // Pose and segmentation: the keypoint location or mask term is not 0 either.
  if ((task == core::Task::kPose || task == core::Task::kSegment) && objs.labels.size(0) > 0) {
    CHECK(dynamic.items[1].item<double>() > 0);
  }
  check_close(fixed.items, dynamic.items, 1e-6);
  check_close(fixed.total.detach(), dynamic.total.detach(), 1e-6);
  // (The dynamic gradients are taken before the static backward: they share the flow.)
  const auto g_static = gradients(static_out, net);
  REQUIRE(g_dynamic.size() == g_static.size());
  double largest = 0;
  for (const auto& g : g_dynamic) {
    if (g.defined()) largest = std::max(largest, g.abs().max().item<double>());
  }
  for (size_t i = 0; i < g_dynamic.size(); ++i) {
    CAPTURE(i);
    check_close(g_static[i], g_dynamic[i], 1e-6 * largest);
  }
}

const std::vector<std::vector<int64_t>> kCompositions = {
    {0, 0, 0},              // no object
    {0, 1, 0},              // one
    {5, 0, 3},              // many, one image empty
    {kMaxInstances, 2, 1},  // one image at max_instances
};

}  // namespace

namespace {

// Both families of `task`, every batch composition (seeds from `seed`).
void compare_families(core::Task task, uint64_t seed, bool overlap_masks = true) {
  for (const auto family : {model::ModelFamily::kYolo26, model::ModelFamily::kYolo11}) {
    torch::manual_seed(seed);
    auto net = model::build_tiny_yolo_model(family, 3, task);
    net->train();
    for (size_t k = 0; k < kCompositions.size(); ++k) {
      CAPTURE(static_cast<int>(family));
      CAPTURE(k);
      compare_paths(net, task, objects(kCompositions[k], seed + k), overlap_masks);
    }
  }
}

}  // namespace

TEST_CASE("static loss: detection items and head gradients equal the selecting path's") {
  compare_families(core::Task::kDetect, 10);
}

TEST_CASE("static loss: OBB items and head gradients equal the selecting path's") {
  compare_families(core::Task::kObb, 20);
}

TEST_CASE("static loss: pose items, head and flow gradients equal the selecting path's") {
  // YOLO26: the OKS assigner (dense OKS), location, objectness and RLE on the positive slots;
  // YOLO11: the detection assigner, location and objectness.
  compare_families(core::Task::kPose, 30);
}

TEST_CASE("static loss: segmentation items and gradients equal the selecting path's") {
  // YOLO26: the mask-aware assigner (every anchor's mask IoU), the mask loss on the positive
  // slots, the semantic loss; YOLO11: the detection assigner and the mask loss. Both mask layouts.
  for (const bool overlap : {true, false}) {
    CAPTURE(overlap);
    compare_families(core::Task::kSegment, 40, overlap);
  }
}

TEST_CASE("static semantic target: the selecting path's, for both mask layouts") {
  const auto labels = objects({3, 0, 2}, 4).labels;
  const auto packed = pack_targets(labels, kBatch, 3, 64, 64, torch::kCPU, kMaxInstances);
  for (const bool overlap : {true, false}) {
    CAPTURE(overlap);
    const auto masks = box_masks(labels, kBatch, overlap);
    MaskTargets t{masks, overlap, labels.select(1, 0).to(at::kLong),
                  labels.select(1, 1).to(at::kLong)};
    const auto expected = semantic_targets(t, kBatch, 3);
    const auto layout = overlap ? masks : pack_rows(labels, masks, kBatch, kMaxInstances);
    const auto got = static_semantic_targets(layout, overlap, packed.labels, 3);
    CHECK(expected.sum().item<double>() > 10);
    CHECK(torch::equal(got, expected));
  }
}

TEST_CASE("static assigner: the same foreground, GT index, targets as the selecting path") {
  torch::manual_seed(5);
  const HeadLoss head(3, 16, {8, 16, 32}, LossGains{}, 10);
  const std::vector<at::Tensor> levels = {torch::randn({kBatch, 67, 8, 8}),
                                          torch::randn({kBatch, 67, 4, 4}),
                                          torch::randn({kBatch, 67, 2, 2})};
  const auto pred = head.parse(levels);
  const auto labels = objects({4, 0, kMaxInstances}, 7).labels;
  const auto dynamic = head.assign(pred, pack_targets(labels, kBatch, 3, 64, 64, torch::kCPU));
  const auto packed = pack_targets(labels, kBatch, 3, 64, 64, torch::kCPU, kMaxInstances);
  const auto fixed = head.assign(pred, packed);
  CHECK(fixed.static_shapes);
  REQUIRE(fixed.fg_mask.any().item<bool>());
  CHECK(torch::equal(fixed.fg_mask, dynamic.fg_mask));
  // Where there is a foreground; elsewhere the GT index points at row 0 in both.
  CHECK(torch::equal(fixed.target_gt_idx.masked_fill(fixed.fg_mask.logical_not(), 0),
                     dynamic.target_gt_idx.masked_fill(dynamic.fg_mask.logical_not(), 0)));
  CHECK(torch::allclose(fixed.target_scores, dynamic.target_scores, 1e-6, 1e-7));
  CHECK(torch::equal(fixed.target_bboxes.index({fixed.fg_mask}),
                     dynamic.target_bboxes.index({dynamic.fg_mask})));
}

TEST_CASE("static packing: every image padded to max_instances, more is refused") {
  const auto labels = objects({2, 0, 1}, 1).labels;
  const auto gt = pack_targets(labels, kBatch, 3, 64, 64, torch::kCPU, 4);
  CHECK(gt.bboxes.sizes() == torch::IntArrayRef({kBatch, 4, 4}));
  CHECK(gt.mask.sum().item<int64_t>() == 3);
  CHECK(gt.mask[0].view({-1}).equal(torch::tensor({true, true, false, false})));
  CHECK_THROWS_WITH_AS(pack_targets(labels, kBatch, 3, 64, 64, torch::kCPU, 1),
                       doctest::Contains("more than the static shapes' 1"), std::invalid_argument);
}

TEST_CASE("instance cap: the smallest objects of a crowded image go, the order of the rest kept") {
  // Image 0: areas 0.04, 0.01, 0.09, 0.0025 (rows 0-3); image 1: one row. Cap 2: image 0 keeps
  // rows 0 and 2 (the two largest) in that order; rows 1 and 3 go with their keypoints / rboxes.
  LossTargets t;
  t.labels = torch::tensor({{0.0f, 0.0f, 0.5f, 0.5f, 0.2f, 0.2f},
                            {0.0f, 1.0f, 0.5f, 0.5f, 0.1f, 0.1f},
                            {0.0f, 2.0f, 0.5f, 0.5f, 0.3f, 0.3f},
                            {1.0f, 0.0f, 0.5f, 0.5f, 0.4f, 0.4f},
                            {0.0f, 1.0f, 0.5f, 0.5f, 0.05f, 0.05f}});
  t.rboxes = torch::arange(25, torch::kFloat).view({5, 5});
  t.keypoints = torch::arange(5, torch::kFloat).view({5, 1, 1}).expand({5, 2, 3}).contiguous();
  const auto cap = cap_instances(t, 2, 2);
  CHECK(cap.dropped == 2);
  CHECK(cap.largest == 4);
  REQUIRE(t.labels.size(0) == 3);
  CHECK(torch::equal(t.labels.select(1, 1), torch::tensor({0.0f, 2.0f, 0.0f})));
  CHECK(torch::equal(t.rboxes.select(1, 0), torch::tensor({0.0f, 10.0f, 15.0f})));
  CHECK(torch::equal(t.keypoints.select(1, 0).select(1, 0), torch::tensor({0.0f, 2.0f, 3.0f})));
  // Under the cap: nothing changes.
  const auto again = cap_instances(t, 2, 2);
  CHECK(again.dropped == 0);
  CHECK(again.largest == 2);
}

TEST_CASE("instance cap: index masks lose the dropped objects' pixels and are renumbered") {
  // Image 0 has rows 0, 1, 2 (pixels 1, 2, 3); row 1 is the smallest and goes: its pixels become
  // 0 and row 2's pixels 3 -> 2. Per-object masks (overlap false) follow their rows instead.
  LossTargets t;
  t.labels = torch::tensor({{0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f},
                            {0.0f, 0.0f, 0.5f, 0.5f, 0.1f, 0.1f},
                            {0.0f, 0.0f, 0.5f, 0.5f, 0.3f, 0.3f}});
  t.masks = torch::tensor({{{1, 2}, {3, 0}}}, torch::kInt);
  t.overlap_masks = true;
  LossTargets per_object = t;
  CHECK(cap_instances(t, 1, 2).dropped == 1);
  CHECK(torch::equal(t.masks, torch::tensor({{{1, 0}, {2, 0}}}, torch::kInt)));
  per_object.overlap_masks = false;
  per_object.masks = torch::arange(3, torch::kByte).view({3, 1, 1}).expand({3, 2, 2}).contiguous();
  CHECK(cap_instances(per_object, 1, 2).dropped == 1);
  CHECK(torch::equal(per_object.masks.select(1, 0).select(1, 0),
                     torch::tensor({0, 2}, torch::kByte)));
  CHECK_THROWS_AS(cap_instances(per_object, 1, 0), std::invalid_argument);
}

TEST_CASE("static assigner: the CPU's fused pair CIoU equals bbox_iou's element-wise formula") {
  // Random boxes in a 64 px image, some degenerate (zero width or height), and a random mask:
  // the fused pass against the oracle it replaces, bbox_iou on every pair then masked.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
  const auto boxes = [&](int64_t b, int64_t n) {
    const auto xy = at::rand({b, n, 2}, gen) * 48;
    auto wh = at::rand({b, n, 2}, gen) * 30;
    wh.select(-1, 0).select(-1, 0).zero_();  // every box 0 of an image has no width
    return at::cat({xy, xy + wh}, -1);
  };
  const auto gt = boxes(2, 7), pd = boxes(2, 90);
  const auto mask = at::rand({2, 7, 90}, gen).lt(0.6);
  const auto fused = masked_pair_ciou_cpu(gt, pd, mask);
  const auto oracle = at::where(
      mask, bbox_iou(gt.unsqueeze(2), pd.unsqueeze(1), IouKind::kCiou).squeeze(-1).clamp_min(0),
      at::zeros({}));
  REQUIRE(fused.sizes() == oracle.sizes());
  CHECK(oracle.gt(0).sum().item<int64_t>() > 50);  // many overlapping pairs compared
  CHECK((fused - oracle).abs().max().item<double>() < 1e-6);
  CHECK(torch::equal(fused.eq(0), oracle.eq(0)));
}

namespace {

// Anchor centres of a 64 px image at strides 8, 16, 32 (84 anchors), in pixels.
at::Tensor anchor_centres() {
  std::vector<at::Tensor> levels;
  for (const int64_t stride : {8, 16, 32}) {
    const int64_t n = 64 / stride;
    const auto c = (at::arange(n, at::kFloat) + 0.5) * static_cast<double>(stride);
    const auto grid = at::meshgrid({c, c}, "ij");
    levels.push_back(at::stack({grid[1].flatten(), grid[0].flatten()}, -1));
  }
  return at::cat(levels);
}

}  // namespace

namespace {

// A crowded batch for the assigner: many anchors claimed by several GTs, scores and boxes on a
// coarse grid so that alignment metrics tie often (the top-k's tie-breaking matters), two padded
// rows per image, a tiny GT (STAL), one image without objects.
struct CrowdedBatch {
  at::Tensor scores, pd, points, labels, gt, valid;
};
CrowdedBatch crowded_batch() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(21);
  const int64_t bs = 3, m = 14, nc = 4;
  CrowdedBatch c;
  c.points = anchor_centres();
  const int64_t na = c.points.size(0);
  c.scores = at::randint(1, 5, {bs, na, nc}, gen).to(at::kFloat) / 5;
  const auto half = at::randint(2, 12, {bs, na, 2}, gen).to(at::kFloat);
  c.pd = at::cat({c.points - half, c.points + half}, -1);
  const auto xy = at::randint(0, 40, {bs, m, 2}, gen).to(at::kFloat);
  const auto wh = at::randint(4, 30, {bs, m, 2}, gen).to(at::kFloat);
  c.gt = at::cat({xy, xy + wh}, -1);
  c.gt[0][3] = at::tensor({20.0f, 20.0f, 23.0f, 22.0f});  // 3 x 2 px: widened by STAL
  c.valid = at::ones({bs, m, 1}, at::kBool);
  c.valid.narrow(1, m - 2, 2).fill_(false);
  c.valid[2].fill_(false);
  c.gt.masked_fill_(c.valid.logical_not(), 0);
  c.labels =
      at::randint(0, nc, {bs, m, 1}, gen).to(at::kFloat).masked_fill(c.valid.logical_not(), 0);
  return c;
}

// Each pair's predicted score of its GT's class, 0 off the candidates (the ATen form).
at::Tensor class_scores(const at::Tensor& scores, const at::Tensor& labels,
                        const at::Tensor& pair_mask) {
  const auto cls = labels.squeeze(-1).to(at::kLong).unsqueeze(-1).expand(pair_mask.sizes());
  return at::where(pair_mask, scores.transpose(1, 2).gather(1, cls), at::zeros({}));
}

AssignerOptions crowded_options(int64_t topk2) {
  AssignerOptions options;
  options.num_classes = 4;
  options.topk = 10;
  options.topk2 = topk2;
  return options;
}

}  // namespace

TEST_CASE("static assigner: the CPU's fused positives are select_positives' bits") {
  // The same metric, overlaps and candidates into both; topk2 = topk (one-to-many) and
  // topk2 = 1 (one-to-one). Overlaps quantised as well, so that conflicts tie on them too.
  const auto c = crowded_batch();
  AssignerOptions options = crowded_options(10);
  const auto pairs = dense_pairs_cpu(c.scores, c.pd, c.points, c.labels, c.gt, c.valid, options);
  const auto overlaps = (pairs.overlaps * 8).round() / 8;
  const auto metric = class_scores(c.scores, c.labels, pairs.pair_mask).pow(options.alpha) *
                      overlaps.pow(options.beta);
  for (const int64_t topk2 : {int64_t{10}, int64_t{1}}) {
    CAPTURE(topk2);
    options.topk2 = topk2;
    const auto fused = dense_positives_cpu(metric, overlaps, pairs.pair_mask, c.valid, options.topk,
                                           options.topk2, options.eps);
    const auto oracle = select_positives(metric, overlaps, pairs.pair_mask, c.valid, options);
    CHECK(fused.fg_mask.sum().item<int64_t>() > 10);
    CHECK(torch::equal(fused.fg_mask, oracle.fg_mask));
    CHECK(torch::equal(fused.target_gt_idx, oracle.target_gt_idx));
    CHECK(torch::equal(fused.norm, oracle.norm));
  }
  // Before the conflicts are resolved some anchor is claimed by two GTs (what the test covers).
  const auto topk_mask = select_topk_candidates(metric, c.valid, options.topk);
  CHECK((topk_mask * pairs.pair_mask.to(at::kFloat)).sum(1).gt(1).any().item<bool>());
}

TEST_CASE("static assigner: fused on the CPU, the element-wise path's assignment") {
  // Whole assigner: the same positives, GT indices, labels and boxes; the scores to the fused
  // CIoU's rounding (a few ulp from bbox_iou's vectorised form, see the CIoU test below).
  const auto c = crowded_batch();
  for (const int64_t topk2 : {int64_t{10}, int64_t{1}}) {
    CAPTURE(topk2);
    auto options = crowded_options(topk2);
    const TaskAlignedAssigner fused(options);
    options.fused_cpu = false;
    const TaskAlignedAssigner elementwise(options);
    const auto a = fused(c.scores, c.pd, c.points, c.labels, c.gt, c.valid, true);
    const auto b = elementwise(c.scores, c.pd, c.points, c.labels, c.gt, c.valid, true);
    const auto selecting = elementwise(c.scores, c.pd, c.points, c.labels, c.gt, c.valid, false);
    CHECK(a.fg_mask.sum().item<int64_t>() > 10);
    for (const auto* other : {&b, &selecting}) {
      CHECK(torch::equal(a.fg_mask, other->fg_mask));
      CHECK(torch::equal(a.target_gt_idx, other->target_gt_idx));
      CHECK(torch::equal(a.target_labels, other->target_labels));
      CHECK(torch::equal(a.target_bboxes, other->target_bboxes));
      CHECK(torch::allclose(a.target_scores, other->target_scores, 1e-6, 1e-9));
    }
  }
}

TEST_CASE("static assigner: fused candidates, class scores and overlaps equal their ATen forms") {
  // dense_pairs_cpu against select_candidates_in_gts (STAL), the class gather and masked CIoU.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(33);
  const int64_t bs = 2, m = 9, nc = 5;
  const auto points = anchor_centres();
  const int64_t na = points.size(0);
  const auto scores = at::rand({bs, na, nc}, gen);
  const auto pd =
      at::cat({points - 6, points + at::rand({na, 2}, gen) * 20}, -1).expand({bs, na, 4});
  const auto xy = at::rand({bs, m, 2}, gen) * 50;
  const auto gt = at::cat({xy, xy + at::rand({bs, m, 2}, gen) * 30 + 1}, -1);
  auto valid = at::rand({bs, m, 1}, gen).lt(0.8);
  const auto labels = at::randint(0, nc, {bs, m, 1}, gen).to(at::kFloat);
  AssignerOptions options;
  options.num_classes = nc;
  // The scores as the loss passes them: a transposed view, read in place.
  const auto scores_view = scores.transpose(1, 2).contiguous().transpose(1, 2);
  const auto pairs = dense_pairs_cpu(scores_view, pd, points, labels, gt, valid, options);
  const auto in_gts = select_candidates_in_gts(points, gt, valid, options).logical_and(valid);
  CHECK(in_gts.sum().item<int64_t>() > 20);
  CHECK(torch::equal(pairs.pair_mask, in_gts));
  const auto overlaps = masked_pair_ciou_cpu(gt, pd.contiguous(), in_gts);
  CHECK(torch::equal(pairs.overlaps, overlaps));
  // ATen's pow by 6 is vectorised (SLEEF), std::pow is not: an ulp apart at most.
  const auto metric =
      class_scores(scores, labels, in_gts).pow(options.alpha) * overlaps.pow(options.beta);
  CHECK(metric.gt(0).sum().item<int64_t>() > 20);
  CHECK(torch::allclose(pairs.align_metric, metric, 1e-6, 0));
  // A class outside the head's range is an error, as ATen's gather makes it.
  CHECK_THROWS(dense_pairs_cpu(scores, pd, points, labels + nc, gt, valid, options));
}

TEST_CASE("positive slots: the bound on positives per image, every positive in a slot") {
  // min(A, min(topk, topk2) x M): one-to-many 10 x 100 under 2100 anchors, one-to-one 1 x 100,
  // and the anchors' count when it is the smaller.
  CHECK(positive_capacity(2100, 100, 10, 10) == 1000);
  CHECK(positive_capacity(2100, 100, 7, 1) == 100);
  CHECK(positive_capacity(840, 100, 10, -1) == 840);
  CHECK(positive_capacity(84, 0, 10, 10) == 0);
  const auto fg =
      torch::tensor({{false, true, false, true, true}, {false, false, false, false, false}});
  const auto slots = positive_slots(fg, 3);
  CHECK(slots.anchor.sizes() == torch::IntArrayRef({2, 3}));
  CHECK(slots.positives.item<float>() == 3.0f);
  const auto taken = std::get<0>(slots.anchor[0].sort());
  CHECK(torch::equal(taken, torch::tensor({1, 3, 4})));
  CHECK(torch::equal(slots.weight[0], torch::ones({3})));
  CHECK(torch::equal(slots.weight[1], torch::zeros({3})));
  // No positive: the count is held at 1, so the means it divides are 0, not NaN.
  CHECK(positive_slots(fg.logical_and(torch::zeros_like(fg)), 2).positives.item<float>() == 1.0f);
  // gather_slots: each slot's row of its own image.
  const auto values = torch::arange(10, torch::kFloat).view({2, 5, 1});
  const auto anchor = torch::tensor({{4, 0}, {2, 2}});
  CHECK(torch::equal(gather_slots(values, anchor).view({-1}),
                     torch::tensor({4.0f, 0.0f, 7.0f, 7.0f})));
  CHECK_THROWS_AS(positive_slots(fg, 6), std::invalid_argument);
}

TEST_CASE("static keypoint terms: a non-finite prediction on a masked row reaches no gradient") {
  // Two rows of 2 keypoints: row 0 visible, row 1 a filler (mask false) whose prediction is inf.
  // The location and RLE terms and every gradient stay finite, and row 0's value is unchanged.
  auto pred = torch::tensor({{{1.0f, 2.0f, 0.5f}, {3.0f, 1.0f, 0.2f}},
                             {{INFINITY, 1.0f, 0.1f}, {2.0f, -INFINITY, 0.1f}}})
                  .requires_grad_(true);
  auto sigma = torch::zeros({2, 2, 2}).requires_grad_(true);
  const auto gt = torch::tensor(
      {{{1.5f, 2.5f, 2.0f}, {2.0f, 1.0f, 2.0f}}, {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}}});
  const auto mask = torch::tensor({{true, true}, {false, false}});
  const auto area = torch::tensor({{4.0f}, {1.0f}});
  const auto sigmas = torch::tensor({0.5f, 0.25f});
  const auto positives = torch::ones({});
  const auto location = masked_keypoint_location_loss(pred, gt, mask, area, sigmas, positives);
  const auto oracle = keypoint_location_loss(pred.narrow(0, 0, 1).detach(), gt.narrow(0, 0, 1),
                                             mask.narrow(0, 0, 1), area.narrow(0, 0, 1), sigmas);
  CHECK(location.item<float>() == doctest::Approx(oracle.item<float>()).epsilon(1e-6));
  KeypointFlow flow;
  flow.log_prob = [](const at::Tensor& e) { return -(e * e).sum(-1) / 2; };
  const auto rle = masked_rle_loss(pred, sigma, gt, mask, torch::ones({2}), flow, 1e-38);
  (location + rle).backward();
  CHECK(torch::isfinite(rle).item<bool>());
  CHECK(torch::isfinite(pred.grad()).all().item<bool>());
  CHECK(torch::isfinite(sigma.grad()).all().item<bool>());
  CHECK(torch::equal(pred.grad()[1], torch::zeros({2, 3})));
  CHECK(pred.grad()[0].abs().sum().item<float>() > 0);
}

TEST_CASE("static mask-aware assigner: the picks' mask IoU equals binary_mask_iou's") {
  // Random coefficients, prototypes, boxes and GT masks; each GT's picks (some shared between
  // GTs): picked_mask_iou against binary_mask_iou of every anchor's mask, gathered at the picks.
  torch::manual_seed(17);
  const int64_t bs = 2, na = 40, nm = 4, h = 8, w = 8, m = 3, k = 5;
  MaskAssignInputs in;
  in.coefficients = torch::randn({bs, na, nm});
  in.protos = torch::randn({bs, nm, h, w});
  const auto xy = torch::rand({bs, na, 2}) * 20;
  in.boxes = torch::cat({xy, xy + torch::rand({bs, na, 2}) * 16 + 4}, -1);
  in.mask_scale = 0.25;
  in.gt_masks = torch::rand({bs, m, h, w}).gt(0.6);
  const auto picks = torch::randint(0, na, {bs, m, k});
  const auto got = picked_mask_iou(in, picks);
  REQUIRE(got.sizes() == torch::IntArrayRef({bs, m, k}));
  for (int64_t b = 0; b < bs; ++b) {
    const auto logits = model::mask_logits(in.coefficients[b], in.protos[b]);
    const auto pred = model::crop_mask(logits.gt(0).to(at::kFloat), in.boxes[b] * in.mask_scale)
                          .view({na, h * w});
    const auto all = binary_mask_iou(in.gt_masks[b].view({m, h * w}).to(at::kFloat), pred);
    CHECK(torch::equal(got[b], all.gather(1, picks[b])));
  }
  CHECK(got.gt(0).sum().item<int64_t>() > 5);
}
