// Inference postprocess: the end-to-end top-k on a hand case, greedy NMS on a hand case and
// against a plain-loop oracle, class-aware / agnostic / multi-label behaviour (reference 7.3).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <vector>

#include "model/postprocess.h"

using namespace trainer::model;

namespace {

// Plain greedy NMS: visit boxes by descending score; keep one unless a kept box overlaps it by
// more than the threshold.
std::vector<int64_t> oracle_nms(const torch::Tensor& boxes, const torch::Tensor& scores,
                                double thr) {
  const int64_t n = boxes.size(0);
  auto order = std::get<1>(scores.sort(true, 0, true));
  auto b = boxes.accessor<float, 2>();
  auto o = order.accessor<int64_t, 1>();
  std::vector<int64_t> kept;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t i = o[r];
    bool suppressed = false;
    for (int64_t j : kept) {
      const double w = std::max(0.0f, std::min(b[i][2], b[j][2]) - std::max(b[i][0], b[j][0]));
      const double h = std::max(0.0f, std::min(b[i][3], b[j][3]) - std::max(b[i][1], b[j][1]));
      const double inter = w * h;
      const double ai = (b[i][2] - b[i][0]) * (b[i][3] - b[i][1]);
      const double aj = (b[j][2] - b[j][0]) * (b[j][3] - b[j][1]);
      if (inter / (ai + aj - inter) > thr) suppressed = true;
    }
    if (!suppressed) kept.push_back(i);
  }
  return kept;
}

std::vector<int64_t> to_vector(const torch::Tensor& t) {
  auto c = t.contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

// (1, 4 + nc, A) predictions from rows of [x1, y1, x2, y2, scores...].
torch::Tensor head_output(const std::vector<std::vector<float>>& rows) {
  const auto a = static_cast<int64_t>(rows.size());
  const auto width = static_cast<int64_t>(rows[0].size());
  auto t = torch::empty({a, width});
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < width; ++j) t[i][j] = rows[i][j];
  }
  return t.t().unsqueeze(0).contiguous();
}

}  // namespace

TEST_CASE("top-k: best anchors by max class score, then best (anchor, class) pairs") {
  // 4 anchors, 2 classes. Max scores: a0 .9, a1 .8, a2 .3, a3 .6.
  auto preds = torch::tensor({{0.f, 0.f, 1.f, 1.f, 0.1f, 0.9f},
                              {1.f, 1.f, 2.f, 2.f, 0.8f, 0.2f},
                              {2.f, 2.f, 3.f, 3.f, 0.3f, 0.3f},
                              {3.f, 3.f, 4.f, 4.f, 0.05f, 0.6f}})
                   .unsqueeze(0);
  // max_det 2: anchors a0, a1; pairs (a0, c1) .9 and (a1, c0) .8.
  auto top2 = topk_postprocess(preds, 2);
  REQUIRE(top2.sizes() == torch::IntArrayRef{1, 2, 6});
  CHECK(torch::allclose(
      top2[0], torch::tensor({{0.f, 0.f, 1.f, 1.f, 0.9f, 1.f}, {1.f, 1.f, 2.f, 2.f, 0.8f, 0.f}})));
  // max_det 3: anchors a0, a1, a3; pairs .9 (a0, c1), .8 (a1, c0), .6 (a3, c1). a2's .3 never
  // enters because a2 is not among the top-3 anchors.
  auto top3 = topk_postprocess(preds, 3);
  CHECK(torch::allclose(top3[0].select(1, 4), torch::tensor({0.9f, 0.8f, 0.6f})));
  CHECK(torch::equal(top3[0][2], torch::tensor({3.f, 3.f, 4.f, 4.f, 0.6f, 1.f})));
  // max_det larger than the anchors: min(max_det, A) rows.
  CHECK(topk_postprocess(preds, 300).size(1) == 4);
  // The confidence filter keeps score > conf, at most max_det.
  CHECK(filter_by_confidence(top3[0], 0.7, 300).size(0) == 2);
  CHECK(filter_by_confidence(top3[0], 0.0, 1).size(0) == 1);
}

TEST_CASE("NMS hand case: class-aware, agnostic, and the threshold") {
  // A [0,0,10,10] .9 c0; B [0,0,10,11] .8 c0: IoU 100/110 = 0.909 > 0.7 -> suppressed by A.
  // C [0,0,10,10] .7 c1: other class -> kept (agnostic: IoU 1 with A -> suppressed).
  // D [20,20,30,30] .6 c0: no overlap -> kept.
  // E [1,1,11,11] .5 c0: IoU with A 81 / 119 = 0.681 -> kept at 0.7, suppressed at 0.6.
  auto preds = head_output({{0, 0, 10, 10, 0.9f, 0},
                            {0, 0, 10, 11, 0.8f, 0},
                            {0, 0, 10, 10, 0, 0.7f},
                            {20, 20, 30, 30, 0.6f, 0},
                            {1, 1, 11, 11, 0.5f, 0}});
  PredictOptions opt;
  auto out = non_max_suppression(preds, opt);
  REQUIRE(out.size() == 1);
  CHECK(torch::allclose(out[0].select(1, 4), torch::tensor({0.9f, 0.7f, 0.6f, 0.5f})));
  CHECK(torch::equal(out[0].select(1, 5), torch::tensor({0.f, 1.f, 0.f, 0.f})));
  CHECK(torch::equal(out[0][1].slice(0, 0, 4), torch::tensor({0.f, 0.f, 10.f, 10.f})));

  opt.agnostic = true;
  CHECK(torch::allclose(non_max_suppression(preds, opt)[0].select(1, 4),
                        torch::tensor({0.9f, 0.6f, 0.5f})));
  opt.agnostic = false;
  opt.iou = 0.6;
  CHECK(torch::allclose(non_max_suppression(preds, opt)[0].select(1, 4),
                        torch::tensor({0.9f, 0.7f, 0.6f})));
  opt.iou = 0.7;
  opt.max_det = 2;
  CHECK(non_max_suppression(preds, opt)[0].size(0) == 2);
  opt.max_det = 300;
  opt.conf = 0.65;  // scores must be > conf
  CHECK(non_max_suppression(preds, opt)[0].size(0) == 2);
}

TEST_CASE("NMS multi-label: each class above conf is its own candidate") {
  auto preds = head_output({{0, 0, 10, 10, 0.9f, 0.3f}, {50, 50, 60, 60, 0.0005f, 0.0002f}});
  PredictOptions opt;  // conf 0.001, multi_label true
  auto out = non_max_suppression(preds, opt)[0];
  REQUIRE(out.size(0) == 2);  // (box 0, c0) and (box 0, c1); box 1 is below conf
  CHECK(torch::allclose(out.select(1, 4), torch::tensor({0.9f, 0.3f})));
  opt.multi_label = false;
  out = non_max_suppression(preds, opt)[0];
  REQUIRE(out.size(0) == 1);
  CHECK(out[0][5].item<float>() == 0.0f);
}

TEST_CASE("NMS equals the plain-loop oracle on random boxes, and max_keep takes its prefix") {
  torch::manual_seed(7);
  for (int trial = 0; trial < 5; ++trial) {
    const int64_t n = 200;
    auto xy = torch::rand({n, 2}) * 100;
    auto wh = torch::rand({n, 2}) * 30 + 1;
    auto boxes = torch::cat({xy, xy + wh}, 1);
    auto scores = torch::rand({n});
    for (double thr : {0.3, 0.5, 0.7}) {
      CAPTURE(trial);
      CAPTURE(thr);
      const auto expected = oracle_nms(boxes, scores, thr);
      CHECK(to_vector(nms(boxes, scores, thr)) == expected);
      const auto first = to_vector(nms(boxes, scores, thr, 5));
      CHECK(first == std::vector<int64_t>(expected.begin(), expected.begin() + 5));
    }
  }
  CHECK(nms(torch::empty({0, 4}), torch::empty({0}), 0.5).numel() == 0);
}

TEST_CASE("NMS: zero-area boxes (NaN IoU) do not suppress, as torchvision") {
  auto boxes = torch::tensor({{5.f, 5.f, 5.f, 5.f}, {5.f, 5.f, 5.f, 5.f}});
  auto scores = torch::tensor({0.9f, 0.8f});
  CHECK(nms(boxes, scores, 0.5).numel() == 2);
}
