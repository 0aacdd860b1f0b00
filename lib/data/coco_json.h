// The COCO annotation file (`instances_*.json`) as plain structs, plus the 91 <-> 80 category maps.
//
// Why: both the training dataset (boxes as normalised labels) and the evaluator (crowd regions,
// areas, ids exactly as pycocotools sees them) read the same file; one strict reader means one set
// of error messages, and no LibTorch or OpenCV is needed to read annotations.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainer::data {

struct CocoImage {
  int64_t id = 0;
  std::string file_name;
  int width = 0;
  int height = 0;
};

struct CocoAnnotation {
  int64_t id = 0;
  int64_t image_id = 0;
  int64_t category_id = 0;
  std::array<double, 4> bbox{};  // x, y, w, h in pixels (top-left origin)
  double area = 0.0;             // as stored in the file (the segmentation area for COCO)
  bool iscrowd = false;
  bool ignore = false;  // optional "ignore" flag (read, but pycocotools bbox eval uses iscrowd)
  // Person keypoints files: [x1, y1, v1, ...] and the count of labelled points (-1 when absent).
  std::vector<double> keypoints;
  int64_t num_keypoints = -1;
  // Oriented boxes (`trainer eval --iou-type obb`): [cx, cy, w, h, angle] from the entry's "rbox",
  // or the minimum-area rectangle of its "poly" (4 corners); empty when it has neither. Such an
  // entry may leave out "bbox" (then its corners' extent) and "area" (then w x h).
  std::vector<double> rbox;
};

struct CocoCategory {
  int64_t id = 0;
  std::string name;
  std::string supercategory;
};

struct CocoFile {
  std::filesystem::path source;
  std::vector<CocoImage> images;
  std::vector<CocoAnnotation> annotations;
  std::vector<CocoCategory> categories;
};

// Reads and checks a COCO annotation file. Throws core::InputError naming the file and the entry
// for: a missing/unreadable file, malformed json, a missing or mistyped required field, duplicate
// image/annotation/category ids, an annotation whose image_id or category_id is not declared, a
// negative box size, "keypoints" that are not numbers in triples. `annotations` may be absent (an
// image-info-only file, like test2017).
CocoFile read_coco_json(const std::filesystem::path& file);

// Parses the same from text (`source_name` is used in messages).
CocoFile parse_coco_json(const std::string& text, const std::string& source_name);

// The 80 COCO category ids (1..90 with gaps) in contiguous-class order: coco80_to_coco91()[c] is
// the id for class c. Matches the reference's `coco80_to_coco91_class`.
const std::array<int, 80>& coco80_to_coco91();

// Inverse map: class index 0..79 for a COCO id, or -1 for an id that is not one of the 80.
int coco91_to_coco80(int64_t category_id);

}  // namespace trainer::data
