// Inference postprocess: the end-to-end top-k on a hand case, greedy NMS on a hand case and
// against a plain-loop oracle, class-aware / agnostic / multi-label behaviour (reference 7.3), and
// the extra per-anchor channels (pose keypoints) both paths carry along with their box.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <vector>

#include "loop_nms.h"
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

// Random head output (B, 4 + nc, A): boxes clustered so they overlap, scores on a coarse grid so
// many tie, a few boxes of zero area.
torch::Tensor random_head(int64_t batch, int64_t nc, int64_t anchors, int64_t levels) {
  auto center = torch::randint(0, 4, {batch, anchors, 2}).to(torch::kFloat) * 40 +
                torch::rand({batch, anchors, 2}) * 12;
  auto wh = torch::rand({batch, anchors, 2}) * 40 + 4;
  wh.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, anchors, 17)}, 0.0);
  auto boxes = torch::cat({center - wh / 2, center + wh / 2}, 2);
  auto scores = torch::randint(0, levels, {batch, anchors, nc}).to(torch::kFloat) / levels;
  return torch::cat({boxes, scores}, 2).transpose(1, 2).contiguous();
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

TEST_CASE("batched NMS equals the per-image loop (ties, class offsets, both methods)") {
  torch::manual_seed(11);
  for (int trial = 0; trial < 4; ++trial) {
    const auto preds = random_head(3, 4, 150, trial % 2 ? 5 : 1000);
    for (bool multi : {true, false}) {
      for (bool agnostic : {false, true}) {
        for (int64_t max_det : {int64_t{300}, int64_t{7}}) {
          PredictOptions opt;
          opt.conf = 0.15;
          opt.iou = trial < 2 ? 0.5 : 0.7;
          opt.multi_label = multi;
          opt.agnostic = agnostic;
          opt.max_det = max_det;
          CAPTURE(trial);
          CAPTURE(multi);
          CAPTURE(agnostic);
          CAPTURE(max_det);
          const auto expected = loop_non_max_suppression(preds, opt);
          for (auto method : {NmsMethod::kHostScan, NmsMethod::kBitmask}) {
            const auto got = non_max_suppression(preds, opt, 0, method);
            REQUIRE(got.size() == expected.size());
            for (size_t b = 0; b < got.size(); ++b) {
              CAPTURE(b);
              CHECK(got[b].size(0) > 0);
              CHECK(torch::equal(got[b], expected[b]));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("batched NMS: max_nms keeps the best candidates, images without candidates") {
  torch::manual_seed(12);
  auto preds = random_head(2, 3, 200, 1000);
  preds.narrow(1, 4, 3).add_(torch::rand({2, 3, 200}) *
                             1e-3);  // distinct scores: no tie at the cut
  preds[1].narrow(0, 4, 3).zero_();  // image 1: nothing above conf
  PredictOptions opt;
  opt.conf = 0.05;
  opt.max_nms = 40;
  const auto expected = loop_non_max_suppression(preds, opt);
  for (auto method : {NmsMethod::kHostScan, NmsMethod::kBitmask}) {
    const auto got = non_max_suppression(preds, opt, 0, method);
    CHECK(torch::equal(got[0], expected[0]));
    CHECK(got[1].size(0) == 0);
    CHECK(got[1].size(1) == 6);
  }
  opt.conf = 2.0;  // no candidate anywhere
  const auto none = non_max_suppression(preds, opt);
  CHECK(none.size() == 2);
  CHECK(none[0].size(0) == 0);
}

TEST_CASE("greedy NMS: both methods equal the plain-loop oracle, ties by lower index") {
  torch::manual_seed(13);
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t n = 300;
    auto xy = torch::randint(0, 5, {n, 2}).to(torch::kFloat) * 20;
    auto boxes = torch::cat({xy, xy + torch::randint(5, 40, {n, 2}).to(torch::kFloat)}, 1);
    auto scores = torch::randint(0, 8, {n}).to(torch::kFloat);  // heavy ties
    for (double thr : {0.3, 0.7}) {
      const auto expected = oracle_nms(boxes, scores, thr);
      for (auto method : {NmsMethod::kHostScan, NmsMethod::kBitmask}) {
        CHECK(to_vector(nms(boxes, scores, thr, 0, method)) == expected);
        CHECK(to_vector(nms(boxes, scores, thr, 9, method)) ==
              std::vector<int64_t>(expected.begin(), expected.begin() + 9));
      }
      CHECK(to_vector(loop_nms(boxes, scores, thr, 0)) == expected);
    }
  }
}

TEST_CASE("suppression bitmask: bit k of byte w in row i is IoU(i, 8w + k) > threshold") {
  // Boxes 0 and 2 are the same; 1 is far; 9 boxes so the second byte is used.
  std::vector<float> v;
  for (int i = 0; i < 9; ++i) {
    const float o = (i == 1) ? 100.f : (i == 8 ? 0.5f : 0.f);
    v.insert(v.end(), {o, o, o + 10, o + 10});
  }
  const auto boxes = torch::tensor(v).view({1, 9, 4});
  const auto mask = suppression_bitmask(boxes, 0.5);
  REQUIRE(mask.sizes() == torch::IntArrayRef({1, 9, 2}));
  // Row 0 overlaps every box but 1 (8: IoU 90.25 / 109.75 = 0.82).
  CHECK(mask[0][0][0].item<int>() == 0xFD);
  CHECK(mask[0][0][1].item<int>() == 0x01);
  CHECK(mask[0][1][0].item<int>() == 0x02);
  CHECK(mask[0][1][1].item<int>() == 0x00);
}

TEST_CASE("top-k postprocess gathers the extra channels at the chosen anchors") {
  // 3 anchors, 2 classes, 2 extra channels: (B, A, 4 + 2 + 2).
  const auto preds = torch::tensor({0.f, 0.f, 1.f, 1.f, 0.1f, 0.2f, 10.f, 11.f,  //
                                    2.f, 2.f, 3.f, 3.f, 0.9f, 0.3f, 20.f, 21.f,  //
                                    4.f, 4.f, 5.f, 5.f, 0.4f, 0.8f, 30.f, 31.f})
                         .view({1, 3, 8});
  const auto top = topk_postprocess(preds, 2, 2);
  REQUIRE(top.sizes() == torch::IntArrayRef{1, 2, 8});
  // Best anchors by best score: 1 (0.9), 2 (0.8); then the top (anchor, class) pairs.
  CHECK(torch::equal(top[0][0], torch::tensor({2.f, 2.f, 3.f, 3.f, 0.9f, 0.f, 20.f, 21.f})));
  CHECK(torch::equal(top[0][1], torch::tensor({4.f, 4.f, 5.f, 5.f, 0.8f, 1.f, 30.f, 31.f})));
  // Without extra channels the rows are the detection rows.
  CHECK(torch::equal(topk_postprocess(preds.narrow(2, 0, 6), 2), top.narrow(2, 0, 6)));
}

TEST_CASE("NMS carries the extra channels along with their box") {
  // (B, 4 + 1 + 2, A): anchors 0 and 1 overlap (IoU 0.81), anchor 2 is apart.
  const auto rows = torch::tensor({0.f,  0.f,  10.f, 10.f, 0.6f, 1.f, 2.f,  //
                                   0.f,  0.f,  10.f, 9.f,  0.9f, 3.f, 4.f,  //
                                   20.f, 20.f, 30.f, 30.f, 0.5f, 5.f, 6.f})
                        .view({1, 3, 7})
                        .transpose(1, 2);
  PredictOptions opt;
  opt.conf = 0.25;
  const auto out = non_max_suppression(rows, opt, 2)[0];
  REQUIRE(out.sizes() == torch::IntArrayRef{2, 8});
  CHECK(torch::equal(out[0], torch::tensor({0.f, 0.f, 10.f, 9.f, 0.9f, 0.f, 3.f, 4.f})));
  CHECK(torch::equal(out[1], torch::tensor({20.f, 20.f, 30.f, 30.f, 0.5f, 0.f, 5.f, 6.f})));
  opt.conf = 0.95;
  CHECK(non_max_suppression(rows, opt, 2)[0].sizes() == torch::IntArrayRef{0, 8});
}
