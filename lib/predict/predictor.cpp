// See predictor.h.
#include "predict/predictor.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>

#include "core/autocast_guard.h"
#include "data/augment/letterbox.h"
#include "data/letterbox_inverse.h"
#include "data/loader.h"
#include "engine/device/device.h"
#include "predict/task_output.h"

namespace trainer::predict {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

}  // namespace

data::ImageGeometry input_to_original(int input_height, int input_width, int original_height,
                                      int original_width) {
  using data::augment::round_half_even;
  const double gain = std::min(static_cast<double>(input_height) / original_height,
                               static_cast<double>(input_width) / original_width);
  const int new_h = std::max(round_half_even(original_height * gain), 1);
  const int new_w = std::max(round_half_even(original_width * gain), 1);
  data::ImageGeometry g;
  g.original_height = original_height;
  g.original_width = original_width;
  g.gain_x = static_cast<double>(new_w) / original_width;
  g.gain_y = static_cast<double>(new_h) / original_height;
  g.pad_x = round_half_even((input_width - new_w) / 2.0 - 0.1);
  g.pad_y = round_half_even((input_height - new_h) / 2.0 - 0.1);
  return g;
}

Predictor::Predictor(model::YoloModelImpl& model, const PredictOptions& options, c10::Device device)
    : model_(model), device_(device), imgsz_(options.imgsz), half_(options.half) {
  postprocess_.conf = options.conf;
  postprocess_.iou = options.iou;
  postprocess_.max_det = options.max_det;
  postprocess_.multi_label = false;  // the reference predictor: one label per box
  postprocess_.agnostic = options.agnostic_nms;
  // 8.4.190 predicts YOLO26 on the one-to-many head with NMS unless nms=false.
  postprocess_.use_one2many = options.nms != NmsChoice::kOff;
  const auto& strides = model.strides();
  stride_ = std::max(32, static_cast<int>(*std::max_element(strides.begin(), strides.end())));
  layout_ = model.row_layout();
  output_ = make_task_output(predicted_task(model));
  // The reference's check_imgsz: a size that is not a multiple of the stride is rounded up.
  const int rounded = (imgsz_ + stride_ - 1) / stride_ * stride_;
  if (rounded != imgsz_) {
    spdlog::warn("imgsz={} is not a multiple of the stride {}; using {}", imgsz_, stride_, rounded);
    imgsz_ = rounded;
  }
}

Predictor::~Predictor() = default;

std::vector<ImagePrediction> Predictor::run(const std::vector<cv::Mat>& images, Timing& timing) {
  namespace augment = data::augment;
  std::vector<ImagePrediction> out(images.size());
  if (images.empty()) return out;
  torch::InferenceMode inference;

  // --- preprocess: the reference's LetterBox, minimal padding when every image has one shape
  auto t0 = Clock::now();
  bool same_shape = true;
  for (const auto& im : images) same_shape = same_shape && im.size() == images[0].size();
  std::vector<augment::LetterboxGeometry> geometry;
  for (const auto& im : images) {
    geometry.push_back(same_shape
                           ? augment::minimal_letterbox_geometry(im.rows, im.cols, imgsz_, stride_)
                           : augment::letterbox_geometry(im.rows, im.cols, imgsz_, imgsz_, true));
  }
  const int height = geometry[0].out_height, width = geometry[0].out_width;
  const auto batch = static_cast<int64_t>(images.size());
  torch::Tensor pixels = torch::empty({batch, height, width, 3}, torch::kUInt8);
  for (size_t i = 0; i < images.size(); ++i) {
    augment::Sample sample;
    sample.image = images[i];
    const augment::Sample boxed = augment::letterbox(sample, geometry[i]);
    cv::Mat dst(height, width, CV_8UC3, pixels[static_cast<int64_t>(i)].data_ptr<uint8_t>());
    cv::cvtColor(boxed.image, dst, cv::COLOR_BGR2RGB);
  }
  const torch::Tensor input =
      data::images_to_device(pixels.permute({0, 3, 1, 2}), device_, torch::kFloat);
  engine::synchronize(device_);
  timing.preprocess_ms += elapsed_ms(t0);

  // --- inference
  t0 = Clock::now();
  model::DetectOutput raw;
  {
    core::AutocastGuard autocast(device_.type(), at::kBFloat16, half_ && device_.is_cuda());
    raw = model_.forward_for_loss(input);
  }
  engine::synchronize(device_);
  timing.inference_ms += elapsed_ms(t0);

  // --- postprocess: the validation's decode, then original-image pixels
  t0 = Clock::now();
  const std::vector<at::Tensor> per_image = model_.postprocess(raw, postprocess_);
  for (size_t i = 0; i < per_image.size(); ++i) {
    DecodedImage image;
    image.rows = per_image[i];
    image.layout = layout_;
    if (!raw.protos.empty() && raw.protos.front().defined())
      image.protos = raw.protos.front()[static_cast<int64_t>(i)];
    image.input_height = height;
    image.input_width = width;
    image.geometry = input_to_original(height, width, images[i].rows, images[i].cols);
    out[i].input_height = height;
    out[i].input_width = width;
    out[i].objects = output_->objects(image);
  }
  timing.postprocess_ms += elapsed_ms(t0);
  return out;
}

}  // namespace trainer::predict
