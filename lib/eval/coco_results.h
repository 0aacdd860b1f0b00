// Detections in the COCO results form: a json list of {image_id, category_id, bbox, score} (plus
// "segmentation" for mask results, "keypoints" for pose, "rbox"/"poly" for OBB).
//
// Why: the results file is what users hand to pycocotools (and what `trainer val` writes), so the
// evaluator reads exactly that form, and rejects entries pycocotools would silently drop or choke
// on (unknown ids, NaN scores) with a message naming the entry.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data/coco_json.h"
#include "eval/rle.h"

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
  // Mask results: the mask as COCO RLE (in files {"size": [h, w], "counts": "<compressed>"});
  // std::nullopt for box, keypoint and OBB results.
  std::optional<Rle> segmentation{};
  // How pycocotools' loadRes sizes a mask result for the area ranges: true when the results
  // file's first entry has no "bbox" (loadRes' segmentation branch: the mask's area), false (the
  // default, and every entry of a file whose first entry has a "bbox", as the reference writes
  // them) for the box's w x h, mask or not.
  bool area_from_mask = false;
  // Written by the validator (not part of the COCO form): the image's file and the class index.
  std::string file_name{};
  int class_index = -1;
};

// Parses a results file's text. Throws core::InputError naming `source` and the entry (its index
// and image id) for: malformed json, a top level that is not a list, a missing or mistyped field
// ("bbox" may be left out when "keypoints" are given: the box is then the keypoints' extent, as
// pycocotools' loadRes makes it; or when a "segmentation" is given: the mask's pycocotools
// toBbox), a malformed "segmentation" (data::parse_coco_segmentation; polygons are rasterised in
// the image's size as annToRLE does), a NaN or infinite score or coordinate, an image_id that is
// not in `ground_truth`, a category_id that is not one of its categories. Extra fields are
// ignored.
std::vector<Detection> parse_coco_results(const std::string& text, const std::string& source,
                                          const data::CocoFile& ground_truth);

// Reads and parses a results file (see parse_coco_results).
std::vector<Detection> read_coco_results(const std::filesystem::path& file,
                                         const data::CocoFile& ground_truth);

// The same checks for detections built in memory (`source` names them in messages); a mask must
// have counts that cover its height x width.
void check_detections(const std::vector<Detection>& detections, const data::CocoFile& ground_truth,
                      const std::string& source);

// What a results file holds beyond the reference's fields. `file_name`: every entry's file_name
// (trainer predict: which source and frame an image_id is); the reference's OBB json has it anyway.
struct ResultsFields {
  bool file_name = false;
};

// The results form as the reference writes predictions.json: bbox rounded to 3 decimals, score to
// 5, a mask as {"size": [h, w], "counts": "<compressed RLE>"}, one detection per line.
std::string format_coco_results(const std::vector<Detection>& detections,
                                const ResultsFields& fields = {});

// format_coco_results() written to `file` atomically (predictions.json).
void write_coco_results(const std::vector<Detection>& detections, const std::filesystem::path& file,
                        const ResultsFields& fields = {});

}  // namespace trainer::eval
