// The random source and textured backgrounds shared by the synthetic datasets (shapes, pose).
//
// Why: both generators must be deterministic for a seed and draw objects on the same kind of
// busy background, so "flat colour = object" is never a shortcut a model can learn.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>

#include "demo/synthetic_dataset.h"

namespace trainer::demo {

// mt19937_64 draws: one seed gives one dataset (with the same standard library).
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(engine_);
  }
  int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine_); }
  cv::Scalar colour() { return cv::Scalar(integer(0, 255), integer(0, 255), integer(0, 255)); }

 private:
  std::mt19937_64 engine_;
};

// A size x size BGR background with low-frequency colour gradients, stripes and pixel noise.
cv::Mat textured_background(int size, Rng& rng);

// Draws one image's objects on its background and returns its YOLO label text, adding to
// `objects` for each object labelled.
using DrawObjects = std::function<std::string(cv::Mat& image, Rng& rng, int* objects)>;

// The train and val splits of a YOLO-layout dataset: OUT/images/<split>/NNNNNN.jpg (quality 92)
// and OUT/labels/<split>/NNNNNN.txt, each image a textured background drawn on by `draw`; ids run
// on from train into val; each split has its own stream, seed * 2 + stream_base (+ 1 for val).
SyntheticSummary write_yolo_splits(const std::filesystem::path& out,
                                   const SyntheticOptions& options, uint64_t stream_base,
                                   const DrawObjects& draw);

}  // namespace trainer::demo
