// The COCO annotation file (`instances_*.json`) as plain structs, plus the 91 <-> 80 category maps.
//
// Why: both the training dataset (boxes as normalised labels) and the evaluator (crowd regions,
// areas, ids exactly as pycocotools sees them) read the same file; one strict reader means one set
// of error messages, and no LibTorch or OpenCV is needed to read annotations.
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trainer::data {

struct CocoImage {
  int64_t id = 0;
  std::string file_name;
  int width = 0;
  int height = 0;
};

// A COCO run-length-encoded mask as the file stores it: "size" [height, width] and "counts",
// either a list of run lengths (uncompressed, as COCO's crowd regions are) or pycocotools'
// compressed string. Runs are column-major, background first (see eval/rle.h).
struct CocoRle {
  int height = 0;
  int width = 0;
  std::vector<uint32_t> counts{};  // uncompressed form; empty when `compressed` is set
  std::string compressed{};        // compressed form ('0'..'o'); empty when `counts` is set
};

// An annotation's (or a result's) "segmentation": polygons, or one RLE, or neither when the entry
// has none (or an empty list). Plain data as in the file; eval/coco_masks.h turns it into the mask
// pycocotools' annToRLE makes (the polygons' union).
struct CocoSegmentation {
  // Polygons of one object (several when it is split by an occluder), each [x1, y1, x2, y2, ...]
  // in pixels of the image (top-left corner of the image at 0, 0). Each has an even number of
  // values and at least 2 points; COCO itself has a few 2-point ones (4 values), which pycocotools
  // reads as boxes [x, y, w, h] when the first polygon is one, and which span no area otherwise.
  // Empty polygons (`[[]]`, as box-only converters write) are dropped when reading.
  std::vector<std::vector<double>> polygons{};
  std::optional<CocoRle> rle{};  // "segmentation": {"size": [h, w], "counts": ...}
  bool empty() const { return polygons.empty() && !rle; }
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
  // "segmentation" (instances files; `trainer eval --iou-type segm`, segmentation training).
  CocoSegmentation segmentation{};
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

// Reads one "segmentation" value: a list of polygons (an empty list: none) or an RLE object.
// Throws std::invalid_argument saying what is wrong (the caller names the file and the entry): a
// polygon that is not a list of numbers, has an odd count or 1 point; an RLE without a "size" of
// two non-negative integers, or whose "counts" is neither a list of non-negative 32-bit integers
// adding up to height x width nor a string of '0'..'o'.
CocoSegmentation parse_coco_segmentation(const nlohmann::json& value);

// Reads and checks a COCO annotation file. Throws core::InputError naming the file and the entry
// for: a missing/unreadable file, malformed json, a missing or mistyped required field, duplicate
// image/annotation/category ids, an annotation whose image_id or category_id is not declared, a
// negative box size, "keypoints" that are not numbers in triples, a malformed "segmentation" (see
// parse_coco_segmentation). `annotations` may be absent (an image-info-only file, like test2017).
CocoFile read_coco_json(const std::filesystem::path& file);

// Parses the same from text (`source_name` is used in messages).
CocoFile parse_coco_json(const std::string& text, const std::string& source_name);

// "malformed json at line L, column C: what was wrong" from nlohmann's exception for a document of
// `document_bytes` (its "[json.exception.parse_error.101] parse error at" prefix dropped; an error
// at the end of the document says the file may be cut short).
std::string malformed_json_message(const std::exception& error, size_t document_bytes);

// The 80 COCO category ids (1..90 with gaps) in contiguous-class order: coco80_to_coco91()[c] is
// the id for class c. Matches the reference's `coco80_to_coco91_class`.
const std::array<int, 80>& coco80_to_coco91();

// Inverse map: class index 0..79 for a COCO id, or -1 for an id that is not one of the 80.
int coco91_to_coco80(int64_t category_id);

}  // namespace trainer::data
