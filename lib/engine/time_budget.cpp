// See time_budget.h.
// Tested by tests/engine/test_multi_scale.cpp: TimeBudget epochs_for re-estimate from mean epoch
//   time, never below one, exhausted.
#include "engine/time_budget.h"

#include <algorithm>
#include <cmath>

namespace trainer::engine {

int64_t TimeBudget::epochs_for(double elapsed, int64_t epochs_done) const {
  const double mean_epoch = elapsed / static_cast<double>(std::max<int64_t>(epochs_done, 1));
  if (!(mean_epoch > 0.0)) return 1;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(seconds_ / mean_epoch)));
}

}  // namespace trainer::engine
