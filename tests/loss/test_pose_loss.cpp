// The pose loss end to end on random head outputs: item lists and names, gradients reaching the
// keypoint, sigma and flow tensors, validation without sigmas, and batches without objects. The
// values themselves are compared with the reference in tests/parity/test_pose_loss_parity.cpp.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "loss/pose_loss.h"
#include "model/real_nvp.h"

using namespace trainer;
using namespace trainer::loss;

namespace {

const std::vector<double> kStrides = {8, 16, 32};
constexpr int64_t kK = 4;

std::vector<at::Tensor> levels(int64_t channels, double scale = 1.0, double offset = 0.0) {
  std::vector<at::Tensor> out;
  for (int64_t side : {8, 4, 2})
    out.push_back((torch::randn({2, channels, side, side}) * scale + offset).requires_grad_());
  return out;
}

// Raw outputs of a 64 x 64 input, 2 classes, K = 4 keypoints of ndim 3.
model::DetectOutput outputs(int reg_max, bool end2end, bool sigma) {
  model::DetectOutput o;
  const double box_offset = reg_max == 1 ? 1.5 : 0.0;
  o.one2many = levels(4 * reg_max + 2, 0.5, box_offset);
  o.one2many_kpts = levels(kK * 3, 0.5);
  if (sigma) o.one2many_sigma = levels(2 * kK);
  if (end2end) {
    o.one2one = levels(4 * reg_max + 2, 0.5, box_offset);
    o.one2one_kpts = levels(kK * 3, 0.5);
    if (sigma) o.one2one_sigma = levels(2 * kK);
  }
  return o;
}

LossTargets targets(bool empty = false) {
  if (empty) return {torch::zeros({0, 6}), torch::zeros({0, kK, 3}), {}, {}, true};
  const auto labels = torch::tensor({0.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.6f,  //
                                     1.0f, 0.0f, 0.3f, 0.4f, 0.3f, 0.3f})
                          .view({2, 6});
  auto kpts = torch::rand({2, kK, 3}) * 0.2 + 0.3;
  kpts.select(-1, 2).copy_(
      torch::tensor({2.0f, 1.0f, 0.0f, 2.0f, 2.0f, 2.0f, 2.0f, 0.0f}).view({2, kK}));
  return {labels, kpts, {}, {}, true};
}

bool has_grad(const std::vector<at::Tensor>& ts) {
  for (const auto& t : ts)
    if (!t.grad().defined()) return false;
  return true;
}

}  // namespace

TEST_CASE("pose loss item names") {
  CHECK(pose_loss_item_names(16, false) ==
        std::vector<std::string>{"box_loss", "pose_loss", "kobj_loss", "cls_loss", "dfl_loss"});
  CHECK(pose_loss_item_names(1, true) == std::vector<std::string>{"box_loss", "pose_loss",
                                                                  "kobj_loss", "cls_loss",
                                                                  "l1_loss", "rle_loss"});
}

TEST_CASE("PoseLoss YOLO26 (end-to-end, RLE): six items, gradients to keypoints, sigmas, flow") {
  torch::manual_seed(1);
  model::RealNvp flow;
  PoseLoss loss(2, 1, kStrides, LossGains{}, PoseGains{}, /*end2end=*/true, kK, 3, {},
                keypoint_flow(flow));
  CHECK(loss.item_names().size() == 6);
  auto out = outputs(1, true, true);
  const auto r = loss(out, targets(), 2);
  REQUIRE(r.items.sizes() == at::IntArrayRef({6}));
  CHECK(std::isfinite(r.total.item<double>()));
  CHECK(r.items[1].item<double>() > 0);  // pose
  CHECK(r.items[2].item<double>() > 0);  // kobj
  r.total.backward();
  CHECK(has_grad(out.one2many_kpts));
  CHECK(has_grad(out.one2one_kpts));
  CHECK(has_grad(out.one2one_sigma));
  CHECK(has_grad(flow->parameters()));

  SUBCASE("validation outputs (no sigma channels): rle is 0") {
    const auto v = loss(outputs(1, true, false), targets(), 2);
    CHECK(v.items[5].item<double>() == 0.0);
  }
}

TEST_CASE("PoseLoss without objects: pose, kobj and rle are 0, the flow is still in the graph") {
  torch::manual_seed(2);
  model::RealNvp flow;
  PoseLoss loss(2, 1, kStrides, LossGains{}, PoseGains{}, true, kK, 3, {}, keypoint_flow(flow));
  auto out = outputs(1, true, true);
  const auto r = loss(out, targets(/*empty=*/true), 2);
  CHECK(r.items[1].item<double>() == 0.0);
  CHECK(r.items[2].item<double>() == 0.0);
  CHECK(r.items[5].item<double>() == 0.0);
  r.total.backward();
  CHECK(has_grad(out.one2many_kpts));
  CHECK(has_grad(flow->parameters()));
}

TEST_CASE("PoseLoss YOLO11 (v8PoseLoss): five items, the total is items x batch size") {
  torch::manual_seed(3);
  PoseLoss loss(2, 16, kStrides, LossGains{}, PoseGains{}, /*end2end=*/false, kK, 3);
  CHECK(loss.item_names().back() == "dfl_loss");
  auto out = outputs(16, false, false);
  const auto r = loss(out, targets(), 2);
  REQUIRE(r.items.sizes() == at::IntArrayRef({5}));
  CHECK(r.total.item<double>() == doctest::Approx(r.items.sum().item<double>() * 2).epsilon(1e-6));
  CHECK(r.items[1].item<double>() > 0);
  CHECK_THROWS_AS(loss(out, LossTargets{targets().labels, {}, {}, {}, true}, 2),
                  std::invalid_argument);
}
