// See segment_output.h.
// Tested by tests/predict/test_predict_output.cpp: mask_outline row, RLE COCO entry with area,
//   tinted mask region in annotation.
#include "predict/task/segment_output.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <opencv2/imgproc.hpp>

#include "data/draw.h"
#include "data/letterbox_inverse.h"
#include "data/outline_merge.h"
#include "eval/rle.h"
#include "model/mask_ops.h"

namespace trainer::predict {

std::vector<double> mask_outline(const cv::Mat& mask) {
  std::vector<std::vector<cv::Point>> contours;
  cv::findContours(mask, contours, cv::RETR_EXTERNAL, cv::CHAIN_APPROX_SIMPLE);
  std::vector<std::vector<double>> parts;
  for (const auto& c : contours) {
    std::vector<double>& xy = parts.emplace_back();
    for (const auto& p : c) xy.insert(xy.end(), {double(p.x), double(p.y)});
  }
  if (parts.empty()) return {};
  return data::merge_outlines(parts);  // several contours joined, as masks2segments("all")
}

std::vector<PredictedObject> SegmentOutput::objects(const DecodedImage& image) const {
  at::Tensor input_masks = model::predicted_masks(
      image.protos, image.rows.narrow(1, model::kRowFixedColumns, image.layout.extra),
      image.rows.narrow(1, 0, 4), image.input_height, image.input_width, true);
  const at::Tensor keep = input_masks.flatten(1).amax(1).gt(0);
  DecodedImage kept = image;
  kept.rows = image.rows.index({keep});
  input_masks = input_masks.index({keep});
  std::vector<PredictedObject> out = TaskOutput::objects(kept);
  const at::Tensor masks =
      data::masks_to_original(input_masks, image.geometry).to(torch::kCPU).contiguous();
  const int height = image.geometry.original_height, width = image.geometry.original_width;
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].mask =
        cv::Mat(height, width, CV_8U, masks[static_cast<int64_t>(k)].data_ptr<uint8_t>()).clone();
  }
  return out;
}

void SegmentOutput::draw_under(cv::Mat& canvas, const PredictedObject& object) const {
  if (!object.mask.empty()) data::draw_mask(canvas, object.mask, data::class_colour(object.cls));
}

std::optional<std::string> SegmentOutput::txt_shape(const PredictedObject& object, float width,
                                                    float height) const {
  if (object.mask.empty()) return TaskOutput::txt_shape(object, width, height);
  const std::vector<double> outline = mask_outline(object.mask);
  if (outline.empty()) return std::nullopt;  // the reference skips a mask without a contour
  std::string out;
  for (size_t k = 0; k + 1 < outline.size(); k += 2) {
    out += fmt::format(" {:g} {:g}", static_cast<float>(outline[k]) / width,
                       static_cast<float>(outline[k + 1]) / height);
  }
  return out;
}

void SegmentOutput::fill_coco(const PredictedObject& object, eval::Detection& entry) const {
  if (!object.mask.empty()) {
    entry.segmentation = eval::rle_encode(object.mask.data, object.mask.rows, object.mask.cols);
  }
}

}  // namespace trainer::predict
