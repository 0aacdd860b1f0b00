// See pose_output.h.
// Tested by tests/predict/test_predict_output.cpp: pose yolo_txt appends x/W, y/H, conf per
//   keypoint (keypoints mapped back in test_cli_predict pose case).
#include "predict/task/pose_output.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/draw.h"
#include "data/letterbox_inverse.h"

namespace trainer::predict {

void PoseOutput::fill_object(PredictedObject& object, const model::RowView& row,
                             const data::ImageGeometry& geometry) const {
  const model::KeypointShape kpt = row.layout().keypoints;
  for (int64_t p = 0; p < kpt.count; ++p) {
    const float* point = row.keypoint(p);
    const auto xy = data::to_original_point(point[0], point[1], geometry);
    object.keypoints.insert(object.keypoints.end(),
                            {xy[0], xy[1], kpt.dims == 3 ? point[2] : 1.0f});
  }
}

void PoseOutput::draw_over(cv::Mat& canvas, const PredictedObject& object, int line_width) const {
  if (object.keypoints.empty()) return;
  data::draw_keypoints(canvas, object.keypoints.data(),
                       static_cast<int>(object.keypoints.size() / 3), cv::Point(0, 0), 1.0, 1.0,
                       std::max(line_width + 2, 3), 0.5f, std::max(line_width - 1, 1));
}

std::optional<std::string> PoseOutput::txt_shape(const PredictedObject& object, float width,
                                                 float height) const {
  std::string out = *TaskOutput::txt_shape(object, width, height);
  const auto& k = object.keypoints;
  for (size_t i = 0; i + 2 < k.size(); i += 3) {
    out += fmt::format(" {:g} {:g} {:g}", k[i] / width, k[i + 1] / height, k[i + 2]);
  }
  return out;
}

void PoseOutput::fill_coco(const PredictedObject& object, eval::Detection& entry) const {
  entry.keypoints.assign(object.keypoints.begin(), object.keypoints.end());
}

}  // namespace trainer::predict
