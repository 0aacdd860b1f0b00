// See stats.h.
#include "bench/stats.h"

#include <algorithm>
#include <stdexcept>

namespace trainer::bench {

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty list");
  const size_t n = values.size();
  const size_t mid = n / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (n % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

Summary summarize(const std::vector<double>& values) {
  if (values.empty()) throw std::invalid_argument("summary of an empty list");
  Summary s;
  s.median = median(values);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  s.count = values.size();
  return s;
}

std::vector<double> paired_reductions(const std::vector<double>& baseline,
                                      const std::vector<double>& candidate) {
  if (baseline.size() != candidate.size()) {
    throw std::invalid_argument("paired reductions: " + std::to_string(baseline.size()) +
                                " baseline values but " + std::to_string(candidate.size()) +
                                " candidate values");
  }
  std::vector<double> out;
  out.reserve(baseline.size());
  for (size_t i = 0; i < baseline.size(); ++i) {
    if (!(baseline[i] > 0.0)) {
      throw std::invalid_argument("paired reductions: baseline value " + std::to_string(i) +
                                  " is not positive");
    }
    out.push_back(1.0 - candidate[i] / baseline[i]);
  }
  return out;
}

Verdict judge(const Summary& reductions, const VerdictRule& rule) {
  if (reductions.max < 0.0) return Verdict::kSlower;
  // "The range does not cross zero": every pair must be a strict improvement.
  if (reductions.min <= 0.0) return Verdict::kCrossesZero;
  return reductions.median >= rule.threshold ? Verdict::kAdopt : Verdict::kBelowBar;
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kAdopt:
      return "adopt";
    case Verdict::kBelowBar:
      return "below_threshold";
    case Verdict::kCrossesZero:
      return "crosses_zero";
    case Verdict::kSlower:
      return "slower";
  }
  return "?";
}

}  // namespace trainer::bench
