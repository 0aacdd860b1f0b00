// A deterministic random stream per sample, keyed by (seed, epoch, index, purpose).
//
// Why: a worker thread may build any sample in any order, so randomness cannot come from a shared
// generator. Each sample mixes its key through splitmix64 into a private std::mt19937_64, and the
// uniform/normal/beta draws below are written out (not std::*_distribution, whose algorithms differ
// between standard libraries), so an augmented batch is identical for any worker count, on any
// machine, and after a resume.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace trainer::data::augment {

inline constexpr double kPi = 3.14159265358979323846;

// splitmix64 finaliser: a bijective 64-bit mix (Steele et al., 2014).
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Purposes keep independent streams apart (the epoch permutation, a sample, its mixup partner).
// kMultiScale: the training size of a batch (engine/multi_scale.h), keyed by (seed, 0, ni).
enum class StreamPurpose : uint64_t {
  kSample = 1,
  kPermutation = 2,
  kMixup = 3,
  kMultiScale = 4,
  kCopyPaste = 5
};

class SampleRng {
 public:
  SampleRng(uint64_t seed, int64_t epoch, int64_t index,
            StreamPurpose purpose = StreamPurpose::kSample)
      : engine_(key(seed, epoch, index, purpose)) {}

  static uint64_t key(uint64_t seed, int64_t epoch, int64_t index, StreamPurpose purpose) {
    uint64_t h = mix64(seed);
    h = mix64(h ^ static_cast<uint64_t>(epoch));
    h = mix64(h ^ static_cast<uint64_t>(index));
    return mix64(h ^ static_cast<uint64_t>(purpose));
  }

  uint64_t next_u64() { return engine_(); }
  // U[0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // U[lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Integer in [0, n) (n > 0), by Lemire-free rejection to stay unbiased and portable.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r = engine_();
    while (r >= limit) r = engine_();
    return r % n;
  }
  // Standard normal (Box-Muller, one value per call).
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }
  // Gamma(shape >= 1, 1) by Marsaglia and Tsang (2000).
  double gamma(double shape) {
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = normal();
      double v = 1.0 + c * x;
      if (v <= 0.0) continue;
      v = v * v * v;
      const double u = uniform();
      if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
      if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
    }
  }
  // Beta(a, b) for a, b >= 1 (mixup uses Beta(32, 32)).
  double beta(double a, double b) {
    const double x = gamma(a);
    const double y = gamma(b);
    return x / (x + y);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace trainer::data::augment
