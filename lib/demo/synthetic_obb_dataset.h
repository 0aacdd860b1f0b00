// A small synthetic oriented-box dataset the project generates itself: rotated shapes on textured
// backgrounds with DOTA-style labels.
//
// Why: no OBB data ships with the project and nothing can be downloaded, yet a user must be able to
// try OBB training on a fresh clone and tests need rotated boxes whose every corner is known. Each
// object is a long shape (aspect 1.6 to 4, so its orientation is well defined) at a random angle,
// filled with a colour and stripes along its long side: class 0 "bar" (a rectangle), 1 "capsule"
// (an ellipse), 2 "arrow" (a rectangle with a pointed end). Its label is its rotated box (the
// ellipse's and the arrow's enclosing rectangle). Objects lie wholly inside the image and overlap
// earlier ones by at most 5% (exact rotated IoU). Output layout:
//   OUT/images/{train,val}/000000.jpg, OUT/labels/{train,val}/000000.txt
//   (`class x1 y1 x2 y2 x3 y3 x4 y4`, corners normalised, the reference's DOTA YOLO form)
//   OUT/obb.yaml (path, train, val, names)
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "demo/synthetic_dataset.h"

namespace trainer::demo {

const std::vector<std::string>& obb_class_names();

// Writes the dataset into `out_dir` (SyntheticOptions: counts, image size, objects per image as
// max_objects, long sides between min and max_object_size, seed). Identical options give
// byte-identical files. The summary's dataset_yaml is OUT/obb.yaml.
SyntheticSummary generate_synthetic_obb_dataset(const std::filesystem::path& out_dir,
                                                const SyntheticOptions& options);

}  // namespace trainer::demo
