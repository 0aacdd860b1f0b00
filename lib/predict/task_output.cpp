// See task_output.h. The base class is detection's output; the registry is at the bottom.
// Tested by tests/predict/test_predict_output.cpp: detect yolo_txt row by hand, COCO entries,
//   annotation on a copy, line width, output chosen from the model head.
#include "predict/task_output.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "data/draw.h"
#include "data/letterbox_inverse.h"
#include "model/yolo_model.h"
#include "predict/predict_output.h"
#include "predict/task/obb_output.h"
#include "predict/task/pose_output.h"
#include "predict/task/segment_output.h"

namespace trainer::predict {

std::vector<PredictedObject> TaskOutput::objects(const DecodedImage& image) const {
  const at::Tensor rows = image.rows.to(torch::kCPU, torch::kFloat).contiguous();
  const model::HostRows host{rows.data_ptr<float>(), rows.size(0), image.layout};
  std::vector<PredictedObject> out;
  out.reserve(static_cast<size_t>(host.count));
  for (int64_t k = 0; k < host.count; ++k) out.push_back(object_from_row(host[k], image.geometry));
  return out;
}

PredictedObject TaskOutput::object_from_row(const model::RowView& row,
                                            const data::ImageGeometry& geometry) const {
  PredictedObject object;
  object.box = data::to_original_xyxy(row.box(), geometry);
  object.score = row.score();
  object.cls = row.cls();
  fill_object(object, row, geometry);
  return object;
}

cv::Mat TaskOutput::annotate(const cv::Mat& image, const ImagePrediction& prediction,
                             const std::vector<std::string>& names, int line_width) const {
  cv::Mat canvas = image.clone();
  const int lw = annotation_line_width(image.rows, image.cols, line_width);
  const double font = lw / 3.0;
  std::vector<const PredictedObject*> order;
  for (const auto& o : prediction.objects) order.push_back(&o);
  std::reverse(order.begin(), order.end());
  for (const PredictedObject* o : order) draw_under(canvas, *o);
  for (const PredictedObject* o : order) {
    draw_shape(canvas, *o, fmt::format("{} {:.2f}", class_name(names, o->cls), o->score), lw, font);
  }
  for (const PredictedObject* o : order) draw_over(canvas, *o, lw);
  return canvas;
}

void TaskOutput::draw_shape(cv::Mat& canvas, const PredictedObject& object,
                            const std::string& label, int line_width, double font_scale) const {
  const cv::Point p1(static_cast<int>(object.box[0]), static_cast<int>(object.box[1]));
  const cv::Point p2(static_cast<int>(object.box[2]), static_cast<int>(object.box[3]));
  data::draw_labelled_box(canvas, p1, p2, label, data::class_colour(object.cls), line_width,
                          font_scale);
}

std::string TaskOutput::yolo_txt(const ImagePrediction& prediction, int height, int width,
                                 bool save_conf) const {
  std::string out;
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  for (const auto& o : prediction.objects) {
    const std::optional<std::string> shape = txt_shape(o, w, h);
    if (!shape) continue;
    out += std::to_string(o.cls);
    out += *shape;
    if (save_conf) out += fmt::format(" {:g}", o.score);
    out += "\n";
  }
  return out;
}

std::optional<std::string> TaskOutput::txt_shape(const PredictedObject& object, float width,
                                                 float height) const {
  // float32 arithmetic in the reference's order (xyxy2xywh, then / the original size), so %g
  // prints the same digits.
  const auto& b = object.box;
  return fmt::format(" {:g} {:g} {:g} {:g}", (b[0] + b[2]) / 2.0f / width,
                     (b[1] + b[3]) / 2.0f / height, (b[2] - b[0]) / width, (b[3] - b[1]) / height);
}

std::vector<eval::Detection> TaskOutput::coco_detections(
    const ImagePrediction& prediction, int64_t image_id,
    const std::vector<int64_t>& category_ids) const {
  std::vector<eval::Detection> out;
  for (const auto& o : prediction.objects) {
    eval::Detection d;
    d.image_id = image_id;
    d.category_id = o.cls >= 0 && o.cls < static_cast<int>(category_ids.size())
                        ? category_ids[static_cast<size_t>(o.cls)]
                        : o.cls + 1;
    d.bbox_xywh = {o.box[0], o.box[1], o.box[2] - o.box[0], o.box[3] - o.box[1]};
    d.score = o.score;
    fill_coco(o, d);
    out.push_back(std::move(d));
  }
  return out;
}

// --- the registry: one line per task
std::unique_ptr<TaskOutput> make_task_output(core::Task task) {
  switch (task) {
    case core::Task::kDetect:
      return std::make_unique<TaskOutput>();
    case core::Task::kPose:
      return std::make_unique<PoseOutput>();
    case core::Task::kSegment:
      return std::make_unique<SegmentOutput>();
    case core::Task::kObb:
      return std::make_unique<ObbOutput>();
  }
  throw std::logic_error(std::string("predict: task '") + core::task_name(task) +
                         "' has no TaskOutput in make_task_output");
}

core::Task predicted_task(const model::YoloModelImpl& model) {
  core::TaskHead head;
  head.keypoints = model.keypoint_shape().count > 0;
  head.oriented = model.oriented();
  head.masks = model.segments();
  const auto task = core::task_with_head(head);
  if (!task) throw std::logic_error("predict: a model head no task's row describes");
  return *task;
}

}  // namespace trainer::predict
