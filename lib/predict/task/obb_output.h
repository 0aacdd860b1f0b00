// Oriented-box predictions: each object's rotated box [cx, cy, w, h, angle] (its `box` is the
// corners' extent), drawn as a polygon, written as its 4 normalised corners in the txt rows and as
// COCO results `rbox` and `poly`.
#pragma once

#include "predict/task_output.h"

namespace trainer::predict {

class ObbOutput : public TaskOutput {
 protected:
  // The row's [cx, cy, w, h] and angle mapped back as scale_boxes(xywh) does.
  void fill_object(PredictedObject& object, const model::RowView& row,
                   const data::ImageGeometry& geometry) const override;
  void draw_shape(cv::Mat& canvas, const PredictedObject& object, const std::string& label,
                  int line_width, double font_scale) const override;
  // The reference's xyxyxyxyn: 4 corners, x / W, y / H.
  std::optional<std::string> txt_shape(const PredictedObject& object, float width,
                                       float height) const override;
  void fill_coco(const PredictedObject& object, eval::Detection& entry) const override;
};

}  // namespace trainer::predict
