// COCO json annotations -> per-image labels (the reference's convert_coco, without the txt files).
//
// Why: COCO ships json, and converting to txt files first doubles the data on disk and adds a
// step users forget. Rules (convert_coco with cls91to80): crowd annotations are kept aside for
// evaluation; bbox [x, y, w, h] (top-left, pixels) becomes (x + w/2, y + h/2, w, h) / (W, H),
// clipped to the image; w <= 0 or h <= 0 is skipped; duplicate boxes are dropped. Classes: when
// the dataset has 80 names and every category id is one of the 80 COCO ids, the 91 -> 80 map;
// otherwise the categories sorted by id become 0..nc-1 (their count must equal nc).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "data/coco_json.h"
#include "data/image_labels.h"

namespace trainer::data {

struct CocoClassMap {
  bool coco91 = false;                      // the 91 -> 80 map is in use
  std::vector<int64_t> ids;                 // otherwise: class c <- category ids[c]
  int to_class(int64_t category_id) const;  // -1 when unknown
};

// Where a json image's file is: images_dir / file_name, normalised.
std::filesystem::path coco_image_path(const std::filesystem::path& images_dir,
                                      const CocoImage& image);

// Chooses the category -> class map for `nc` classes. Throws core::InputError naming the file
// when the categories do not fit.
CocoClassMap coco_class_map(const CocoFile& coco, int nc);

// The categories' names against the dataset yaml's, class by class under `map` (ASCII case and
// surrounding spaces ignored; a category without a name, or a yaml name that is its class index,
// "0", "1", ..., is not compared). Throws core::InputError
// listing the classes that differ side by side: a yaml whose names are in another order would
// otherwise train every box under the wrong name.
void check_category_names(const CocoFile& coco, const CocoClassMap& map,
                          const std::vector<std::string>& names);

// "category id -> class" for every category, as `-v` prints it: "1 -> 0 (person), 2 -> 1 ...".
std::string describe_class_map(const CocoFile& coco, const CocoClassMap& map,
                               const std::vector<std::string>& names);

// One ImageLabels per json image (sorted by file name), image = images_dir / file_name, width and
// height from the json. Counts duplicates, crowd and skipped boxes into `stats`, with messages.
// With `keypoints_per_box` K > 0 (a person_keypoints file read for pose), each box carries the
// annotation's K points normalised like the box with their visibility; an annotation without
// keypoints gets K invisible points, one with another count is skipped with a message.
// With `outlines` (segmentation), each box carries its outline in `segments` and the box becomes
// the outline's extent: the annotation's polygons of 3 or more points, joined into one when there
// are several (outline_merge.h); without one (no segmentation, an RLE mask), the box's corners
// (counted in one message). Coordinates go through the reference's label-file text ("%g").
std::vector<ImageLabels> coco_to_labels(const CocoFile& coco,
                                        const std::filesystem::path& images_dir, int nc,
                                        DatasetStats& stats, int keypoints_per_box = 0,
                                        bool outlines = false);

}  // namespace trainer::data
