// Keypoint decode (reference-tasks.md 2.5) on hand-computed values for both rules, and the pose
// rows of the model's two postprocess paths: NMS carrying the keypoints along with their box, and
// the end-to-end top-k gathering them at the chosen anchors.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "model/pose_head.h"
#include "model/yolo_model.h"

using namespace trainer;
using namespace trainer::model;

namespace {

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

// Two keypoints (x, y, v) at two anchors: cell centres (0.5, 0.5) at stride 8 and (1.5, 0.5) at
// stride 16. raw[0][3k + d][a].
torch::Tensor raw_keypoints() {
  return torch::tensor({1.0f, 0.0f,    // k1 x
                        -0.5f, 0.0f,   // k1 y
                        0.0f, -1.0f,   // k1 v
                        0.25f, -1.0f,  // k2 x
                        2.0f, 0.5f,    // k2 y
                        2.0f, 1.0f})   // k2 v
      .view({1, 6, 2});
}
const torch::Tensor kPoints = torch::tensor({0.5f, 0.5f, 1.5f, 0.5f}).view({2, 2});
const torch::Tensor kStrides = torch::tensor({8.0f, 16.0f}).view({2, 1});

}  // namespace

TEST_CASE("Pose26 keypoint decode: (raw + anchor) * stride, v = sigmoid") {
  const auto y =
      decode_keypoints(raw_keypoints(), kPoints, kStrides, {2, 3}, PoseHeadKind::kPose26);
  const auto expected = torch::tensor({12.0f, 24.0f,                   //
                                       0.0f, 8.0f,                     //
                                       sigmoid(0.0f), sigmoid(-1.0f),  //
                                       6.0f, 8.0f,                     //
                                       20.0f, 16.0f,                   //
                                       sigmoid(2.0f), sigmoid(1.0f)})
                            .view({1, 6, 2});
  CHECK(torch::allclose(y, expected));
}

TEST_CASE("Pose (YOLO11) keypoint decode: (2 raw + anchor - 0.5) * stride, v = sigmoid") {
  const auto y = decode_keypoints(raw_keypoints(), kPoints, kStrides, {2, 3}, PoseHeadKind::kPose);
  const auto expected = torch::tensor({16.0f, 16.0f,                   //
                                       -8.0f, 0.0f,                    //
                                       sigmoid(0.0f), sigmoid(-1.0f),  //
                                       4.0f, -16.0f,                   //
                                       32.0f, 16.0f,                   //
                                       sigmoid(2.0f), sigmoid(1.0f)})
                            .view({1, 6, 2});
  CHECK(torch::allclose(y, expected));
}

TEST_CASE("keypoint decode with ndim 2: x and y only, no sigmoid") {
  const auto raw = torch::tensor({1.0f, 0.0f, -0.5f, 0.0f}).view({1, 2, 2});
  const auto y = decode_keypoints(raw, kPoints, kStrides, {1, 2}, PoseHeadKind::kPose26);
  CHECK(torch::allclose(y, torch::tensor({12.0f, 24.0f, 0.0f, 8.0f}).view({1, 2, 2})));
}

TEST_CASE("pose predict: (n, 6 + K * ndim) rows through NMS and the end-to-end top-k") {
  torch::manual_seed(1);
  for (const auto family : {ModelFamily::kYolo26, ModelFamily::kYolo11}) {
    auto model = build_tiny_yolo_model(family, 2, core::Task::kPose);
    model->eval();
    const auto images = torch::rand({2, 3, 64, 64});
    torch::NoGradGuard no_grad;
    const auto raw = model->forward_for_loss(images);
    for (const bool one2many : {true, false}) {
      if (!one2many && family == ModelFamily::kYolo11) continue;
      CAPTURE(one2many);
      PredictOptions opt;
      opt.conf = 0.0;
      opt.use_one2many = one2many;
      const auto out = model->predict(images, opt);
      REQUIRE(out.size() == 2);
      const bool o2o = family == ModelFamily::kYolo26 && !one2many;
      const auto decoded = model->head()->decode_output(raw, o2o);  // (B, 4 + 2 + 51, A)
      REQUIRE(decoded.size(1) == 57);
      for (int64_t b = 0; b < 2; ++b) {
        REQUIRE(out[b].size(1) == 57);
        REQUIRE(out[b].size(0) > 0);
        // Each row's keypoints are the decode's at the anchor of its box.
        for (int64_t r = 0; r < std::min<int64_t>(out[b].size(0), 5); ++r) {
          const auto box = out[b][r].slice(0, 0, 4);
          const auto same = (decoded[b].slice(0, 0, 4).t() == box).all(1).nonzero();
          REQUIRE(same.size(0) >= 1);
          const int64_t a = same[0][0].item<int64_t>();
          CHECK(torch::equal(out[b][r].slice(0, 6), decoded[b].slice(0, 6).select(1, a)));
        }
      }
    }
  }
  // The detection model still returns 6 columns.
  auto det = build_tiny_yolo_model(ModelFamily::kYolo26, 2);
  PredictOptions opt;
  opt.conf = 0.0;
  CHECK(det->predict(torch::rand({1, 3, 64, 64}), opt)[0].size(1) == 6);
}

TEST_CASE("pose predict_topk: (B, min(300, A), 6 + K * ndim)") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 2, core::Task::kPose, {4, 2});
  const auto top = model->predict_topk(torch::rand({1, 3, 64, 64}), 300);
  CHECK(top.sizes() == torch::IntArrayRef{1, 84, 14});  // A = 64 + 16 + 4
}
