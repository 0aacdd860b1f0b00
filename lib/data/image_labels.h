// One split of a dataset as the loader and the evaluator see it: images, their sizes and labels.
//
// Why: YOLO txt labels and COCO json both end up as the same per-image record (boxes normalised
// cx, cy, w, h in [0, 1], classes 0..nc-1, original width and height), so the loader, the label
// cache and the evaluator's ground truth have one format. COCO crowd boxes are kept aside: never
// trained on, but the evaluator needs them to ignore matches.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainer::data {

using NormBox = std::array<float, 4>;  // cx, cy, w, h normalised by the image width and height

// What the label rows' polygons are, when a task keeps them.
enum class PolygonKind {
  kNone,           // boxes only (polygon rows become their enclosing boxes)
  kOrientedBoxes,  // OBB: each polygon is an oriented box (DOTA's 4 corners)
  kOutlines,       // segmentation: object outlines
};

struct ImageLabels {
  std::filesystem::path image;
  std::vector<int> classes;
  std::vector<NormBox> boxes;
  // Pose: K points per box, each (x, y) normalised like the boxes and a visibility 0/1/2,
  // box-major (size = boxes * K * 3); empty for the other tasks.
  std::vector<float> keypoints;
  // OBB and segmentation: each box's polygon, x1 y1 x2 y2 ... normalised like the boxes (the box
  // is its enclosing rectangle); empty for the other tasks.
  std::vector<std::vector<float>> segments;
  int width = 0;  // original pixels
  int height = 0;
  int64_t coco_image_id = -1;      // the json id, or the numeric file stem (000000000009.jpg -> 9)
  std::vector<int> crowd_classes;  // COCO iscrowd annotations (evaluation only)
  std::vector<NormBox> crowd_boxes;
};

struct DatasetStats {
  int64_t images = 0;          // usable images (backgrounds included)
  int64_t backgrounds = 0;     // usable images without boxes (missing or empty label file)
  int64_t corrupt = 0;         // images skipped: unreadable image or label file that cannot be used
  int64_t missing_labels = 0;  // no label file (or no json annotation)
  int64_t empty_labels = 0;    // an empty label file
  int64_t boxes = 0;
  int64_t duplicates = 0;             // duplicate label rows removed
  int64_t crowd = 0;                  // COCO crowd boxes kept aside
  std::vector<std::string> problems;  // one message per problem, naming the file (and line)
};

struct DatasetIndex {
  std::vector<ImageLabels> items;
  std::vector<std::string> names;
  DatasetStats stats;
  std::string source;         // the split's folders or json, for messages
  bool from_cache = false;    // the parsed labels came from the label cache
  int keypoints_per_box = 0;  // pose: K of the dataset's kpt_shape (0 otherwise)
  std::vector<int> flip_idx;  // pose: the dataset's flip_idx (empty when it has none)
  PolygonKind polygons = PolygonKind::kNone;  // kNone, or every item carries segments

  int nc() const { return static_cast<int>(names.size()); }
  size_t size() const { return items.size(); }
};

// "N images, M backgrounds, K corrupt" (plus duplicates and crowd boxes when non-zero).
std::string summary_line(const DatasetStats& stats);

// The numeric stem of a file name (COCO's 000000000009.jpg -> 9), or -1.
int64_t numeric_stem(const std::filesystem::path& file);

}  // namespace trainer::data
