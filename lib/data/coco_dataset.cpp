// COCO json to per-image labels; see coco_dataset.h.
// Tested by tests/data/test_coco_json.cpp: coco_to_labels: keypoints normalised, bad annotations
//   skipped with id, detection reading.
#include "data/coco_dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "core/ascii_case.h"
#include "core/error.h"
#include "data/outline_merge.h"

namespace trainer::data {
namespace {

// A normalised coordinate as the reference's converter writes it to a label file ("%g": six
// significant digits) and reads it back (float32), negatives clipped to 0 as the txt reader does.
float label_coordinate(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return std::max(std::strtof(text, nullptr), 0.0f);
}

// The training outline of an annotation (normalised x1 y1 x2 y2 ...), as the reference's
// convert_coco(use_segments=True) makes it: its polygons of 3 or more points, joined into one when
// there are several; none usable (no polygons, an RLE mask): the json box's corners (`used_box`).
std::vector<float> annotation_outline(const CocoAnnotation& a, double w, double h, bool* used_box) {
  std::vector<std::vector<double>> usable;
  for (const auto& p : a.segmentation.polygons) {
    if (p.size() >= 6 && p.size() % 2 == 0) usable.push_back(p);
  }
  std::vector<double> pixels;
  *used_box = usable.empty();
  if (usable.empty()) {
    const double x1 = a.bbox[0], y1 = a.bbox[1], x2 = x1 + a.bbox[2], y2 = y1 + a.bbox[3];
    pixels = {x1, y1, x2, y1, x2, y2, x1, y2};
  } else {
    pixels = merge_outlines(usable);
  }
  std::vector<float> out(pixels.size());
  for (size_t k = 0; k < pixels.size(); ++k) {
    out[k] = label_coordinate(pixels[k] / (k % 2 == 0 ? w : h));
  }
  return out;
}

// The box of an outline: its extent (the txt reader's rule for polygon rows).
NormBox outline_box(const std::vector<float>& xy) {
  float x1 = 1, y1 = 1, x2 = 0, y2 = 0;
  for (size_t k = 0; k + 1 < xy.size(); k += 2) {
    x1 = std::min(x1, xy[k]), x2 = std::max(x2, xy[k]);
    y1 = std::min(y1, xy[k + 1]), y2 = std::max(y2, xy[k + 1]);
  }
  return {(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1};
}

}  // namespace

int CocoClassMap::to_class(int64_t category_id) const {
  if (coco91) return coco91_to_coco80(category_id);
  const auto it = std::lower_bound(ids.begin(), ids.end(), category_id);
  return it != ids.end() && *it == category_id ? static_cast<int>(it - ids.begin()) : -1;
}

std::filesystem::path coco_image_path(const std::filesystem::path& images_dir,
                                      const CocoImage& image) {
  return (images_dir / image.file_name).lexically_normal();
}

CocoClassMap coco_class_map(const CocoFile& coco, int nc) {
  CocoClassMap map;
  for (const auto& c : coco.categories) map.ids.push_back(c.id);
  if (map.ids.empty()) {  // no "categories": use the ids the annotations mention
    for (const auto& a : coco.annotations) map.ids.push_back(a.category_id);
  }
  std::sort(map.ids.begin(), map.ids.end());
  map.ids.erase(std::unique(map.ids.begin(), map.ids.end()), map.ids.end());
  const bool all_coco = std::all_of(map.ids.begin(), map.ids.end(),
                                    [](int64_t id) { return coco91_to_coco80(id) >= 0; });
  if (nc == 80 && all_coco) {
    map.coco91 = true;
    return map;
  }
  if (static_cast<int>(map.ids.size()) > nc) {
    throw core::InputError(fmt::format("{}: {} categories but the dataset yaml names {} classes",
                                       coco.source.string(), map.ids.size(), nc));
  }
  return map;
}

namespace {

std::string comparable_name(const std::string& name) {
  const size_t begin = name.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = name.find_last_not_of(" \t");
  return core::ascii_lowercase(std::string_view(name).substr(begin, end - begin + 1));
}

}  // namespace

void check_category_names(const CocoFile& coco, const CocoClassMap& map,
                          const std::vector<std::string>& names) {
  constexpr size_t kRowsShown = 20;
  std::vector<std::string> rows;
  size_t compared = 0;
  for (const CocoCategory& category : coco.categories) {
    const int cls = map.to_class(category.id);
    if (cls < 0 || cls >= static_cast<int>(names.size()) || category.name.empty()) continue;
    // A yaml whose names are the class indices ("0", "1", ...) names nothing to compare.
    if (names[static_cast<size_t>(cls)] == std::to_string(cls)) continue;
    ++compared;
    if (comparable_name(category.name) == comparable_name(names[static_cast<size_t>(cls)])) {
      continue;
    }
    rows.push_back(fmt::format("  class {:>3}: yaml '{}' | json category id {} '{}'", cls,
                               names[static_cast<size_t>(cls)], category.id, category.name));
  }
  if (rows.empty()) return;
  std::string message = fmt::format(
      "{}: the categories' names do not match the dataset yaml's names for {} of {} classes "
      "(a box would train under the wrong name); make the yaml's names list the categories in the "
      "order of their ids:",
      coco.source.string(), rows.size(), compared);
  for (size_t i = 0; i < rows.size() && i < kRowsShown; ++i) message += "\n" + rows[i];
  if (rows.size() > kRowsShown)
    message += fmt::format("\n  ... and {} more", rows.size() - kRowsShown);
  throw core::InputError(message);
}

std::string describe_class_map(const CocoFile& coco, const CocoClassMap& map,
                               const std::vector<std::string>& names) {
  std::string text;
  for (const CocoCategory& category : coco.categories) {
    const int cls = map.to_class(category.id);
    if (!text.empty()) text += ", ";
    if (cls < 0 || cls >= static_cast<int>(names.size())) {
      text += fmt::format("{} -> none", category.id);
    } else {
      text += fmt::format("{} -> {} ({})", category.id, cls, names[static_cast<size_t>(cls)]);
    }
  }
  return text;
}

std::vector<ImageLabels> coco_to_labels(const CocoFile& coco, const std::filesystem::path& dir,
                                        int nc, DatasetStats& stats, int keypoints_per_box,
                                        bool outlines) {
  int64_t box_outlines = 0;
  const size_t k_values = static_cast<size_t>(std::max(keypoints_per_box, 0)) * 3;
  const CocoClassMap map = coco_class_map(coco, nc);
  std::unordered_map<int64_t, size_t> slot;
  std::vector<ImageLabels> out(coco.images.size());
  for (size_t i = 0; i < coco.images.size(); ++i) {
    const CocoImage& im = coco.images[i];
    out[i].image = coco_image_path(dir, im);
    out[i].width = im.width;
    out[i].height = im.height;
    out[i].coco_image_id = im.id;
    slot[im.id] = i;
  }
  const std::string source = coco.source.string();
  for (const CocoAnnotation& a : coco.annotations) {
    ImageLabels& item = out[slot.at(a.image_id)];
    const int cls = map.to_class(a.category_id);
    if (cls < 0) {
      stats.problems.push_back(
          fmt::format("{}: annotation id {}: category {} is not one of the "
                      "dataset's classes, skipped",
                      source, a.id, a.category_id));
      continue;
    }
    if (a.bbox[2] <= 0 || a.bbox[3] <= 0) continue;  // the reference skips these silently
    const double w = item.width, h = item.height;
    if (w <= 0 || h <= 0) continue;
    if (k_values > 0 && !a.iscrowd && !a.keypoints.empty() && a.keypoints.size() != k_values) {
      stats.problems.push_back(fmt::format(
          "{}: annotation id {}: {} keypoint values, kpt_shape needs {} (x, y, v per point), "
          "skipped",
          source, a.id, a.keypoints.size(), k_values));
      continue;
    }
    bool bad_point = false;
    for (size_t v = 0; k_values > 0 && v + 2 < a.keypoints.size(); v += 3) {
      const double vis = a.keypoints[v + 2];
      bad_point = bad_point || !std::isfinite(a.keypoints[v]) ||
                  !std::isfinite(a.keypoints[v + 1]) || !(vis == 0 || vis == 1 || vis == 2);
    }
    if (bad_point) {
      stats.problems.push_back(
          fmt::format("{}: annotation id {}: a keypoint with a non-finite coordinate or a "
                      "visibility outside 0/1/2, skipped",
                      source, a.id));
      continue;
    }
    const double x1 = std::clamp(a.bbox[0], 0.0, w), y1 = std::clamp(a.bbox[1], 0.0, h);
    const double x2 = std::clamp(a.bbox[0] + a.bbox[2], 0.0, w);
    const double y2 = std::clamp(a.bbox[1] + a.bbox[3], 0.0, h);
    NormBox box = {static_cast<float>((x1 + x2) / 2 / w), static_cast<float>((y1 + y2) / 2 / h),
                   static_cast<float>((x2 - x1) / w), static_cast<float>((y2 - y1) / h)};
    if (a.iscrowd) {
      item.crowd_classes.push_back(cls);
      item.crowd_boxes.push_back(box);
      ++stats.crowd;
      continue;
    }
    std::vector<float> outline;
    if (outlines) {
      bool used_box = false;
      outline = annotation_outline(a, w, h, &used_box);
      box_outlines += used_box;
      box = outline_box(outline);
    }
    bool duplicate = false;
    for (size_t k = 0; k < item.boxes.size() && !duplicate; ++k) {
      duplicate =
          item.classes[k] == cls && (outlines ? item.segments[k] == outline : item.boxes[k] == box);
    }
    if (duplicate) {
      ++stats.duplicates;
      continue;
    }
    item.classes.push_back(cls);
    item.boxes.push_back(box);
    if (outlines) item.segments.push_back(std::move(outline));
    if (k_values > 0) {
      // As the reference's COCO converter: x / width, y / height, visibility kept; unlabelled
      // points (v = 0) stay at (0, 0, 0).
      for (size_t v = 0; v < k_values; v += 3) {
        const bool labelled = !a.keypoints.empty();
        item.keypoints.push_back(labelled ? static_cast<float>(a.keypoints[v] / w) : 0.0f);
        item.keypoints.push_back(labelled ? static_cast<float>(a.keypoints[v + 1] / h) : 0.0f);
        item.keypoints.push_back(labelled ? static_cast<float>(a.keypoints[v + 2]) : 0.0f);
      }
    }
  }
  if (box_outlines > 0) {
    stats.problems.push_back(fmt::format(
        "{}: {} annotations have no polygon of 3 or more points (no segmentation, an empty one, or "
        "an RLE mask) and train with their box as the outline",
        source, box_outlines));
  }
  std::sort(out.begin(), out.end(),
            [](const ImageLabels& a, const ImageLabels& b) { return a.image < b.image; });
  return out;
}

}  // namespace trainer::data
