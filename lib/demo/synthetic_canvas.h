// The random source and textured backgrounds shared by the synthetic datasets (shapes, pose).
//
// Why: both generators must be deterministic for a seed and draw objects on the same kind of
// busy background, so "flat colour = object" is never a shortcut a model can learn.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <random>

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

}  // namespace trainer::demo
