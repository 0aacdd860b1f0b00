// See validation_truth.h.
#include "engine/validation_truth.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "data/coco_dataset.h"
#include "engine/run_dataset.h"

namespace trainer::engine {
namespace {

std::array<float, 4> to_pixels_xyxy(const data::NormBox& b, int width, int height) {
  const float cx = b[0] * width, cy = b[1] * height, w = b[2] * width, h = b[3] * height;
  return {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
}

std::vector<int64_t> category_ids_of(const std::optional<data::CocoFile>& json, int nc) {
  std::vector<int64_t> ids;
  if (!json) {
    for (int c = 0; c < nc; ++c) ids.push_back(nc == 80 ? data::coco80_to_coco91()[c] : c + 1);
    return ids;
  }
  const auto map = data::coco_class_map(*json, nc);
  const int64_t known = static_cast<int64_t>(map.ids.size());
  const int64_t next_free = map.ids.empty() ? 1 : map.ids.back() + 1;
  for (int c = 0; c < nc; ++c) {
    if (map.coco91) {
      ids.push_back(data::coco80_to_coco91()[c]);
    } else if (c < known) {
      ids.push_back(map.ids[static_cast<size_t>(c)]);
    } else {  // a class the json has no category for: an unused id (it has no ground truth)
      ids.push_back(next_free + (c - known));
    }
  }
  if (!map.coco91 && known < nc) {
    spdlog::warn(
        "{}: {} categories for the dataset's {} classes; classes {}..{} have no ground truth "
        "there and get ids {}..{} in predictions.json",
        json->source.string(), known, nc, known, nc - 1, next_free, next_free + nc - 1 - known);
  }
  return ids;
}

// The json's annotations of the split's images; classes the json has no category for get theirs
// here, without ground truth: their detections then count as pycocotools counts those of any
// category without ground truth (not at all), instead of being refused as unknown ids.
data::CocoFile json_truth(const data::CocoFile& json, const data::DatasetIndex& val_set,
                          const std::vector<int64_t>& category_ids,
                          const std::set<int64_t>& image_ids) {
  data::CocoFile truth;
  truth.source = json.source;
  truth.categories = json.categories;
  std::set<int64_t> json_ids;
  for (const auto& category : json.categories) json_ids.insert(category.id);
  for (size_t c = 0; c < category_ids.size(); ++c) {
    if (!json_ids.count(category_ids[c])) {
      truth.categories.push_back({category_ids[c], val_set.names[c], ""});
    }
  }
  for (const auto& image : json.images) {
    if (image_ids.count(image.id)) truth.images.push_back(image);
  }
  for (const auto& a : json.annotations) {
    if (image_ids.count(a.image_id)) truth.annotations.push_back(a);
  }
  return truth;
}

// Built from the labels: box areas, crowd boxes kept aside by the dataset.
data::CocoFile label_truth(const data::DatasetIndex& val_set,
                           const std::vector<int64_t>& category_ids,
                           const std::vector<int64_t>& image_ids) {
  data::CocoFile truth;
  truth.source = val_set.source;
  for (size_t c = 0; c < category_ids.size(); ++c) {
    truth.categories.push_back({category_ids[c], val_set.names[c], ""});
  }
  int64_t annotation_id = 1;
  const size_t k_values = static_cast<size_t>(val_set.keypoints_per_box) * 3;
  for (size_t i = 0; i < val_set.size(); ++i) {
    const auto& item = val_set.items[i];
    truth.images.push_back({image_ids[i], item.image.filename().string(), item.width, item.height});
    auto add = [&](const data::NormBox& b, int cls, bool crowd, const float* points,
                   const std::vector<float>* outline) {
      const auto xyxy = to_pixels_xyxy(b, item.width, item.height);
      data::CocoAnnotation a;
      a.id = annotation_id++;
      a.image_id = image_ids[i];
      a.category_id = category_ids.at(static_cast<size_t>(cls));
      a.bbox = {xyxy[0], xyxy[1], xyxy[2] - xyxy[0], xyxy[3] - xyxy[1]};
      a.area = a.bbox[2] * a.bbox[3];
      a.iscrowd = crowd;
      if (outline && outline->size() >= 6) {
        // Segmentation: the outline in original pixels; its area (shoelace) as COCO's "area".
        std::vector<double> polygon;
        for (size_t v = 0; v + 1 < outline->size(); v += 2) {
          polygon.push_back((*outline)[v] * item.width);
          polygon.push_back((*outline)[v + 1] * item.height);
        }
        double twice = 0;
        for (size_t v = 0; v < polygon.size(); v += 2) {
          const size_t next = (v + 2) % polygon.size();
          twice += polygon[v] * polygon[next + 1] - polygon[next] * polygon[v + 1];
        }
        a.area = std::abs(twice) / 2;
        a.segmentation.polygons = {std::move(polygon)};
      }
      if (k_values > 0) {  // pose: the points in original pixels, as a person_keypoints file
        a.num_keypoints = 0;
        for (size_t v = 0; v < k_values; v += 3) {
          const double visibility = points ? points[v + 2] : 0.0;
          a.keypoints.push_back(points ? points[v] * item.width : 0.0);
          a.keypoints.push_back(points ? points[v + 1] * item.height : 0.0);
          a.keypoints.push_back(visibility);
          if (visibility > 0) ++a.num_keypoints;
        }
      }
      truth.annotations.push_back(a);
    };
    const bool has_points = k_values > 0 && item.keypoints.size() == item.boxes.size() * k_values;
    const bool has_outlines = item.segments.size() == item.boxes.size() &&
                              val_set.polygons == data::PolygonKind::kOutlines;
    for (size_t k = 0; k < item.boxes.size(); ++k) {
      add(item.boxes[k], item.classes[k], false,
          has_points ? item.keypoints.data() + k * k_values : nullptr,
          has_outlines ? &item.segments[k] : nullptr);
    }
    for (size_t k = 0; k < item.crowd_boxes.size(); ++k) {
      add(item.crowd_boxes[k], item.crowd_classes[k], true, nullptr, nullptr);
    }
  }
  return truth;
}

}  // namespace

ValidationTruth build_validation_truth(const data::DatasetIndex& val_set,
                                       const data::DatasetSpec& spec,
                                       const core::TrainConfig& config) {
  ValidationTruth truth;
  std::optional<data::CocoFile> json;
  // Under classes/single_cls the json holds other labels than the ones scored: ground truth from
  // the selected labels instead.
  if (spec.val_json && !selects_labels(config)) {
    json = data::read_coco_json(spec.root / *spec.val_json);
  }
  truth.category_ids = category_ids_of(json, val_set.nc());
  std::set<int64_t> seen;
  bool stems_usable = true;
  for (const auto& item : val_set.items) {
    if (item.coco_image_id < 0 || !seen.insert(item.coco_image_id).second) stems_usable = false;
  }
  for (size_t i = 0; i < val_set.size(); ++i) {
    truth.image_ids.push_back(stems_usable ? val_set.items[i].coco_image_id
                                           : static_cast<int64_t>(i));
  }
  truth.coco = json && stems_usable ? json_truth(*json, val_set, truth.category_ids, seen)
                                    : label_truth(val_set, truth.category_ids, truth.image_ids);
  return truth;
}

data::CocoFile coco_truth_of_images(const data::CocoFile& truth,
                                    const std::set<int64_t>& image_ids) {
  data::CocoFile out = truth;
  auto& images = out.images;
  images.erase(std::remove_if(images.begin(), images.end(),
                              [&](const data::CocoImage& im) { return !image_ids.count(im.id); }),
               images.end());
  auto& annotations = out.annotations;
  annotations.erase(
      std::remove_if(annotations.begin(), annotations.end(),
                     [&](const data::CocoAnnotation& a) { return !image_ids.count(a.image_id); }),
      annotations.end());
  return out;
}

std::vector<LetterboxedTruth> letterboxed_truth(const at::Tensor& labels, int64_t batch_size,
                                                float width, float height,
                                                const at::Tensor& keypoints,
                                                const at::Tensor& rboxes) {
  std::vector<LetterboxedTruth> out(static_cast<size_t>(batch_size));
  const at::Tensor rows = labels.to(at::kCPU, at::kFloat).contiguous();
  const bool oriented = rboxes.defined() && rboxes.dim() == 2 && rboxes.size(1) == 5;
  if (oriented && rboxes.size(0) != rows.size(0)) {
    throw std::logic_error("letterboxed_truth: rotated boxes and labels have different rows");
  }
  const at::Tensor rotated = oriented ? rboxes.to(at::kCPU, at::kFloat).contiguous() : at::Tensor();
  const float* rb = oriented ? rotated.data_ptr<float>() : nullptr;
  const bool pose = keypoints.defined() && keypoints.dim() == 3 && keypoints.size(1) > 0;
  if (pose && keypoints.size(0) != rows.size(0)) {
    throw std::logic_error("letterboxed_truth: keypoints and labels have different rows");
  }
  const at::Tensor points = pose ? keypoints.to(at::kCPU, at::kFloat).contiguous() : at::Tensor();
  const int64_t k_values = pose ? keypoints.size(1) * 3 : 0;
  const float* r = rows.data_ptr<float>();
  const float* p = pose ? points.data_ptr<float>() : nullptr;
  for (int64_t k = 0; k < rows.size(0); ++k, r += 6) {
    const auto image = static_cast<size_t>(r[0]);
    if (image >= out.size()) throw std::logic_error("letterboxed_truth: label row past the batch");
    const float cx = r[2] * width, cy = r[3] * height, w = r[4] * width, h = r[5] * height;
    out[image].boxes.push_back({cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2});
    out[image].classes.push_back(static_cast<int>(r[1]));
    if (rb) {
      const float* q = rb + 5 * k;
      out[image].rboxes.push_back(
          {q[0] * width, q[1] * height, q[2] * width, q[3] * height, static_cast<double>(q[4])});
    }
    for (int64_t v = 0; v < k_values; v += 3) {
      const float* point = p + k * k_values + v;
      out[image].keypoints.insert(out[image].keypoints.end(),
                                  {point[0] * width, point[1] * height, point[2]});
    }
  }
  return out;
}

}  // namespace trainer::engine
