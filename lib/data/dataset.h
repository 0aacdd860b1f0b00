// Building one split (train, val or test) of a dataset: image list, labels, checks, label cache.
//
// Why: this is where every bad-input rule of the data issue lives, and the one call the trainer,
// the evaluator and `trainer data check` share. Per image (the reference's verify_image_label):
// an image that does not decode in full (data/image_verify.h; the verdict is cached with the
// labels), or a label file that cannot be used, skips the image; a missing
// or empty label file makes it a background; duplicate label rows are removed. Each problem is
// counted and logged once with its file (and line), and a summary
// ("N images, M backgrounds, K corrupt") is logged. A split with no usable image is an error.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "data/dataset_yaml.h"
#include "data/image_labels.h"

namespace trainer::data {

enum class Split { kTrain, kVal, kTest };

const char* split_name(Split split);

struct LoadOptions {
  bool use_cache = true;                           // read and write the label cache
  std::optional<std::filesystem::path> cache_dir;  // overrides the cache location (tests)
  bool log = true;                                 // log problems and the summary
  size_t max_logged_problems = 50;                 // the rest are counted, not printed
  // Keep every label's polygon (ImageLabels::segments): the OBB task (and segmentation). Label
  // files must then hold polygon rows; COCO json is not read for polygons yet.
  PolygonKind polygons = PolygonKind::kNone;
};

// Throws core::InputError (missing folder, malformed json, no usable image) naming the file.
DatasetIndex load_split(const DatasetSpec& spec, Split split, const LoadOptions& options = {});

}  // namespace trainer::data
