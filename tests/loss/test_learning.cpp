// The learning test: a tiny-width model overfits one fixed batch of coco8 with plain SGD, so the
// loss (assigner, every term, gradients through both heads) is shown to drive learning, in fp32
// and under BF16 autocast, with every gradient finite at every step.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <opencv2/imgproc.hpp>
#include <sstream>

#include "core/autocast_guard.h"
#include "data/image_io.h"
#include "loss/yolo_loss.h"
#include "model/yolo_model.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace trainer;

namespace {

constexpr int kImgsz = 160;  // 5 x 5 to 20 x 20 grids: enough objects, fast on a CPU
constexpr int kMaxSteps = 60;
constexpr double kLr = 0.02;

struct FixedBatch {
  torch::Tensor images;  // (B, 3, S, S) float in [0, 1]
  torch::Tensor labels;  // (n, 6) [image, class, cx, cy, w, h] normalised to the letterboxed image
};

// Letterbox like the reference: scale to fit, centre, pad with grey 114; labels follow.
FixedBatch load_coco8_train(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(root / "images" / "train")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<torch::Tensor> images;
  std::vector<float> rows;
  for (size_t i = 0; i < files.size(); ++i) {
    cv::Mat bgr = data::read_image_bgr(files[i]);
    REQUIRE_MESSAGE(!bgr.empty(), files[i].string());
    const double r = std::min(double(kImgsz) / bgr.rows, double(kImgsz) / bgr.cols);
    const int nw = static_cast<int>(std::lround(bgr.cols * r));
    const int nh = static_cast<int>(std::lround(bgr.rows * r));
    const double dw = (kImgsz - nw) / 2.0, dh = (kImgsz - nh) / 2.0;
    const int left = static_cast<int>(std::lround(dw - 0.1)),
              top = static_cast<int>(std::lround(dh - 0.1));
    cv::Mat resized, padded, rgb;
    cv::resize(bgr, resized, cv::Size(nw, nh), 0, 0, cv::INTER_LINEAR);
    cv::copyMakeBorder(resized, padded, top, kImgsz - nh - top, left, kImgsz - nw - left,
                       cv::BORDER_CONSTANT, cv::Scalar(114, 114, 114));
    cv::cvtColor(padded, rgb, cv::COLOR_BGR2RGB);
    images.push_back(torch::from_blob(rgb.data, {kImgsz, kImgsz, 3}, torch::kUInt8)
                         .permute({2, 0, 1})
                         .to(torch::kFloat)
                         .div(255.0));
    std::ifstream in(root / "labels" / "train" / (files[i].stem().string() + ".txt"));
    float c, x, y, w, h;
    while (in >> c >> x >> y >> w >> h) {
      rows.insert(rows.end(), {float(i), c, float((x * bgr.cols * r + left) / kImgsz),
                               float((y * bgr.rows * r + top) / kImgsz),
                               float(w * bgr.cols * r / kImgsz), float(h * bgr.rows * r / kImgsz)});
    }
  }
  return {torch::stack(images), torch::tensor(rows).view({-1, 6})};
}

struct Trajectory {
  std::vector<double> losses;
  bool all_finite = true;
};

// Plain SGD with momentum on one batch until the loss halves or `max_steps` pass.
Trajectory overfit(model::ModelFamily family, const FixedBatch& batch, bool bf16, int max_steps,
                   double lr) {
  // One intra-op thread: the trajectory is then deterministic, and on a loaded 2-core machine
  // OpenMP workers spinning at barriers cost 10x the wall time.
  const int threads = torch::get_num_threads();
  torch::set_num_threads(1);
  torch::manual_seed(0);
  auto net = model::build_tiny_yolo_model(family, 80);
  net->train();
  loss::YoloLoss criterion(net->num_classes(), net->reg_max(), net->strides(), loss::LossGains{},
                           net->end2end());
  std::vector<torch::Tensor> params;
  for (const auto& p : net->parameters())
    if (p.requires_grad()) params.push_back(p);
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(lr).momentum(0.9).nesterov(true));
  const int64_t b = batch.images.size(0);
  Trajectory t;
  for (int step = 0; step < max_steps; ++step) {
    sgd.zero_grad();
    loss::LossResult r;
    {
      core::AutocastGuard guard(torch::kCPU, torch::kBFloat16, bf16);
      r = criterion(net->forward_for_loss(batch.images), batch.labels, b);
    }
    r.total.backward();
    for (const auto& p : params)
      if (p.grad().defined() && !torch::isfinite(p.grad()).all().item<bool>()) t.all_finite = false;
    t.losses.push_back(r.total.item<double>());
    if (!std::isfinite(t.losses.back()) || t.losses.back() <= t.losses.front() / 2) break;
    sgd.step();
  }
  torch::set_num_threads(threads);
  return t;
}

void check_learns(model::ModelFamily family, bool bf16, int max_steps, double lr) {
  TRAINER_SKIP_IF_NO_SHARED_DATA(root, "coco8");
  const auto batch = load_coco8_train(*root);
  REQUIRE(batch.images.size(0) == 4);
  const auto t = overfit(family, batch, bf16, max_steps, lr);
  std::ostringstream msg;
  msg << (bf16 ? "bf16" : "fp32") << ": loss " << t.losses.front() << " -> " << t.losses.back()
      << " in " << t.losses.size() - 1 << " steps";
  MESSAGE(msg.str());
  CHECK(t.all_finite);
  CHECK(t.losses.back() <= t.losses.front() / 2);
}

}  // namespace

TEST_CASE("learning: tiny YOLO26 halves its loss on a coco8 batch in fp32") {
  check_learns(model::ModelFamily::kYolo26, false, kMaxSteps, kLr);
}

TEST_CASE("learning: tiny YOLO26 halves its loss on a coco8 batch under BF16 autocast") {
  check_learns(model::ModelFamily::kYolo26, true, kMaxSteps, kLr);
}

TEST_CASE("learning: tiny YOLO11 (DFL) halves its loss on a coco8 batch in fp32") {
  check_learns(model::ModelFamily::kYolo11, false, kMaxSteps, kLr);
}
