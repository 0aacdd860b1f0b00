// A small synthetic detection dataset the project generates itself (the demo and tests use it).
//
// Why: the demo must run on a fresh clone with no download and no third-party images. Drawn shapes
// on textured backgrounds are easy enough for a tiny model to learn in minutes on a CPU, hard
// enough (overlaps, scale range, colour noise) that the mAP says something, and fully
// deterministic. Output layout (both label forms, so either dataset reader can be used):
//   OUT/images/{train,val}/000000.jpg ...      JPEG images
//   OUT/labels/{train,val}/000000.txt ...      YOLO txt labels
//   OUT/annotations/instances_{train,val}.json COCO json (image ids = numeric file stems)
//   OUT/synthetic.yaml                         dataset yaml (path, train, val, names)
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainer::demo {

struct SyntheticOptions {
  int train_images = 256;
  int val_images = 64;
  int image_size = 320;      // square images
  int max_objects = 6;       // per image (at least 1)
  int min_object_size = 24;  // pixels (longest side)
  int max_object_size = 128;
  uint64_t seed = 0;
};

// The class names, index = class id.
const std::vector<std::string>& synthetic_class_names();

struct SyntheticSummary {
  int images = 0;
  int objects = 0;
  std::filesystem::path dataset_yaml;
};

// Writes the dataset into `out_dir` (created; existing files with the same names are replaced).
// Identical options give byte-identical files.
SyntheticSummary generate_synthetic_dataset(const std::filesystem::path& out_dir,
                                            const SyntheticOptions& options);

}  // namespace trainer::demo
