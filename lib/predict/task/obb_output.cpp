// See obb_output.h.
// Tested by tests/predict/test_predict_output.cpp: OBB yolo_txt as 4 normalised corners + score,
//   COCO rbox/poly entry, polygon annotation.
#include "predict/task/obb_output.h"

#include <fmt/format.h>

#include <cmath>

#include "data/draw.h"
#include "data/letterbox_inverse.h"
#include "geometry/rotated_box.h"

namespace trainer::predict {
namespace {

geometry::RotatedBox rotated_box(const PredictedObject& object) {
  const auto& r = object.rbox;
  return {r[0], r[1], r[2], r[3], r[4]};
}

}  // namespace

void ObbOutput::fill_object(PredictedObject& object, const model::RowView& row,
                            const data::ImageGeometry& geometry) const {
  const auto b = row.box();  // cx, cy, w, h in input pixels
  const geometry::RotatedBox rbox =
      data::to_original_rbox({b[0], b[1], b[2], b[3], row.angle()}, geometry);
  object.rbox = {rbox.cx, rbox.cy, rbox.w, rbox.h, rbox.angle};
  const auto e = geometry::extent_xywh(rbox);
  object.box = {static_cast<float>(e[0]), static_cast<float>(e[1]), static_cast<float>(e[0] + e[2]),
                static_cast<float>(e[1] + e[3])};
}

void ObbOutput::draw_shape(cv::Mat& canvas, const PredictedObject& object, const std::string& label,
                           int line_width, double font_scale) const {
  if (object.rbox.size() != 5) {
    TaskOutput::draw_shape(canvas, object, label, line_width, font_scale);
    return;
  }
  std::vector<cv::Point> corners;
  for (const auto& c : geometry::corners(rotated_box(object))) {
    corners.emplace_back(static_cast<int>(std::lround(c.x)), static_cast<int>(std::lround(c.y)));
  }
  data::draw_labelled_polygon(canvas, corners, label, data::class_colour(object.cls), line_width,
                              font_scale);
}

std::optional<std::string> ObbOutput::txt_shape(const PredictedObject& object, float width,
                                                float height) const {
  if (object.rbox.size() != 5) return TaskOutput::txt_shape(object, width, height);
  std::string out;
  for (const auto& c : geometry::corners(rotated_box(object))) {
    out += fmt::format(" {:g} {:g}", static_cast<float>(c.x) / width,
                       static_cast<float>(c.y) / height);
  }
  return out;
}

void ObbOutput::fill_coco(const PredictedObject& object, eval::Detection& entry) const {
  if (object.rbox.size() != 5) return;
  entry.rbox = object.rbox;
  for (const auto& c : geometry::corners(rotated_box(object))) {
    entry.poly.insert(entry.poly.end(), {c.x, c.y});
  }
}

}  // namespace trainer::predict
