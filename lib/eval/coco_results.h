// Detections in the COCO results form: a json list of {image_id, category_id, bbox, score}.
//
// Why: the results file is what users hand to pycocotools (and what `trainer val` writes), so the
// evaluator reads exactly that form, and rejects entries pycocotools would silently drop or choke
// on (unknown ids, NaN scores) with a message naming the entry.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/coco_json.h"

namespace trainer::eval {

struct Detection {
  int64_t image_id = 0;
  int64_t category_id = 0;
  std::array<double, 4> bbox_xywh{};  // x, y, w, h in pixels (top-left origin)
  double score = 0.0;
  std::vector<double> keypoints{};  // [x1, y1, s1, ...] for keypoint results; empty otherwise
  // OBB results (the reference's OBB json): [cx, cy, w, h, angle] and the 4 corners
  // [x1, y1, ..., x4, y4], original pixels; empty otherwise. bbox_xywh is then the corners' extent.
  std::vector<double> rbox{};
  std::vector<double> poly{};
  // Written by the validator (not part of the COCO form): the image's file and the class index.
  std::string file_name{};
  int class_index = -1;
};

// Parses a results file's text. Throws core::InputError naming `source` and the entry (its index
// and image id) for: malformed json, a top level that is not a list, a missing or mistyped field
// ("bbox" may be left out when "keypoints" are given: the box is then the keypoints' extent, as
// pycocotools' loadRes makes it),
// a NaN or infinite score or coordinate, an image_id that is not in
// `ground_truth`, a category_id that is not one of its categories. Extra fields are ignored.
std::vector<Detection> parse_coco_results(const std::string& text, const std::string& source,
                                          const data::CocoFile& ground_truth);

// Reads and parses a results file (see parse_coco_results).
std::vector<Detection> read_coco_results(const std::filesystem::path& file,
                                         const data::CocoFile& ground_truth);

// The same checks for detections built in memory (`source` names them in messages).
void check_detections(const std::vector<Detection>& detections, const data::CocoFile& ground_truth,
                      const std::string& source);

// The results form as the reference writes predictions.json: bbox rounded to 3 decimals, score to
// 5, one detection per line.
std::string format_coco_results(const std::vector<Detection>& detections);

}  // namespace trainer::eval
