// The predictor's geometry by hand (the reference's LetterBox(auto=True) and scale_boxes without
// ratio_pad) and a run of a tiny random model: input shapes, boxes inside the original image,
// keypoints for pose.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "data/augment/letterbox.h"
#include "model/fuse.h"
#include "model/yolo_model.h"
#include "predict/predictor.h"

using namespace trainer;

TEST_CASE("predictor: the minimal letterbox pads to the next multiple of the stride") {
  // 427 x 640 at 640: no resize, 21 rows of padding split 10 / 11.
  auto g = data::augment::minimal_letterbox_geometry(427, 640, 640, 32);
  CHECK(g.ratio == doctest::Approx(1.0));
  CHECK(g.out_height == 448);
  CHECK(g.out_width == 640);
  CHECK(g.top == 10);
  CHECK(g.bottom == 11);
  CHECK(g.left == 0);
  // 1080 x 1920 at 640: r = 1/3, 360 x 640, already a multiple of 32 in width, 360 -> 384.
  g = data::augment::minimal_letterbox_geometry(1080, 1920, 640, 32);
  CHECK(g.resized_height == 360);
  CHECK(g.resized_width == 640);
  CHECK(g.out_height == 384);
  CHECK(g.top == 12);
  CHECK(g.bottom == 12);
  // Upscaled: 100 x 50 at 320 -> r 3.2, 320 x 160.
  g = data::augment::minimal_letterbox_geometry(100, 50, 320, 32);
  CHECK(g.resized_height == 320);
  CHECK(g.resized_width == 160);
  CHECK(g.out_width == 160);
}

TEST_CASE("predictor: input pixels back to the original by the reference's rule") {
  // 448 x 640 input of a 427 x 640 image: gain 1, pad_y round(10.5 - 0.1) = 10.
  auto g = predict::input_to_original(448, 640, 427, 640);
  CHECK(g.gain_x == doctest::Approx(1.0));
  CHECK(g.gain_y == doctest::Approx(1.0));
  CHECK(g.pad_x == 0);
  CHECK(g.pad_y == 10);
  // 384 x 640 input of 1080 x 1920: gain 1/3, 360 rows, pad 12; per-axis gains 360/1080, 640/1920.
  g = predict::input_to_original(384, 640, 1080, 1920);
  CHECK(g.gain_y == doctest::Approx(1.0 / 3));
  CHECK(g.gain_x == doctest::Approx(1.0 / 3));
  CHECK(g.pad_y == 12);
}

namespace {

std::vector<cv::Mat> random_images(const std::vector<cv::Size>& sizes) {
  std::vector<cv::Mat> out;
  cv::RNG rng(1);
  for (const auto& s : sizes) {
    cv::Mat m(s, CV_8UC3);
    rng.fill(m, cv::RNG::UNIFORM, 0, 255);
    out.push_back(m);
  }
  return out;
}

void check_inside(const predict::ImagePrediction& p, const cv::Mat& image) {
  for (const auto& o : p.objects) {
    for (int k = 0; k < 4; k += 2) {
      CHECK(o.box[k] >= 0);
      CHECK(o.box[k] <= image.cols);
      CHECK(o.box[k + 1] >= 0);
      CHECK(o.box[k + 1] <= image.rows);
    }
  }
}

}  // namespace

TEST_CASE("predictor: a tiny detector on a batch of one shape, then of mixed shapes") {
  torch::manual_seed(0);
  auto source = model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 3);
  auto fused = model::fused_copy(*source);
  predict::PredictOptions options;
  options.imgsz = 128;
  options.conf = 0.0;  // a random model: keep something to check
  options.max_det = 20;
  predict::Predictor predictor(*fused, options, c10::Device(c10::kCPU));
  predict::Timing timing;
  auto images = random_images({{100, 60}, {100, 60}});  // width 100, height 60
  auto out = predictor.run(images, timing);
  REQUIRE(out.size() == 2);
  CHECK(out[0].input_height == 96);  // 60 * 1.28 = 76.8 -> 77, padded to 96
  CHECK(out[0].input_width == 128);
  CHECK(out[0].objects.size() == 20);
  for (size_t i = 0; i < out.size(); ++i) check_inside(out[i], images[i]);
  CHECK(timing.inference_ms > 0);

  images = random_images({{100, 60}, {50, 80}});
  out = predictor.run(images, timing);
  CHECK(out[1].input_height == 128);  // mixed shapes: square imgsz
  CHECK(out[1].input_width == 128);
  for (size_t i = 0; i < out.size(); ++i) check_inside(out[i], images[i]);
  for (const auto& o : out[0].objects) CHECK(o.keypoints.empty());
}

TEST_CASE("predictor: a pose model gives K keypoints per object") {
  torch::manual_seed(0);
  auto source =
      model::build_tiny_yolo_model(model::ModelFamily::kYolo11, 1, core::Task::kPose, {5, 3});
  auto fused = model::fused_copy(*source);
  predict::PredictOptions options;
  options.imgsz = 96;
  options.conf = 0.0;
  options.max_det = 5;
  predict::Predictor predictor(*fused, options, c10::Device(c10::kCPU));
  predict::Timing timing;
  const auto images = random_images({{64, 80}});
  const auto out = predictor.run(images, timing);
  REQUIRE(out[0].objects.size() == 5);
  for (const auto& o : out[0].objects) {
    REQUIRE(o.keypoints.size() == 15);
    for (size_t k = 0; k < 15; k += 3) {
      CHECK(o.keypoints[k] >= 0);
      CHECK(o.keypoints[k] <= 64);
      CHECK(o.keypoints[k + 2] >= 0);
      CHECK(o.keypoints[k + 2] <= 1);
    }
  }
}
