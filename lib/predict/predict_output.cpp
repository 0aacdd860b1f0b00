// See predict_output.h.
#include "predict/predict_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <opencv2/imgproc.hpp>

#include "data/augment/letterbox.h"
#include "data/draw.h"
#include "data/outline_merge.h"
#include "eval/rle.h"
#include "geometry/rotated_box.h"

namespace trainer::predict {
namespace {

std::string class_name(const std::vector<std::string>& names, int cls) {
  return cls >= 0 && cls < static_cast<int>(names.size()) ? names[cls] : std::to_string(cls);
}

}  // namespace

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

int annotation_line_width(int height, int width, int line_width) {
  if (line_width > 0) return line_width;
  // sum(im.shape) includes the 3 channels.
  return std::max(data::augment::round_half_even((height + width + 3) / 2.0 * 0.003), 2);
}

cv::Mat annotate(const cv::Mat& image, const ImagePrediction& prediction,
                 const std::vector<std::string>& names, int line_width) {
  cv::Mat canvas = image.clone();
  const int lw = annotation_line_width(image.rows, image.cols, line_width);
  const double font = lw / 3.0;
  // Lowest score first, so the best boxes end on top.
  std::vector<const PredictedObject*> order;
  for (const auto& o : prediction.objects) order.push_back(&o);
  std::reverse(order.begin(), order.end());
  for (const PredictedObject* o : order) {  // masks under every box
    if (!o->mask.empty()) data::draw_mask(canvas, o->mask, data::class_colour(o->cls));
  }
  for (const PredictedObject* o : order) {
    const cv::Point p1(static_cast<int>(o->box[0]), static_cast<int>(o->box[1]));
    const cv::Point p2(static_cast<int>(o->box[2]), static_cast<int>(o->box[3]));
    const std::string label = fmt::format("{} {:.2f}", class_name(names, o->cls), o->score);
    if (o->rbox.size() == 5) {
      std::vector<cv::Point> corners;
      for (const auto& c :
           geometry::corners({o->rbox[0], o->rbox[1], o->rbox[2], o->rbox[3], o->rbox[4]})) {
        corners.emplace_back(static_cast<int>(std::lround(c.x)),
                             static_cast<int>(std::lround(c.y)));
      }
      data::draw_labelled_polygon(canvas, corners, label, data::class_colour(o->cls), lw, font);
    } else {
      data::draw_labelled_box(canvas, p1, p2, label, data::class_colour(o->cls), lw, font);
    }
  }
  for (const PredictedObject* o : order) {
    if (o->keypoints.empty()) continue;
    data::draw_keypoints(canvas, o->keypoints.data(), static_cast<int>(o->keypoints.size() / 3),
                         cv::Point(0, 0), 1.0, 1.0, std::max(lw + 2, 3), 0.5f, std::max(lw - 1, 1));
  }
  return canvas;
}

std::string summary(const ImagePrediction& prediction, const std::vector<std::string>& names) {
  if (prediction.objects.empty()) return "(no detections), ";
  std::map<int, int> counts;
  for (const auto& o : prediction.objects) ++counts[o.cls];
  std::string out;
  for (const auto& [cls, n] : counts) {
    out += fmt::format("{} {}{}, ", n, class_name(names, cls), n > 1 ? "s" : "");
  }
  return out;
}

std::string yolo_txt(const ImagePrediction& prediction, int height, int width, bool save_conf) {
  std::string out;
  // float32 arithmetic in the reference's order (xyxy2xywh, then / the original size), so %g
  // prints the same digits.
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  for (const auto& o : prediction.objects) {
    const auto& b = o.box;
    if (o.rbox.size() == 5) {  // OBB: the 4 corners normalised, as the reference's xyxyxyxyn
      out += std::to_string(o.cls);
      for (const auto& c :
           geometry::corners({o.rbox[0], o.rbox[1], o.rbox[2], o.rbox[3], o.rbox[4]})) {
        out += fmt::format(" {:g} {:g}", static_cast<float>(c.x) / w, static_cast<float>(c.y) / h);
      }
      if (save_conf) out += fmt::format(" {:g}", o.score);
      out += "\n";
      continue;
    }
    if (!o.mask.empty()) {  // segmentation: the mask's outline normalised (masks.xyn)
      const std::vector<double> outline = mask_outline(o.mask);
      if (outline.empty()) continue;  // the reference skips a mask without a contour
      out += std::to_string(o.cls);
      for (size_t k = 0; k + 1 < outline.size(); k += 2) {
        out += fmt::format(" {:g} {:g}", static_cast<float>(outline[k]) / w,
                           static_cast<float>(outline[k + 1]) / h);
      }
      if (save_conf) out += fmt::format(" {:g}", o.score);
      out += "\n";
      continue;
    }
    out += fmt::format("{} {:g} {:g} {:g} {:g}", o.cls, (b[0] + b[2]) / 2.0f / w,
                       (b[1] + b[3]) / 2.0f / h, (b[2] - b[0]) / w, (b[3] - b[1]) / h);
    for (size_t k = 0; k + 2 < o.keypoints.size(); k += 3) {
      out += fmt::format(" {:g} {:g} {:g}", o.keypoints[k] / w, o.keypoints[k + 1] / h,
                         o.keypoints[k + 2]);
    }
    if (save_conf) out += fmt::format(" {:g}", o.score);
    out += "\n";
  }
  return out;
}

std::vector<eval::Detection> coco_detections(const ImagePrediction& prediction, int64_t image_id,
                                             const std::vector<int64_t>& category_ids) {
  std::vector<eval::Detection> out;
  for (const auto& o : prediction.objects) {
    eval::Detection d;
    d.image_id = image_id;
    d.category_id = o.cls >= 0 && o.cls < static_cast<int>(category_ids.size())
                        ? category_ids[static_cast<size_t>(o.cls)]
                        : o.cls + 1;
    d.bbox_xywh = {o.box[0], o.box[1], o.box[2] - o.box[0], o.box[3] - o.box[1]};
    d.score = o.score;
    d.keypoints.assign(o.keypoints.begin(), o.keypoints.end());
    if (!o.mask.empty()) d.segmentation = eval::rle_encode(o.mask.data, o.mask.rows, o.mask.cols);
    if (o.rbox.size() == 5) {
      d.rbox = o.rbox;
      for (const auto& c :
           geometry::corners({o.rbox[0], o.rbox[1], o.rbox[2], o.rbox[3], o.rbox[4]})) {
        d.poly.insert(d.poly.end(), {c.x, c.y});
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

int64_t image_id_for(const std::filesystem::path& file, int64_t fallback) {
  const std::string stem = file.stem().string();
  if (stem.empty() || stem.size() > 18 ||
      !std::all_of(stem.begin(), stem.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return fallback;
  }
  return std::stoll(stem);
}

}  // namespace trainer::predict
