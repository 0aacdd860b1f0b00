// A small synthetic pose dataset the project generates itself: stick figures with a fixed
// 7-point skeleton on textured backgrounds.
//
// Why: a user must be able to try pose training on a fresh clone without downloading anything,
// and tests need pose data whose every keypoint is known exactly. Each figure has a head, neck,
// left and right hand, hip, left and right foot; "left" is the figure's left (the image's right
// for a figure facing the viewer), so a horizontal flip with flip_idx [0, 1, 3, 2, 4, 6, 5] maps
// a figure onto a valid figure. Points hidden under a later figure are labelled invisible (v = 1,
// "labelled but not visible", as COCO does); every other point has v = 2. Output layout:
//   OUT/images/{train,val}/000000.jpg, OUT/labels/{train,val}/000000.txt (class box + 7 x (x y v))
//   OUT/pose.yaml (path, train, val, kpt_shape [7, 3], flip_idx, names {0: figure})
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>

#include "demo/synthetic_dataset.h"

namespace trainer::demo {

inline constexpr int kPoseKeypoints = 7;

// Point names in label order, the flip permutation and the skeleton's bones (pairs of indices).
const std::array<const char*, kPoseKeypoints>& pose_keypoint_names();
const std::array<int, kPoseKeypoints>& pose_flip_idx();
const std::array<std::array<int, 2>, 6>& pose_skeleton();

// Writes the dataset into `out_dir` (SyntheticOptions: counts, image size, figures per image as
// max_objects, figure heights between min and max_object_size, seed). Identical options give
// byte-identical files. The summary's dataset_yaml is OUT/pose.yaml.
SyntheticSummary generate_synthetic_pose_dataset(const std::filesystem::path& out_dir,
                                                 const SyntheticOptions& options);

}  // namespace trainer::demo
