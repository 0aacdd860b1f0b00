// Pose predictions: each object's K keypoints, drawn over the boxes (joined by the skeleton),
// written after the box in the txt rows and as COCO `keypoints`.
#pragma once

#include "predict/task_output.h"

namespace trainer::predict {

class PoseOutput : public TaskOutput {
 protected:
  // K x (x, y, confidence) in original pixels; confidence 1 when the model predicts no
  // visibility (dims 2).
  void fill_object(PredictedObject& object, const model::RowView& row,
                   const data::ImageGeometry& geometry) const override;
  // Keypoints with confidence > 0.5, as the reference's annotator.
  void draw_over(cv::Mat& canvas, const PredictedObject& object, int line_width) const override;
  // The box, then each keypoint as x / W, y / H, confidence.
  std::optional<std::string> txt_shape(const PredictedObject& object, float width,
                                       float height) const override;
  void fill_coco(const PredictedObject& object, eval::Detection& entry) const override;
};

}  // namespace trainer::predict
