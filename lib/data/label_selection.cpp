// See label_selection.h.
#include "data/label_selection.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace trainer::data {
namespace {

bool kept(const std::vector<int>& classes, int cls) {
  return classes.empty() || std::find(classes.begin(), classes.end(), cls) != classes.end();
}

// Removes the boxes (and their keypoints and polygons) whose class is not kept; single_cls maps
// the rest to 0.
void select_image(ImageLabels& item, const LabelSelection& selection, size_t keypoint_values) {
  const bool polygons = !item.segments.empty();
  size_t out = 0;
  for (size_t j = 0; j < item.classes.size(); ++j) {
    if (!kept(selection.classes, item.classes[j])) continue;
    item.classes[out] = selection.single_cls ? 0 : item.classes[j];
    item.boxes[out] = item.boxes[j];
    if (keypoint_values > 0) {
      std::copy_n(item.keypoints.begin() + static_cast<std::ptrdiff_t>(j * keypoint_values),
                  keypoint_values,
                  item.keypoints.begin() + static_cast<std::ptrdiff_t>(out * keypoint_values));
    }
    if (polygons && out != j) item.segments[out] = std::move(item.segments[j]);
    ++out;
  }
  item.classes.resize(out);
  item.boxes.resize(out);
  if (polygons) item.segments.resize(out);
  if (keypoint_values > 0) item.keypoints.resize(out * keypoint_values);
  size_t crowd = 0;
  for (size_t j = 0; j < item.crowd_classes.size(); ++j) {
    if (!kept(selection.classes, item.crowd_classes[j])) continue;
    item.crowd_classes[crowd] = selection.single_cls ? 0 : item.crowd_classes[j];
    item.crowd_boxes[crowd] = item.crowd_boxes[j];
    ++crowd;
  }
  item.crowd_classes.resize(crowd);
  item.crowd_boxes.resize(crowd);
}

}  // namespace

std::vector<int> parse_class_list(const std::string& classes, int nc) {
  std::vector<int> out;
  if (classes.empty()) return out;
  std::string text = classes;
  std::replace(text.begin(), text.end(), '[', ' ');
  std::replace(text.begin(), text.end(), ']', ' ');
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream in(text);
  long long id = 0;
  while (in >> id) {
    if (id < 0 || id >= nc) {
      throw core::ConfigError(fmt::format(
          "classes: class {} does not exist (the dataset has classes 0..{})", id, nc - 1));
    }
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(static_cast<int>(id));
  }
  if (!in.eof()) throw core::ConfigError("classes: expected an integer or a list of integers");
  return out;
}

void select_labels(DatasetIndex& split, const LabelSelection& selection) {
  if (selection.classes.empty() && !selection.single_cls) return;
  const size_t keypoint_values = static_cast<size_t>(split.keypoints_per_box) * 3;
  int64_t boxes = 0, backgrounds = 0, crowd = 0;
  for (auto& item : split.items) {
    select_image(item, selection, keypoint_values);
    boxes += static_cast<int64_t>(item.boxes.size());
    crowd += static_cast<int64_t>(item.crowd_boxes.size());
    backgrounds += item.boxes.empty() ? 1 : 0;
  }
  split.stats.boxes = boxes;
  split.stats.backgrounds = backgrounds;
  split.stats.crowd = crowd;
  split.names = selected_names(split.names, selection.single_cls);
}

std::vector<std::string> selected_names(const std::vector<std::string>& names, bool single_cls) {
  return single_cls ? std::vector<std::string>{"item"} : names;
}

size_t fraction_count(size_t images, double fraction) {
  if (!(fraction > 0.0)) {
    throw core::ConfigError(
        fmt::format("fraction: {} selects no image; use a ratio in (0, 1] or "
                    "an image count",
                    fraction));
  }
  if (fraction <= 1.0) {
    // Python's round(): halves go to the even neighbour (nearbyint in the default rounding mode).
    const auto count = static_cast<size_t>(std::nearbyint(static_cast<double>(images) * fraction));
    return std::min(images, std::max<size_t>(1, count));
  }
  if (fraction != std::floor(fraction)) {
    throw core::ConfigError(fmt::format(
        "fraction: {} is neither a ratio in (0, 1] nor a whole number of images", fraction));
  }
  return std::min(images, static_cast<size_t>(fraction));
}

void take_fraction(DatasetIndex& split, double fraction) {
  const size_t total = split.items.size();
  const size_t count = fraction_count(total, fraction);
  if (count == total) return;
  split.items.resize(count);
  int64_t boxes = 0, backgrounds = 0;
  for (const auto& item : split.items) {
    boxes += static_cast<int64_t>(item.boxes.size());
    backgrounds += item.boxes.empty() ? 1 : 0;
  }
  split.stats.images = static_cast<int64_t>(count);
  split.stats.boxes = boxes;
  split.stats.backgrounds = backgrounds;
  spdlog::info("fraction={:g}: training on the first {} of {} images", fraction, count, total);
}

}  // namespace trainer::data
