// The ground truth a validation scores against: the ids written into COCO results, the COCO
// ground truth (the val json's, or built from the labels), and a batch's labels in letterboxed
// pixels, where the reference's metric matches.
//
// Why its own unit: which category and image ids a prediction gets, and which areas and crowd
// regions the COCO protocol sees, decide every COCO number; they are rules with numbers in them
// (the 91-id map, class + 1, the next free id, shoelace areas) and are tested here, apart from the
// validator's batching.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "core/config.h"
#include "data/coco_json.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "geometry/rotated_box.h"

namespace trainer::engine {

struct ValidationTruth {
  // The category id of each class: a json dataset keeps its own ids (a class it lacks gets the
  // next unused id, without ground truth); 80 classes use the COCO 91-id map; otherwise class + 1.
  std::vector<int64_t> category_ids;
  // The image id of each dataset index: the json's, or numeric file stems when they are unique,
  // else the dataset index.
  std::vector<int64_t> image_ids;
  // What the COCO protocol scores: the val json restricted to the split's images (its areas and
  // crowd regions), or, without one (or under `classes` / `single_cls`), built from the labels:
  // box areas, outline areas by the shoelace formula, keypoints in original pixels.
  data::CocoFile coco;
};

ValidationTruth build_validation_truth(const data::DatasetIndex& val_set,
                                       const data::DatasetSpec& spec,
                                       const core::TrainConfig& config);

// `truth` with only the images of `image_ids` and their annotations (a validation that ran part
// of the split scores that part).
data::CocoFile coco_truth_of_images(const data::CocoFile& truth,
                                    const std::set<int64_t>& image_ids);

// One image's ground truth in letterboxed input pixels, where the reference metric matches.
struct LetterboxedTruth {
  std::vector<std::array<float, 4>> boxes;  // xyxy
  std::vector<int> classes;
  std::vector<float> keypoints;              // pose: K x (x, y, v) per box, pixels; empty otherwise
  std::vector<geometry::RotatedBox> rboxes;  // OBB: [cx, cy, w, h] pixels and the angle
};

// Splits a batch's labels (n, 6) [image, class, cx, cy, w, h] (normalised to the letterboxed
// input of width x height) into per-image xyxy pixel boxes, as 8.4.190's _prepare_batch does.
// `keypoints` (n, K, 3) normalised (pose; undefined or K = 0 otherwise) are scaled the same way,
// and OBB `rboxes` (n, 5) (cx, w by the width, cy, h by the height, the angle as it is).
std::vector<LetterboxedTruth> letterboxed_truth(const at::Tensor& labels, int64_t batch_size,
                                                float width, float height,
                                                const at::Tensor& keypoints = {},
                                                const at::Tensor& rboxes = {});

}  // namespace trainer::engine
