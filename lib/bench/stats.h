// Statistics of the benchmark method (benchmark-method.md sections 2 and 3).
//
// Why: every speed claim reduces to the same few numbers: an arm's median/min/max, the paired
// reduction 1 - B/A of consecutive ABBA arms, the median and range of those reductions, and a
// verdict against a threshold where the range must not cross zero. Writing them once, tested on
// hand-made inputs, keeps every benchmark command on the same yardstick.
#pragma once

#include <string>
#include <vector>

namespace trainer::bench {

// Median of the values: the middle one for an odd count, the mean of the two middle ones for an
// even count. Throws std::invalid_argument for an empty input.
double median(std::vector<double> values);

struct Summary {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  size_t count = 0;
};

// Median, min and max. Throws std::invalid_argument for an empty input.
Summary summarize(const std::vector<double>& values);

// 1 - candidate/baseline for each pair (positive = the candidate is faster/smaller). Throws
// std::invalid_argument when the sizes differ or a baseline value is not positive.
std::vector<double> paired_reductions(const std::vector<double>& baseline,
                                      const std::vector<double>& candidate);

enum class Verdict {
  kAdopt,        // median reduction >= threshold and the range does not cross zero
  kBelowBar,     // the range is on one side of zero but the median misses the threshold
  kCrossesZero,  // min < 0 < max (or touches zero from one side): no claim
  kSlower,       // the whole range is a slowdown (max < 0)
};

struct VerdictRule {
  double threshold = 0.08;  // the seeds' 8% bar
};

// The verdict on a set of paired reductions (benchmark-method.md section 3).
Verdict judge(const Summary& reductions, const VerdictRule& rule = {});

// "adopt", "below_threshold", "crosses_zero", "slower".
const char* verdict_name(Verdict verdict);

}  // namespace trainer::bench
