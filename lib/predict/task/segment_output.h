// Segmentation predictions: each object's instance mask at the original image's size, drawn as a
// tint under the boxes, written as its outline in the txt rows and as a COCO RLE `segmentation`.
#pragma once

#include "predict/task_output.h"

namespace trainer::predict {

// A mask's outline in its pixels, x1 y1 x2 y2 ...: its external contours (OpenCV, simple chain)
// joined into one as the reference's masks2segments does; empty when the mask is empty.
std::vector<double> mask_outline(const cv::Mat& mask);

class SegmentOutput : public TaskOutput {
 public:
  // The reference's process_mask with upsample (logits upsampled to the input, > 0, cropped to
  // the box), then the letterbox window resized to the original (CV_8U 0/1); objects whose mask
  // is empty are dropped, as the reference's predictor drops them.
  std::vector<PredictedObject> objects(const DecodedImage& image) const override;

 protected:
  void draw_under(cv::Mat& canvas, const PredictedObject& object) const override;
  // The mask's outline normalised (masks.xyn); a mask without a contour writes no row.
  std::optional<std::string> txt_shape(const PredictedObject& object, float width,
                                       float height) const override;
  void fill_coco(const PredictedObject& object, eval::Detection& entry) const override;
};

}  // namespace trainer::predict
