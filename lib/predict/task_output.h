// What one task adds to `trainer predict`'s output: its objects decoded from the model's rows,
// its drawing, its labels/*.txt columns and its COCO results fields.
//
// Why: the predictor, the annotated image, the txt rows and predictions.json are the same steps
// for every task; only what an object carries beyond its box (keypoints, a rotated box, a mask)
// differs. A task's output is one class in `predict/task/` and one line in make_task_output, so
// adding a task does not edit the predictor or the writers. The base class is detection: a box,
// a score and a class.
#pragma once

#include <ATen/core/Tensor.h>
#include <opencv2/core.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/task.h"
#include "data/batch.h"
#include "eval/coco_results.h"
#include "model/detection_rows.h"
#include "predict/predictor.h"

namespace trainer::model {
class YoloModelImpl;
}

namespace trainer::predict {

// One image's rows after the model's postprocess, and what maps them back to the original image.
struct DecodedImage {
  at::Tensor rows;  // (n, layout.width()) on the model's device, best first
  model::RowLayout layout;
  at::Tensor protos;  // this image's mask prototypes (segmentation models), else undefined
  int input_height{0}, input_width{0};  // the letterboxed input the model saw
  data::ImageGeometry geometry;         // input -> original pixels (input_to_original)
};

class TaskOutput {
 public:
  virtual ~TaskOutput() = default;

  // The image's objects in original-image pixels, in the rows' order.
  virtual std::vector<PredictedObject> objects(const DecodedImage& image) const;

  // `image` (BGR) with each object drawn: what lies under every box first (masks), then each
  // box (or its rotated box) with its label "name 0.87", then what lies over (keypoints);
  // lowest score first, so the best objects end on top.
  cv::Mat annotate(const cv::Mat& image, const ImagePrediction& prediction,
                   const std::vector<std::string>& names, int line_width) const;

  // The reference's Results.save_txt rows, one per object: the class, the task's shape columns
  // normalised by the original image (detection: xc yc w h), then the score when `save_conf`,
  // each number as %g. Empty when there is nothing to write.
  std::string yolo_txt(const ImagePrediction& prediction, int height, int width,
                       bool save_conf) const;

  // COCO results entries (bbox x, y, w, h in original pixels and the task's fields) with
  // `image_id` and category ids from `category_ids` (per class; class + 1 beyond them).
  std::vector<eval::Detection> coco_detections(const ImagePrediction& prediction, int64_t image_id,
                                               const std::vector<int64_t>& category_ids) const;

 protected:
  // One row's object: the box mapped back (scale_boxes), score, class, then fill_object.
  PredictedObject object_from_row(const model::RowView& row,
                                  const data::ImageGeometry& geometry) const;
  // What the task adds to an object from its row (the box is already mapped).
  virtual void fill_object(PredictedObject& /*object*/, const model::RowView& /*row*/,
                           const data::ImageGeometry& /*geometry*/) const {}

  virtual void draw_under(cv::Mat& /*canvas*/, const PredictedObject& /*object*/) const {}
  virtual void draw_shape(cv::Mat& canvas, const PredictedObject& object, const std::string& label,
                          int line_width, double font_scale) const;
  virtual void draw_over(cv::Mat& /*canvas*/, const PredictedObject& /*object*/,
                         int /*line_width*/) const {}

  // The txt columns between the class and the score (" 0.5 0.5 ..."); nullopt skips the object.
  virtual std::optional<std::string> txt_shape(const PredictedObject& object, float width,
                                               float height) const;
  // What the task adds to a COCO results entry.
  virtual void fill_coco(const PredictedObject& /*object*/, eval::Detection& /*entry*/) const {}
};

// The output of `task`.
std::unique_ptr<TaskOutput> make_task_output(core::Task task);
// The task a model's head predicts (its keypoints, rotated boxes or masks; else detect).
core::Task predicted_task(const model::YoloModelImpl& model);

}  // namespace trainer::predict
